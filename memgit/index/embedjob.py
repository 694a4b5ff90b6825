"""Embedding in the background: vectors catch up without anyone running `memgit reindex`.

A recall embeds at most `AUTO_EMBED_MAX` pending memories itself (about 2 s). After a
`git pull` of hundreds of memories it starts this job instead and says once on stderr that
recall answers from keywords and anchors for those memories meanwhile. The job:

- is a real process (`python -I -m memgit.embedjob <index.db> <embedder>`), detached: its
  own session, no terminal, stdin/stdout/stderr on /dev/null, so the recall that started
  it returns at once and a hook's process group can end without taking it along;
- runs once per index: it holds an exclusive `flock` on `embed.lock` (next to the index, in
  the git dir) for its whole life and writes its pid there; a second job exits at once. The
  git hooks' sync after a pull takes the same lock (`hold`) while it embeds, so whichever of
  the two starts second leaves the embedding to the first;
- runs at low priority and on one core (`lower_priority`): nice 10, Linux's idle scheduling
  class (it gets a core only when nothing else wants it, so an agent's hook is not slowed
  by it), pinned to one CPU, and one thread in onnxruntime, the tokenizer and BLAS; it
  embeds in batches of `EMBED_BATCH`, committing each, so a kill loses at most one batch
  and the next job continues from there;
- exits when nothing is pending;
- fails open: any error is one line in `embed.log` (next to the index) and an exit, never
  an error in a recall; after a failure no job starts for `RETRY_SECONDS`.

`-I` keeps the current folder (a repository someone cloned) off `sys.path`; the job gets
the starting process's `sys.path` instead (`MEMGIT_EMBED_SYSPATH`), so an embedder plug-in
the recall could import, the job can import too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from memgit import launch
from memgit.git import localstate

#: After a failed job, recalls start no new one for this long (a broken embedder would
#: otherwise fail again on every call).
RETRY_SECONDS = 600.0
NICE = 10
SYSPATH_ENV = "MEMGIT_EMBED_SYSPATH"
#: Thread counts of the libraries an embedder runs on (onnxruntime's own is set by memgit's
#: embedders): one each, so the job takes one core, not every core.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "RAYON_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def lower_priority() -> list[str]:
    """Make this process (the job) yield to everything else: nice `NICE`, the idle scheduling
    class where there is one (Linux), one CPU, one thread per library. Returns what could not
    be done (each is best effort: the job runs anyway)."""
    missed = []
    os.environ.update(ONE_THREAD)  # before any embedder is loaded: the libraries read them then
    try:
        os.nice(NICE)
    except OSError as exc:
        missed.append(f"nice: {exc}")
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError as exc:
            missed.append(f"idle scheduling: {exc}")
    if hasattr(os, "sched_getaffinity"):
        try:
            cpus = sorted(os.sched_getaffinity(0))
            if len(cpus) > 1:
                os.sched_setaffinity(0, {cpus[-1]})  # the last: interactive work tends to start on the first
        except OSError as exc:
            missed.append(f"one CPU: {exc}")
    return missed


def lock_path(db_path: Path) -> Path:
    """`embed.lock` for `index.db`, `embed-<hash>.lock` for `index-<hash>.db`."""
    return db_path.parent / f"embed{db_path.stem.removeprefix('index')}.lock"


def log_path(db_path: Path) -> Path:
    return db_path.parent / "embed.log"


def failed_path(db_path: Path) -> Path:
    return lock_path(db_path).with_suffix(".failed")


def running(db_path: Path) -> int | None:
    """The pid of the job embedding for this index, or None when none runs."""
    return launch.holder(lock_path(db_path))


def start(db_path: Path, embedder_name: str) -> str:
    """Start the job for this index unless it runs. Returns "started", "running", or
    "failed" (a recent failure, or the process could not start: see `embed.log`).
    Never raises: a recall must not fail because vectors cannot catch up."""
    try:
        return _start(db_path, embedder_name)
    except Exception as exc:  # no fcntl on this platform, an odd file system...: fail open
        log(db_path, f"could not start the embedding job: {exc!r}")
        return "failed"


def _start(db_path: Path, embedder_name: str) -> str:
    if running(db_path) is not None:
        return "running"
    try:
        if time.time() - os.stat(failed_path(db_path)).st_mtime < RETRY_SECONDS:
            return "failed"
    except OSError:
        pass
    paths = [os.path.abspath(p) for p in sys.path if p]
    env = {**os.environ, **ONE_THREAD, SYSPATH_ENV: os.pathsep.join(paths)}
    try:
        subprocess.Popen(
            launch.argv("memgit.embedjob", str(db_path), embedder_name),
            cwd=db_path.parent,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        log(db_path, f"could not start the embedding job: {exc}")
        return "failed"
    return "started"


def hold(db_path: Path) -> localstate.PidLock:
    """Take the index's embedding lock for the block (`with hold(db) as mine:`): True when
    this process embeds, False when another (a job, a hook's sync) already does and this one
    should leave it the work. A few short tries: `running()` holds it for microseconds."""
    return localstate.PidLock(lock_path(db_path), 0.08)


def log(db_path: Path, message: str) -> None:
    try:
        localstate.append(log_path(db_path), f"{localstate.stamp()} {message}")
    except OSError:
        pass  # nowhere to say it: failing open means saying nothing
