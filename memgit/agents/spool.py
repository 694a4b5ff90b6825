"""Hook events handed to the background: the `pre-compact`, `session-end` and `stop` hooks
only write down what they were given and return; a detached process does the work.

- `hand_off` writes one record (`<git-dir>/memgit/handoff/<ns>-<pid>.json`: the agent, the
  event, its payload, the folder it ran in and how long the transcript was then, as absolute
  paths; HEAD and the branch then, read from git's files, which the event is run as of, so a
  record run after a checkout or a commit is still about what it was handed off at) atomically,
  then starts `python -I -m memgit.hookjob <git-dir>`: its own session, stdio on /dev/null,
  nice 10. The hook returns without waiting.
- `drain` runs the records in the order they were written, one process at a time (an
  exclusive `flock` on `handoff.lock`), removing each only after it ran: a process killed
  half-way leaves the record for the next one. A drainer that finds the lock held leaves
  the work to its holder, which looks again after letting the lock go, so a record written
  meanwhile is never left behind.
- The `session-start` hook drains first (waiting for the background process if it runs): the
  checkpoint a `pre-compact` handed off is there when the compacted session starts again. It
  runs at most `INLINE_RECORDS` records, and spends at most `INLINE_SECONDS` waiting and
  running in all, so that neither a backlog nor a background process busy with a long record
  can outlast the agent's hook timeout; the rest, still in order, is left to the background
  process (the one running, or one it starts).
- A draining process removes what a writer killed half-way left behind (the partly written
  `.<record>.<pid>.tmp`, never run): once that pid is gone, or after `LEFTOVER_SECONDS` (a
  pid reused since); never a file whose writer is still at it.

A record that cannot be read is dropped with a line in `hooks.log`; one older than
`STALE_SECONDS` too (whatever it was about is over).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memgit.git import localstate

#: Records older than this are dropped unrun.
STALE_SECONDS = 86_400.0
NICE = 10
#: Bytes a record may hold (a hook's payload is at most ~2 MB).
MAX_RECORD = 4_000_000
#: What the `session-start` hook runs of a backlog itself, at most (records, seconds).
INLINE_RECORDS = 8
INLINE_SECONDS = 5.0
#: A partly written record this old is a leftover whoever wrote it (writing one takes a moment).
LEFTOVER_SECONDS = 3600.0


def pending(git_dir: Path) -> list[Path]:
    """The records waiting, oldest first."""
    try:
        names = os.listdir(localstate.handoffs(git_dir))
    except OSError:
        return []
    folder = localstate.handoffs(git_dir)
    # Only what `write` makes: a folder or a link named like a record would never go away.
    return [folder / n for n in sorted(names) if n.endswith(".json") and not n.startswith(".")
            and stat.S_ISREG(_mode(folder / n))]


def _mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def write(git_dir: Path, record: dict[str, Any]) -> Path:
    """One record, written atomically; raises OSError."""
    path = localstate.handoffs(git_dir) / f"{time.time_ns():020d}-{os.getpid()}.json"
    localstate.replace(path, json.dumps(record, ensure_ascii=False))
    return path


def hand_off(git_dir: Path, record: dict[str, Any]) -> None:
    """Write `record` and start the background process that runs it; raises OSError when
    the record cannot be written (the caller then runs the event itself)."""
    write(git_dir, record)
    start(git_dir)


def start(git_dir: Path) -> None:
    """`python -I -m memgit.hookjob <git-dir>`, detached; best effort (a record it could not
    start for waits for the next hook's process, or the next `session-start`)."""
    from memgit import launch  # only the events that hand off start a process

    try:
        launch.detach(launch.argv("memgit.hookjob", str(git_dir)))
    except OSError as exc:
        try:
            localstate.append(localstate.hooks_log(git_dir),
                              f"{localstate.stamp()} memgit hookjob: could not start: {exc}")
        except OSError:
            pass


def _locked(git_dir: Path, wait: float) -> localstate.PidLock:
    return localstate.PidLock(localstate.handoff_lock(git_dir), wait)


Run = Callable[[dict[str, Any]], None]
Say = Callable[[str], None]


def drain(git_dir: Path, run: Run, say: Say, *, wait: float = 0.0, most: int | None = None,
          seconds: float | None = None) -> bool:
    """Run every record waiting, oldest first, each removed once it ran (`run` fails open on
    its own). `wait`: seconds to wait for another drainer. `most`, `seconds`: stop after that
    many records, or once a record ends that long after the call (the wait for the lock
    included), leaving the rest where they are (in order, for the next drainer). Returns False
    when another held the lock past `wait` (it runs them) or records were left."""
    began = time.monotonic()
    done = 0
    while True:
        if seconds is not None:
            wait = min(wait, max(0.0, began + seconds - time.monotonic()))
        with _locked(git_dir, wait) as mine:
            if not mine:
                return False
            _sweep(git_dir, say)
            for path in pending(git_dir):
                if (most is not None and done >= most) or (
                        seconds is not None and time.monotonic() - began >= seconds):
                    return False
                record = _read(path, say)
                try:
                    if record is not None:
                        run(record)
                finally:  # a process killed while running it leaves the record for the next
                    removed = _remove(path, say)
                if not removed:  # it would run again and again: the rest waits for a person
                    return False
                done += 1
        if not pending(git_dir):  # written while the lock was let go: run by this process
            return True


def _remove(path: Path, say: Say) -> bool:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        say(f"cannot remove a handed-off hook event that ran ({exc}); the events after it wait until "
            f"it is removed: {path}")
        return False
    return True


def _sweep(git_dir: Path, say: Say) -> None:
    """Remove the partly written records (`localstate.replace`'s `.<name>.<pid>.tmp`) whose
    writer is gone, or that are older than `LEFTOVER_SECONDS`."""
    folder = localstate.handoffs(git_dir)
    try:
        names = [n for n in os.listdir(folder) if n.startswith(".") and n.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        pid = name[:-len(".tmp")].rsplit(".", 1)[-1]
        try:
            old = time.time() - os.lstat(folder / name).st_mtime > LEFTOVER_SECONDS
            if not old and _alive(_pid(pid)):
                continue  # being written
            os.unlink(folder / name)
        except OSError:
            continue
        say(f"removed a hand-off record its writer left unfinished: {name}")


def _pid(text: str) -> int:
    """The writer's pid in a leftover's name; 0 (none: gone) for what no writer names, such as
    digits past any pid or other than ASCII ones, which `int` or `os.kill` would raise on."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else 0


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def _read(path: Path, say: Say) -> dict[str, Any] | None:
    try:
        if time.time() - path.stat().st_mtime > STALE_SECONDS:
            say(f"dropped a handed-off hook event older than {STALE_SECONDS / 3600:.0f} h: {path.name}")
            return None
        with open(path, "rb") as handle:
            data = handle.read(MAX_RECORD + 1)
        record = json.loads(data) if len(data) <= MAX_RECORD else None
    except (OSError, ValueError):
        record = None
    if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
        say(f"dropped a handed-off hook event that cannot be read: {path.name}")
        return None
    return record


def lower_priority() -> None:
    """The background process yields to the agent's own work (best effort)."""
    try:
        os.nice(NICE)
    except OSError:
        print("memgit hookjob: could not lower its priority", file=sys.stderr)
