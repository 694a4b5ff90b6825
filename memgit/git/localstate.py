"""memgit's local state: the files it keeps in the clone's git dir (`<git-dir>/memgit/`),
never committed, one git dir per worktree.

One function per file names it; `append` adds a line to a log (rotated past ROTATE_BYTES into
one older file, `<name>.1`); `replace` writes a file atomically (a temporary file beside it,
then `os.replace`); `stamp` is the one shape of time these files hold
(`2026-05-08T13:56:00Z`, UTC to the second). Readers also accept the `+00:00` shape older
versions wrote in some files.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FOLDER = "memgit"
#: A log past this size is moved to `<name>.1` (replacing the one before) and starts again.
ROTATE_BYTES = 5_000_000


def folder(git_dir: Path) -> Path:
    """`<git-dir>/memgit`: everything below is this clone's, never committed."""
    return git_dir / FOLDER


def index_db(git_dir: Path) -> Path:
    """The index of the repository's own `.memory/`."""
    return folder(git_dir) / "index.db"


def write_lock(git_dir: Path) -> Path:
    """The lock memgit writers take turns on (with the holder's pid inside)."""
    return folder(git_dir) / "write.lock"


def journal(git_dir: Path) -> Path:
    """The journal of the change being written (`memgit finish`, `memgit abandon`)."""
    return folder(git_dir) / "changeset.json"


def recalls(git_dir: Path) -> Path:
    """The recall log: which memories each recall returned."""
    return folder(git_dir) / "recalls.jsonl"


def feedback(git_dir: Path) -> Path:
    """`memgit feedback` verdicts."""
    return folder(git_dir) / "feedback.jsonl"


def sessions(git_dir: Path) -> Path:
    """The folder of agent sessions' state files (`<session id>.json`)."""
    return folder(git_dir) / "sessions"


def sessions_log(git_dir: Path) -> Path:
    """One line per ended agent session."""
    return folder(git_dir) / "sessions.jsonl"


def hooks_log(git_dir: Path) -> Path:
    """One line per agent hook that failed (it exited 0 and printed nothing)."""
    return folder(git_dir) / "hooks.log"


def handoffs(git_dir: Path) -> Path:
    """The folder of hook events handed to the background (`<ns>-<pid>.json`, one per event)."""
    return folder(git_dir) / "handoff"


def handoff_lock(git_dir: Path) -> Path:
    """Held by whoever runs the handed-off events (with its pid inside): one at a time."""
    return folder(git_dir) / "handoff.lock"


def captures(git_dir: Path) -> Path:
    """The folder of capture proposals the session-end hook kept pending."""
    return folder(git_dir) / "capture"


def capture_log(git_dir: Path) -> Path:
    """One line per capture the session-end hook ran."""
    return folder(git_dir) / "capture.log"


def restated(git_dir: Path) -> Path:
    """Lessons a capture found already in memory, with the transcript line that restated them."""
    return folder(git_dir) / "restated.jsonl"


def codeprints(git_dir: Path) -> Path:
    """The cache of the work tree's code fingerprints (`memgit.git.codeprint.Prints`)."""
    return folder(git_dir) / "codeprints.json"


def mainline(git_dir: Path) -> Path:
    """The default branch's memory files (blob ids) at its last tip seen: a new process need not
    ask git for them again until the branch moves."""
    return folder(git_dir) / "mainline.json"


def rotated(path: Path) -> Path:
    """The older file a log rotates into (`recalls.jsonl` → `recalls.jsonl.1`)."""
    return path.with_name(path.name + ".1")


def stamp(when: float | None = None) -> str:
    """A time (seconds since the epoch; now by default) in the one shape memgit's local files
    hold: `2026-05-08T13:56:00Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


def append(path: Path, line: str) -> None:
    """Add one line to a log, rotating it first when it is past ROTATE_BYTES. The line goes
    in one `write` with O_APPEND, so lines of concurrent writers do not interleave. Raises
    OSError (each caller decides whether a lost line matters)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if path.stat().st_size > ROTATE_BYTES:
            os.replace(path, rotated(path))  # keep one older file, not forever
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line.rstrip("\n") + "\n").encode("utf-8", "replace"))
    finally:
        os.close(fd)


def append_json(path: Path, record: Mapping[str, Any]) -> None:
    """`append` one JSON object as a line (JSON Lines)."""
    append(path, json.dumps(record, ensure_ascii=False))


def replace(path: Path, data: str | bytes, *, durable: bool = False) -> None:
    """Write `path` atomically: readers see the old content or the new, never a part. With
    `durable`, the data reaches the disk before the file is replaced (a journal). Raises
    OSError, leaving no temporary file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise


class PidLock:
    """`with PidLock(path, wait) as mine:` takes an exclusive `flock` on `path` (created if
    missing), trying for up to `wait` seconds: `mine` is True with the lock held and this
    process's pid written in the file (what `memgit.launch.holder` reads), False when another
    process holds it. The lock goes with the block, or with the process if it is killed."""

    def __init__(self, path: Path, wait: float) -> None:
        self.path, self.wait = path, wait
        self._handle: Any = None

    def __enter__(self) -> bool:
        import fcntl  # POSIX only (flock)

        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    handle.close()
                    return False
                time.sleep(0.02)
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        self._handle = handle
        return True

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            import fcntl  # POSIX only (flock)

            try:
                fcntl.flock(self._handle, fcntl.LOCK_UN)
            finally:
                self._handle.close()
                self._handle = None
