"""QA: interrupted change sets, as a user meets them (a kill in a commit hook, a stale index.lock)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memgit
from memgit import gitrepo
from memgit.errors import MemgitError

from .conftest import git


def _journal(repo: Path) -> Path:
    return repo / ".git" / "memgit" / "changeset.json"


def _lines(count: int) -> str:
    return "".join(json.dumps({"id": f"imp-{i}", "title": f"Fact {i} about mod_{i}", "body": f"body {i}"}) + "\n"
                   for i in range(count))


def test_a_kill_inside_the_commit_hook_is_reported_by_lint(repo: Path, tmp_path: Path) -> None:
    """The files are staged (tracked) when the kill hits: lint must still say the change is
    unfinished, and the next write must commit it."""
    mem = memgit.open(repo, warn=lambda m: None)
    mem.init()
    target = mem.remember("deploys go through the release train", kind="convention").memory
    marker = tmp_path / "in-hook"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\nsleep 120\n")
    hook.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "memgit", "-C", str(repo), "forget", target.id],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)  # memgit, git and the hook: as a harness's timeout does
    proc.wait()
    hook.unlink()
    (repo / ".git" / "index.lock").unlink(missing_ok=True)  # git's own leftover

    assert _journal(repo).exists()
    problems = mem.lint()
    assert any(p.path == target.path and "interrupted" in p.message for p in problems), problems

    mem.remember("another memory, after the kill")
    assert not _journal(repo).exists()
    assert git(repo, "status", "--porcelain", "--", ".memory") == ""
    assert 'forget "deploys go through the release train"' in git(repo, "log", "--format=%s")


def test_a_stale_index_lock_does_not_lose_the_change(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`git add` fails (a killed git left index.lock): the files are written but git holds
    nothing; the journal must stay so that the next write, once the lock is gone, commits them."""
    monkeypatch.setattr(gitrepo, "LOCK_RETRY_SECONDS", 0.0)
    mem = memgit.open(repo, warn=lambda m: None)
    mem.init()
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    with pytest.raises(MemgitError, match="index.lock"):
        mem.import_jsonl(_lines(20).splitlines())
    assert _journal(repo).exists()
    # A write while the lock is still there fails too, and still keeps the journal.
    with pytest.raises(MemgitError, match="index.lock"):
        mem.remember("a note while the lock is stale")
    assert _journal(repo).exists()
    assert any("interrupted" in p.message for p in mem.lint())

    lock.unlink()
    mem.remember("a note once the lock is gone")
    assert not _journal(repo).exists()
    assert git(repo, "status", "--porcelain", "--", ".memory") == ""
    assert "memory: import 20 memories" in git(repo, "log", "--format=%s")
    assert len(mem.list()) == 21
