"""Watching what a hook did, for the tests that drive hooks as real subprocesses: its lines
in `hooks.log` (hooks fail open, so the log is where a failure shows) and a wait for work a
hook handed to a background process."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from memgit.agents import spool
from memgit.git import localstate


def hooks_log(repo: Path) -> str:
    path = localstate.hooks_log(repo / ".git")
    return path.read_text() if path.exists() else ""


def wait_until(check: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 60  # a deadline for a process that hangs, not a measurement
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def hand_off_session_ends(project: Path, sessions: list[str]) -> None:
    """The records `session-end` hooks write for `sessions`, as they write them."""
    for session in sessions:
        spool.write(project / ".git", {"agent": "claude", "event": "session-end", "cwd": str(project),
                                       "payload": {"session_id": session, "cwd": str(project), "reason": "exit"},
                                       "transcript_end": None})


def sessions_ended(project: Path) -> list[str]:
    """The sessions recorded as ended, in the order they were recorded."""
    log = localstate.sessions_log(project / ".git").read_text().splitlines()
    return [json.loads(line)["session_id"] for line in log]


def no_job(git_dir: Path) -> bool:
    """Whether no background process runs for `git_dir` (one the hook started exists by the
    time the hook returned)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            zombie = ") Z " in Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if b"memgit.hookjob" in argv and str(git_dir).encode() in argv and not zombie:
            return False
    return True


def stop_server(warmhooks: ModuleType) -> None:
    """Stop the warm hook server, and then any other one that takes over its lock: two hooks
    that found no server may each start one, and the later one, still starting when the first
    is stopped, takes over and would otherwise serve on until idle."""

    def stopped() -> bool:
        pid = warmhooks.running()
        if pid and pid > 0:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        return pid is None

    wait_until(stopped, "the server did not stop")
