"""Where agents keep their session transcripts, and the newest one of a repository.

- Claude Code: `$CLAUDE_CONFIG_DIR` or `~/.claude`, then `projects/<path>/<session>.jsonl`,
  where `<path>` is the project's absolute path with every character that is not a letter or a
  digit replaced by `-` (cut to 200 characters plus a hash for long paths: matched by prefix).
- Codex: `$CODEX_HOME` or `~/.codex`, then `sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`;
  the first line (`session_meta`) names the folder the session ran in.

A transcript's path comes from a hook payload, so it may name anything: `open_regular` and
`read_tail` read only a regular file (never a FIFO nobody writes, `/dev/zero`, a folder or a
socket, through a symlink or not), never block opening it, and stop at a byte and a time limit.
They are the only way memgit opens a transcript.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import time
from pathlib import Path
from typing import BinaryIO

from memgit.errors import MemgitError

AGENTS = ("claude", "codex")
_CODEX_SCAN = 500  # rollouts looked at, newest first: older ones are not "the last session"


def newest(agent: str, root: Path) -> Path:
    """The newest transcript `agent` wrote for the repository at `root`."""
    if agent == "claude":
        found = _claude(root)
    elif agent == "codex":
        found = _codex(root)
    else:
        raise MemgitError(f"unknown agent {agent!r}; use one of {', '.join(AGENTS)}")
    if found is None:
        raise MemgitError(f"no {agent} session found for {root}; give the transcript's path instead")
    return found


#: A read of a transcript gives up after this long (a regular file on a hung network mount).
READ_SECONDS = 10.0


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for reading in binary, or OSError when it is not a regular file.

    Checked before opening (opening a device can have effects of its own) and again on the
    opened file, which is opened non-blocking so that a FIFO cannot hang the open."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the two looks
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_tail(path: str | os.PathLike[str], limit: int, seconds: float = READ_SECONDS,
              end: int | None = None) -> bytes:
    """The last `limit` bytes of the regular file at `path` (OSError for anything else, or
    when reading takes longer than `seconds`); with `end`, of its first `end` bytes (the file
    as it was when a hook handed it off, whatever was written after)."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if end is not None:
            size = min(size, max(0, end))
        handle.seek(max(0, size - limit))
        left, chunks, deadline = min(size, limit), [], time.monotonic() + seconds
        while left > 0:
            chunk = handle.read(min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
            if time.monotonic() > deadline:
                raise TimeoutError(errno.ETIMEDOUT, f"reading took over {seconds:.0f} s", str(path))
    return b"".join(chunks)


def claude_home() -> Path:
    """Claude Code's folder: `$CLAUDE_CONFIG_DIR` or `~/.claude`."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def codex_home() -> Path:
    """Codex's folder: `$CODEX_HOME` or `~/.codex`."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def claude_dir_name(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def _claude(root: Path) -> Path | None:
    home = claude_home() / "projects"
    name = claude_dir_name(root)
    folders = [home / name]
    if len(name) > 200 and home.is_dir():
        folders = [p for p in home.iterdir() if p.name.startswith(name[:200])]
    files = [f for folder in folders if folder.is_dir() for f in folder.glob("*.jsonl") if f.is_file()]
    return max(files, key=lambda f: f.stat().st_mtime_ns, default=None)


def _codex(root: Path) -> Path | None:
    sessions = codex_home() / "sessions"
    if not sessions.is_dir():
        return None
    files = sorted(sessions.glob("*/*/*/rollout-*.jsonl"), key=lambda f: f.name, reverse=True)
    for path in files[:_CODEX_SCAN]:
        cwd = _codex_cwd(path)
        if cwd is not None and (cwd == root or root in cwd.parents):
            return path
    return None


def _codex_cwd(path: Path) -> Path | None:
    try:
        with open_regular(path) as handle:
            first = json.loads(handle.readline(1_000_000) or b"{}")
    except (OSError, ValueError):
        return None
    payload = first.get("payload") if isinstance(first, dict) else None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return Path(os.path.realpath(cwd)) if isinstance(cwd, str) and cwd else None
