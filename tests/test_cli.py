"""The command line, through click's CliRunner: data on stdout, messages on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgit.cli import cli

from .conftest import EXAMPLE, git


def run(*args: str, input: str | None = None, cwd: Path | None = None):  # type: ignore[no-untyped-def]
    argv = ["-C", str(cwd), *args] if cwd is not None else list(args)
    return CliRunner().invoke(cli, argv, input=input, catch_exceptions=False)


def test_full_session(repo: Path) -> None:
    result = run("init", cwd=repo)
    assert result.exit_code == 0 and result.stdout == ""
    assert "Initialised" in result.stderr
    result = run(
        "remember", "parse_config returns a tuple (path, Config)", "--kind", "decision",
        "--entity", "src/config.py::parse_config", "--source", "user", cwd=repo,
    )
    assert result.exit_code == 0, result.stderr
    memory_id = result.stdout.strip()
    assert memory_id.startswith("m-")

    listed = run("list", cwd=repo)
    assert listed.stdout == f"{memory_id:<10} decision   parse_config returns a tuple (path, Config)\n"
    shown = json.loads(run("show", memory_id, "--json", cwd=repo).stdout)
    assert shown["entity"] == "src/config.py::parse_config"
    assert shown["path"].startswith(".memory/parse-config-returns-a-tuple")
    text = run("show", memory_id[:4], cwd=repo).stdout
    assert text.startswith(f"# {shown['path']}\n---\nid: {memory_id}\n")

    again = run("remember", "parse_config returns a tuple (path, Config)", "--json", cwd=repo)
    assert json.loads(again.stdout)["duplicate_of"] == memory_id
    assert "already remembered" in again.stderr

    assert run("edit", memory_id, "--confidence", "0.6", cwd=repo).exit_code == 0
    history = run("history", memory_id, cwd=repo).stdout.splitlines()
    assert history[0].endswith('memory: edit "parse_config returns a tuple (path, Config)"')
    assert history[1] == "    confidence: 0.9 -> 0.6"
    first = json.loads(run("history", memory_id, "--json", cwd=repo).stdout)[-1]["commit"]
    assert run("rollback", memory_id, "--to", first, cwd=repo).exit_code == 0
    assert json.loads(run("show", memory_id, "--json", cwd=repo).stdout)["confidence"] == 0.9

    forgotten = run("forget", memory_id, cwd=repo)
    assert forgotten.exit_code == 0 and "archived" in forgotten.stderr
    assert run("list", cwd=repo).stdout == ""
    assert memory_id in run("list", "--status", "archived", cwd=repo).stdout


def test_remember_from_stdin_and_file(repo: Path, tmp_path: Path) -> None:
    run("init", cwd=repo)
    assert run("remember", "--kind", "lesson", input="Title from stdin\n\nbody\n", cwd=repo).exit_code == 0
    note = tmp_path / "note.md"
    note.write_text("Title from file\nmore\n")
    assert run("remember", "--file", str(note), cwd=repo).exit_code == 0
    titles = sorted(m["title"] for m in json.loads(run("list", "--json", cwd=repo).stdout))
    assert titles == ["Title from file", "Title from stdin"]


def test_remember_with_editor_uses_the_template(repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    run("init", cwd=repo)
    editor = tmp_path / "editor.sh"
    seen = tmp_path / "seen.md"
    editor.write_text(f"#!/bin/sh\ncp \"$1\" {seen}\nprintf 'Edited title\\n\\nEdited body\\n' > \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    result = run("remember", "--edit", "--kind", "lesson", cwd=repo)
    assert result.exit_code == 0, result.stderr
    assert "Kind: lesson" in seen.read_text()
    assert json.loads(run("list", "--json", cwd=repo).stdout)[0]["title"] == "Edited title"


def test_editor_placeholders_are_dropped_and_a_failed_draft_is_kept(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run("init", cwd=repo)
    editor = tmp_path / "append.sh"
    editor.write_text("#!/bin/sh\nprintf 'Real title\\n' >> \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    assert run("remember", "--edit", "--kind", "lesson", cwd=repo).exit_code == 0
    assert json.loads(run("list", "--json", cwd=repo).stdout)[0]["title"] == "Real title"
    editor.write_text("#!/bin/sh\nprintf 'key AKIAZ7Q2LMNOPQRSTUV4\\n' > \"$1\"\n")
    result = run("remember", "--edit", cwd=repo)
    assert result.exit_code == 1 and "what you wrote is kept in" in result.stderr
    kept = Path(result.stderr.split("kept in ")[1].split(")")[0])
    assert "AKIAZ7Q2LMNOPQRSTUV4" in kept.read_text()
    kept.unlink()


def test_errors_go_to_stderr_with_exit_1(repo: Path, tmp_path: Path) -> None:
    result = run("list", cwd=tmp_path)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith("Error: ") and "run 'git init' first" in result.stderr
    result = run("list", cwd=repo)
    assert result.exit_code == 1 and "run 'memgit init'" in result.stderr
    run("init", cwd=repo)
    result = run("remember", "aws AKIAZ7Q2LMNOPQRSTUV4", cwd=repo)
    assert result.exit_code == 1 and "AWS" in result.stderr and "--allow-secret" in result.stderr
    assert run("show", "nope", cwd=repo).stderr == "Error: no memory 'nope'; see 'memgit list'\n"


def test_lint_lists_every_problem(repo: Path) -> None:
    run("init", cwd=repo)
    (repo / ".memory" / "a.md").write_text("---\ntitle: t\nconfidence: 2\nkind: rumour\n---\n")
    (repo / ".memory" / "b.md").write_text("---\ntitle: [\n---\n")
    result = run("lint", cwd=repo)
    assert result.stdout.startswith("a.md: git does not track this file, so teammates do not get it")
    subprocess.run(["git", "add", ".memory"], cwd=repo, check=True)
    result = run("lint", cwd=repo)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "a.md:3: 'confidence' is 2; it must be from 0 to 1 (read as 0.9, the default for its source)",
        "a.md:4: unknown kind 'rumour'; use one of fact, preference, convention, decision, lesson, skill, "
        "checkpoint, summary (read as fact)",
        "b.md:3: invalid YAML front-matter: did not find expected node content",
    ]
    # Both are still memories: read liberally, recalled and listed while lint says what to fix.
    assert sorted(json.loads(run("list", "--json", cwd=repo).stdout), key=lambda m: m["id"])[0]["kind"] == "fact"
    assert {m["id"] for m in json.loads(run("list", "--json", cwd=repo).stdout)} == {"a", "b"}
    assert result.stderr == "3 problem(s)\n"


def test_import_reports_and_exits_1_when_lines_skipped(repo: Path, tmp_path: Path) -> None:
    run("init", cwd=repo)
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "x-1", "title": "ok"}) + "\n{broken\n")
    result = run("import", str(source), cwd=repo)
    assert result.exit_code == 1
    assert "skipped line 2: not valid JSON" in result.stderr
    assert "imported 1, skipped 1" in result.stderr
    exported = run("export", cwd=repo).stdout.splitlines()
    assert [json.loads(line)["id"] for line in exported] == ["x-1"]


def test_read_commands_on_the_example_folder() -> None:
    listed = json.loads(run("--memory-dir", str(EXAMPLE), "list", "--json").stdout)
    assert len(listed) >= 20
    result = run("--memory-dir", str(EXAMPLE), "lint")
    assert result.exit_code == 0, result.stdout
    shown = run("--memory-dir", str(EXAMPLE), "show", "m-7f3a2c")
    assert "parse_config" in shown.stdout


def test_python_dash_m_and_help_imports_little(tmp_path: Path) -> None:
    code = (
        "import sys, runpy\n"
        "sys.argv = ['memgit', '--help']\n"
        "try:\n    runpy.run_module('memgit', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "heavy = {'numpy', 'onnxruntime', 'tokenizers', 'git', 'sqlite_utils', 'sqlite3', 'pysqlite3', 'yaml',"
        " 'frontmatter', 'memgit.api', 'memgit.index.index'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "Usage: memgit" in out
    assert out.strip().splitlines()[-1] == "[]"


def test_version() -> None:
    """The distribution's name (memgit-agent), not the command's: `memgit` on the index is another project."""
    assert run("--version").stdout.startswith("memgit-agent ")


def test_outside_a_repo_with_memory_dir_write_fails_clearly(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    result = run("--memory-dir", str(folder), "remember", "x", cwd=tmp_path)
    assert result.exit_code == 1 and "git init" in result.stderr


def test_every_command_in_a_subdirectory(repo: Path) -> None:
    (repo / "src").mkdir()
    run("init", cwd=repo)
    assert run("remember", "from a subdirectory", cwd=repo / "src").exit_code == 0
    assert "from a subdirectory" in run("list", cwd=repo).stdout
    git(repo, "status")


def test_cold_recall_imports_neither_yaml_nor_gitpython(tmp_path: Path) -> None:
    env_code = (
        "import sys, runpy\n"
        f"sys.argv = ['memgit', '--memory-dir', {str(EXAMPLE)!r}, 'recall', 'parse_config tuple']\n"
        "try:\n    runpy.run_module('memgit', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(sorted({'yaml', 'frontmatter', 'git', 'sqlite_utils', 'numpy', 'onnxruntime'} & set(sys.modules)))\n"
    )
    # The first call builds the index (it parses files); the second is an agent's next turn.
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", env_code], capture_output=True, text=True, check=True).stdout
    assert "parse_config returns a tuple" in out
    assert out.strip().splitlines()[-1] == "[]"
