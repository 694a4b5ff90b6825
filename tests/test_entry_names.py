"""The module names written into users' settings and git's config keep working: an agent's
settings entry (`'<python>' -I -m memgit.hookrun claude session-start`), a git hook's
`python -m memgit.githooks sync|pre-commit`, a clone's merge driver `python -m
memgit.mergedriver %O %A %B %L %P`, run as the agent or git runs them: a shell command line."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import memgit

from .conftest import git

PYTHON = shlex.quote(sys.executable)
DATA = Path(__file__).parent / "data" / "agents"
GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"


def sh(command: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", command], cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=120, check=False)


def test_an_agent_settings_entry_runs_the_session_start_hook(repo: Path, mem: memgit.Memgit) -> None:
    mem.close()
    start = (DATA / "claude" / "session_start_startup.json").read_text()
    start = start.replace("{cwd}", str(repo)).replace("{transcript}", "")
    done = sh(f"{PYTHON} -I -m memgit.hookrun claude session-start", repo, start)
    assert done.returncode == 0 and done.stderr == ""
    if done.stdout:
        assert json.loads(done.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert not (repo / ".git" / "memgit" / "hooks.log").exists()  # no failure was logged


def test_the_git_hooks_sync_entry_rebuilds_the_index(repo: Path, mem: memgit.Memgit) -> None:
    added = mem.remember("the ingest queue is drained nightly").memory
    mem.close()
    index = repo / ".git" / "memgit" / "index.db"
    index.unlink()
    done = sh(f"{PYTHON} -m memgit.githooks sync", repo)
    assert done.returncode == 0 and done.stderr == ""
    assert index.is_file()
    with memgit.open(repo) as again:
        assert [hit.id for hit in again.recall("ingest queue drained")] == [added.id]


def test_the_pre_commit_entry_refuses_a_staged_secret(repo: Path, mem: memgit.Memgit) -> None:
    mem.close()
    (repo / ".memory" / "token.md").write_text(f"---\ntitle: the token\n---\nuse {GITHUB}\n")
    git(repo, "add", ".memory/token.md")
    done = sh(f"{PYTHON} -m memgit.githooks pre-commit", repo)
    assert done.returncode == 1 and "token.md" in done.stderr


def test_the_merge_driver_entry_merges_a_memory_file(repo: Path, mem: memgit.Memgit, tmp_path: Path) -> None:
    memory = mem.remember("deploys go through the release branch", tags=["ops"]).memory
    base = (mem.memory_dir / memory.path).read_text()
    mem.close()
    ours = base.replace("- ops\n", "- ops\n- release\n")
    theirs = base + "Only on Fridays.\n"
    files = {name: tmp_path / name for name in ("O", "A", "B")}
    for name, text in zip(files, (base, ours, theirs)):
        files[name].write_text(text)
    done = sh(f"{PYTHON} -m memgit.mergedriver {files['O']} {files['A']} {files['B']} 7 .memory/deploys.md", repo)
    assert done.returncode == 0, done.stderr
    merged = files["A"].read_text()
    assert "- release\n" in merged and "Only on Fridays." in merged
