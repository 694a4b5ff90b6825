"""Watching what a hook did, for the tests that drive hooks as real subprocesses: its lines
in `hooks.log` (hooks fail open, so the log is where a failure shows) and a wait for work a
hook handed to a background process."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from memgit.git import localstate


def hooks_log(repo: Path) -> str:
    path = localstate.hooks_log(repo / ".git")
    return path.read_text() if path.exists() else ""


def wait_until(check: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 60  # a deadline for a process that hangs, not a measurement
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
