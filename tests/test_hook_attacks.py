"""The fast agent hooks (hand-off, the warm hook server, git state read from git's files) under
attack, in a team and in careless hands: what a repository, a record or a second repository
can make them do. Hooks run as real subprocesses, `python -I -m memgit.hookrun claude EVENT`
with the payload on stdin, the way an agent runs them; the warm server as the hook starts it.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import memgit
from memgit.git import localstate

from .conftest import git

PROMPT = "how does the retry handler back off"


def store(repo: Path, words: str) -> Path:
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.init()
        mem.import_jsonl([json.dumps({"id": f"m-{words.split()[0].lower()}", "kind": "fact",
                                      "title": f"The retry handler backs off: {words}", "body": "See retry.py."})])
    return repo


@pytest.fixture
def project(repo: Path) -> Path:
    store(repo, "Exponential backoff capped at five minutes")
    git(repo, "checkout", "-q", "-b", "fix/retry-backoff")
    return repo


def hook(cwd: Path, event: str, data: dict[str, Any] | str, **env: str) -> tuple[str, str]:
    """(stdout, stderr) of one hook process; it must exit 0."""
    text = data if isinstance(data, str) else json.dumps(data)
    done = subprocess.run([sys.executable, "-I", "-m", "memgit.hookrun", "claude", event], input=text,
                          cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def hooks_log(repo: Path) -> str:
    path = localstate.hooks_log(repo / ".git")
    return path.read_text() if path.exists() else ""


def wait_until(check, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 60  # a deadline for a process that hangs, not a measurement
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


# -- git's files ---------------------------------------------------------------------------


def test_a_symlinked_head_is_the_branch_git_says(project: Path) -> None:
    # git still honours a HEAD that is a symbolic link (`core.preferSymlinkRefs`, old clones).
    head = project / ".git" / "HEAD"
    head.unlink()
    head.symlink_to("refs/heads/fix/retry-backoff")
    assert git(project, "symbolic-ref", "HEAD").strip() == "refs/heads/fix/retry-backoff"
    hook(project, "session-start", {"session_id": "s-link", "cwd": str(project), "source": "startup"})
    hook(project, "session-end", {"session_id": "s-link", "cwd": str(project), "reason": "exit"})
    record = json.loads(localstate.sessions_log(project / ".git").read_text().splitlines()[-1])
    assert record["task"] == "fix/retry-backoff", record
    assert hooks_log(project) == ""


def test_a_ref_linked_outside_the_git_dir_is_left_to_git(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text(git(project, "rev-parse", "HEAD"))
    ref = project / ".git" / "refs" / "heads" / "fix" / "retry-backoff"
    ref.unlink()
    ref.symlink_to(outside)
    from memgit.git import gitfiles

    assert gitfiles.head_and_branch(project / ".git") is None  # git's own word, not a file read outside
