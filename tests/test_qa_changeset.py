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
from memgit.errors import MemgitError
from memgit.git import runner as gitrunner

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
    monkeypatch.setattr(gitrunner, "LOCK_RETRY_SECONDS", 0.0)
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


def test_an_import_rerun_after_a_rejected_commit_commits_it(repo: Path) -> None:
    """The error says 'fix the cause and run the command again': the re-run must commit the
    files the first run wrote and staged, as `remember` does, not just say 'already present'."""
    mem = memgit.open(repo, warn=lambda m: None)
    mem.init()
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\necho rejected by policy\nexit 1\n")
    hook.chmod(0o755)
    lines = _lines(5).splitlines() + [json.dumps({"title": "no id here", "body": "from another tool"})]
    with pytest.raises(MemgitError, match="rejected by policy"):
        mem.import_jsonl(lines)
    hook.unlink()
    report = mem.import_jsonl(lines)
    assert report.imported == 0 and report.present == 6  # the kept change was finished (committed) first
    assert git(repo, "log", "-1", "--format=%s").startswith("memory: import 6")
    assert git(repo, "status", "--porcelain", "--", ".memory") == ""
    assert len(git(repo, "ls-files", ".memory").split()) == 7  # with config.toml


def test_a_write_still_running_is_not_reported_as_interrupted(repo: Path, tmp_path: Path) -> None:
    """A teammate's agent is inside a slow commit hook: status and lint must not tell the user
    that its change was interrupted (it holds the write lock, and will finish by itself)."""
    mem = memgit.open(repo, warn=lambda m: None)
    mem.init()
    marker, release = tmp_path / "in-hook", tmp_path / "release"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\nwhile [ ! -e '{release}' ]; do sleep 0.05; done\n")
    hook.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "memgit", "-C", str(repo), "remember", "a slow one"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert marker.exists()
        assert mem.status()["interrupted_change"] is None
        assert not [p for p in mem.lint() if "interrupted" in p.message]
    finally:
        release.touch()
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert mem.status()["interrupted_change"] is None


def test_reimport_after_editing_an_imported_memory_does_not_bring_the_old_text_back(repo: Path) -> None:
    mem = memgit.open(repo, warn=lambda m: None)
    mem.init()
    line = json.dumps({"title": "the api base url is /v1", "body": "all routes live under /v1"})
    mem.import_jsonl([line])
    (imported,) = mem.list()
    mem.update(imported.id, title="the api base url is /v2")
    report = mem.import_jsonl([line])  # the weekly re-import of another tool's export
    assert report.imported == 0
    assert [m.title for m in mem.list()] == ["the api base url is /v2"]


def test_forget_hard_of_a_memory_only_staged(repo: Path) -> None:
    """`remember --no-commit` then `forget --hard`: git cannot commit the deletion of a file it
    never committed, so memgit must just delete and unstage it, not fail."""
    mem = memgit.open(repo, warn=lambda m: None)
    mem.init()
    staged = mem.remember("a note staged with --no-commit", commit=False).memory
    mem.forget(staged.id, hard=True)
    assert mem.list() == []
    assert git(repo, "status", "--porcelain", "--", ".memory") == ""


def test_a_repository_moved_after_a_kill_finishes_the_change_in_place(repo: Path, tmp_path: Path) -> None:
    """The journal named the memory folder by its absolute path: after `mv project project2`
    the next write recreated the old folder outside the repository and could not commit."""
    mem = memgit.open(repo, warn=lambda m: None)
    mem.init()
    marker = tmp_path / "in-hook"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\nsleep 120\n")
    hook.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "memgit", "-C", str(repo), "remember", "before the move"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    hook.unlink()
    (repo / ".git" / "index.lock").unlink(missing_ok=True)
    moved = tmp_path / "moved"
    repo.rename(moved)

    mem = memgit.open(moved, warn=lambda m: None)
    mem.remember("after the move")
    assert not repo.exists()
    assert sorted(m.title for m in mem.list()) == ["after the move", "before the move"]
    assert git(moved, "status", "--porcelain") == ""
