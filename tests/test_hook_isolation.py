"""Everything memgit starts inside a repository runs as the user's own memgit, whatever the
repository holds: git hooks, the merge driver, the agent hooks and the MCP server, each run the
way git or the agent runs it (the installed hook, `git merge`, the settings' command through
`sh -c`, the MCP SDK's stdio client), in a repository that ships a `memgit/` package, a
`sitecustomize.py` and an embedder module its own config names."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.git import hooks as githooks

from .conftest import git
from .test_mergedriver import base_memory, diverge, read

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

DATA = Path(__file__).parent / "data" / "agents"
GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
EVENTS = {
    "claude": {"SessionStart": "session_start_startup.json", "UserPromptSubmit": "user_prompt.json",
               "PreCompact": "pre_compact_auto.json", "SessionEnd": "session_end.json"},
    "codex": {"SessionStart": "session_start_startup.json", "UserPromptSubmit": "user_prompt.json",
              "PreCompact": "pre_compact_auto.json", "Stop": "stop.json"},
}


def evil(marks: Path, name: str) -> str:
    return f"import pathlib\npathlib.Path({str(marks / name)!r}).write_text('ran')\n"


@pytest.fixture
def hostile(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`repo` with memories, memgit's hooks installed, and code that must never run."""
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    mem.import_jsonl((DATA / "memories.jsonl").read_text().splitlines())
    marks = tmp_path / "marks"
    marks.mkdir()
    (repo / "memgit").mkdir()
    (repo / "memgit" / "__init__.py").write_text(evil(marks, "memgit-package"))
    (repo / "evilemb.py").write_text(evil(marks, "evilemb") + "Embedder = None\n")
    (repo / "sitecustomize.py").write_text(evil(marks, "sitecustomize"))
    config = repo / ".memory" / "config.toml"
    config.write_text(re.sub(r"(?m)^# embedder = .*$", 'embedder = "evilemb:Embedder"', config.read_text()))
    # …and a session-end command of its own, which memgit must never run.
    command = f"[capture]\ncommand = {('touch ' + str(marks / 'capture-command'))!r}\n"
    config.write_text(config.read_text().replace("[capture]\n", command))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a repository with its own ideas")
    monkeypatch.delenv("MEMGIT_INDEX_EMBEDDER")  # the repository's config decides
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for args in (["git"], ["claude", "--prompts", "--mcp"], ["codex", "--prompts", "--mcp"]):
        result = CliRunner().invoke(cli, ["-C", str(repo), "hooks", "install", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return marks


def wait_for_detached(repo: Path, needle: bytes) -> None:
    """Hooks return at once and leave work running detached (the post-* hooks' sync, the
    session end's capture). Wait until no such process runs here."""
    deadline = time.monotonic() + 120
    while True:
        running = []
        for proc in Path("/proc").iterdir():
            try:
                if needle in (proc / "cmdline").read_bytes() and (proc / "cwd").resolve() == repo:
                    running.append(proc.name)
            except OSError:
                continue
        if not running:
            return
        assert time.monotonic() < deadline, f"detached processes still running: {running}"
        time.sleep(0.1)


def test_git_hooks_and_the_merge_driver_run_the_real_memgit(repo: Path, hostile: Path) -> None:
    start = base_memory()
    ours = replace(start, tags=("config", "api", "ours-tag"), updated="2026-11-02T10:00:00+00:00")
    theirs = replace(start, tags=("config", "theirs-tag"), title="parse_config returns (path, Config)",
                     updated="2026-11-03T10:00:00+00:00")
    diverge(repo, ours, theirs, start)  # commits and checkouts: pre-commit, post-checkout
    merged = subprocess.run(["git", "merge", "--no-edit", "feature"], cwd=repo, capture_output=True,
                            text=True)
    assert merged.returncode == 0, merged.stdout + merged.stderr  # only memgit's driver merges the tags
    assert sorted(read(repo, start.id).tags) == ["config", "ours-tag", "theirs-tag"]
    (repo / ".memory" / "token.md").write_text(f"# CI token\n\nUse {GITHUB} for the API.\n")
    git(repo, "add", ".memory")
    refused = subprocess.run(["git", "commit", "-m", "token"], cwd=repo, capture_output=True, text=True)
    assert refused.returncode == 1 and "this looks like a secret" in refused.stderr  # memgit's pre-commit
    wait_for_detached(repo, b"memgit.githooks")
    assert sorted(p.name for p in hostile.iterdir()) == []


def test_agent_hooks_as_written_in_the_settings_run_the_real_memgit(repo: Path, hostile: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMGIT_CAPTURE_COMMAND")  # the session end starts memgit's own capture
    transcript = DATA / "claude" / "transcript.jsonl"
    for agent, settings in (("claude", ".claude/settings.json"), ("codex", ".codex/hooks.json")):
        hooks = json.loads((repo / settings).read_text())["hooks"]
        assert set(hooks) == set(EVENTS[agent])
        for event, name in EVENTS[agent].items():
            (command,) = [h["command"] for group in hooks[event] for h in group["hooks"]]
            payload = (DATA / agent / name).read_text().replace("{cwd}", str(repo))
            payload = payload.replace("{transcript}", str(transcript))
            done = subprocess.run(["sh", "-c", command], cwd=repo, input=payload.encode(),
                                  capture_output=True, timeout=120)
            assert done.returncode == 0, done.stderr
            if event == "SessionStart":
                context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
                assert "Run the tests with pytest -q from the repository root" in context  # the pinned one
    wait_for_detached(repo, b"--from-hook")
    assert "proposed" in (repo / ".git" / "memgit" / "capture.log").read_text()  # memgit's capture ran
    # What the hooks logged: only that the repository's settings that name code were ignored.
    for line in (repo / ".git" / "memgit" / "hooks.log").read_text().splitlines():
        assert re.search(r"\.memory/config\.toml: \[(index\] embedder|capture\] command) = .*, so memgit "
                         r"ignores it in the committed config", line), line
    assert sorted(p.name for p in hostile.iterdir()) == []


def test_the_registered_mcp_server_runs_the_real_memgit(repo: Path, hostile: Path) -> None:
    server = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["memgit"]
    params = StdioServerParameters(command=server["command"], args=server["args"], cwd=str(repo),
                                   env=dict(os.environ))

    async def main() -> Any:
        async with Client(params) as client:
            return (await client.call_tool("recall", {"query": "how do I run the tests?"})).structured_content

    hits = anyio.run(main)["hits"]
    assert "m-pin001" in [hit["id"] for hit in hits]
    assert sorted(p.name for p in hostile.iterdir()) == []


def test_memgit_hook_ignores_python_variables(repo: Path, hostile: Path) -> None:
    """A relative PYTHONPATH entry is a folder of whatever repository the agent runs in."""
    (repo / "plugins").mkdir()
    (repo / "plugins" / "evilemb.py").write_text((repo / "evilemb.py").read_text())
    (repo / "evilemb.py").unlink()
    payload = (DATA / "claude" / "session_start_startup.json").read_text().replace("{cwd}", str(repo))
    payload = payload.replace("{transcript}", "")
    hooks = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
    command = hooks["SessionStart"][0]["hooks"][0]["command"]
    done = subprocess.run(["sh", "-c", command], cwd=repo, input=payload.encode(), capture_output=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": "plugins"})
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Run the tests with pytest -q" in context
    assert sorted(p.name for p in hostile.iterdir()) == []


def test_a_driver_registered_without_isolation_is_registered_again(repo: Path) -> None:
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    git(repo, "config", "merge.memgit.driver", f"{sys.executable} -m memgit.mergedriver %O %A %B %L %P")
    mem.remember("deploys go through CI")  # any write checks the driver
    assert git(repo, "config", "merge.memgit.driver").startswith(f"{sys.executable} -I -m memgit.mergedriver ")


def older_hook(name: str) -> str:
    """A git hook as memgit wrote it before its processes ran isolated: `python -m` from the
    work tree, which puts the work tree first on the import path."""
    python = sys.executable
    run = (f"exec {python} -m memgit.githooks pre-commit" if name == "pre-commit" else
           f"[ -x {python} ] && ( {python} -m memgit.githooks sync </dev/null >/dev/null 2>&1 & )")
    return (f"#!/bin/sh\n# memgit-git-hook v1 ({name}): installed by memgit; remove with memgit's uninstall\n"
            f'status=0\nchained="${{0%/*}}/{name}.memgit-chained"\n'
            'if [ -x "$chained" ]; then "$chained" "$@" || status=$?; fi\n' + run + '\nexit "$status"\n')


@pytest.mark.parametrize("upgrade", ["write", "checkout"])
def test_git_hooks_an_older_memgit_wrote_are_rewritten_isolated(repo: Path, tmp_path: Path,
                                                                  upgrade: str) -> None:
    """A clone whose hooks an older memgit installed: the next memgit write, or the hooks' own
    sync after a checkout in an honest branch, rewrites them; a branch that then brings a
    `memgit/` package does not get it run."""
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("post-checkout", "post-merge", "post-rewrite", "pre-commit"):
        (hooks / name).write_text(older_hook(name))
        (hooks / name).chmod(0o755)
    if upgrade == "write":
        mem.remember("deploys go through CI")
    else:
        git(repo, "checkout", "-q", "-b", "honest")
        wait_for_detached(repo, b"memgit.githooks")
    for name in ("post-checkout", "post-merge", "post-rewrite", "pre-commit"):
        assert (hooks / name).read_text() == githooks.script(name), name

    marks = tmp_path / "marks"
    marks.mkdir()
    git(repo, "checkout", "-q", "-b", "hostile")
    (repo / "memgit").mkdir()
    (repo / "memgit" / "__init__.py").write_text(evil(marks, "memgit-package"))
    git(repo, "add", "memgit")
    git(repo, "commit", "-q", "-m", "a package of its own")
    git(repo, "checkout", "-q", "-")
    git(repo, "checkout", "-q", "hostile")
    wait_for_detached(repo, b"memgit.githooks")
    assert sorted(p.name for p in marks.iterdir()) == []
