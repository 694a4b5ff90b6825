"""What the fast agent hooks leave behind, and what they take from the process that runs them:

- a hand-off record a writer was killed half-way through (`.<record>.<pid>.tmp`) is removed
  by the next process that drains, once that writer is gone; one still being written stays;
- a `session-start` runs a bounded part of a backlog of handed-off events itself and leaves
  the rest, in order, to the background process;
- a hook the warm server answers writes its files with the hook's umask, not the server's;
- a runtime folder whose path is too long for a Unix socket does not stop the warm server:
  its socket goes where its path fits, in the same private folder.

Real repositories; hooks as subprocesses the way an agent runs them, the server as a hook
starts it.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

import memgit
from memgit.agents import spool
from memgit.git import localstate

from .conftest import git
from .hookwatch import hand_off_session_ends, hooks_log, no_job, sessions_ended, stop_server, wait_until

# The hook's own process; then whether the warm server answered it (memgit's API not imported).
RUN_HOOK = (
    "import sys\n"
    "from memgit import hookrun\n"
    "hookrun.main(sys.argv[1:])\n"
    "sys.stderr.write('\\nSERVED ' + str('memgit.api' not in sys.modules))\n"
)


@pytest.fixture
def project(repo: Path) -> Path:
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.init()
        mem.import_jsonl([json.dumps({"id": "m-retry", "kind": "fact", "title": "The retry handler backs off "
                                      "exponentially, capped at five minutes", "body": "See retry.py."})])
    git(repo, "checkout", "-q", "-b", "fix/retry-backoff")
    return repo


def hook(cwd: Path, event: str, data: dict[str, Any], *, umask: int = 0o022, **env: str) -> tuple[str, bool]:
    """(stdout, whether the warm server answered) of one hook process; it must exit 0."""
    done = subprocess.run([sys.executable, "-I", "-c", RUN_HOOK, "claude", event], input=json.dumps(data),
                          cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, **env}, umask=umask)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr.rsplit("\nSERVED ", 1)[1].strip() == "True"


def drained(git_dir: Path) -> bool:
    return no_job(git_dir) and spool.pending(git_dir) == []


# -- hand-off records ------------------------------------------------------------------------


def test_a_record_left_half_written_is_removed_once_its_writer_is_gone(project: Path, tmp_path: Path) -> None:
    git_dir = project / ".git"
    folder = localstate.handoffs(git_dir)
    folder.mkdir(parents=True, exist_ok=True)

    def leftover(pid: int) -> Path:  # as `localstate.replace` names it while it writes
        path = folder / f".{time.time_ns():020d}-{pid}.json.{pid}.tmp"
        path.write_text('{"agent": "claude", "event": "pre-comp')
        return path

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    killed = leftover(int(gone.stdout))
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        writing = leftover(writer.pid)
        stuck = leftover(os.getpid())  # a pid alive, but a write no writer takes this long over
        long_ago = time.time() - 2 * 86_400  # longer ago than `spool.LEFTOVER_SECONDS`
        os.utime(stuck, (long_ago, long_ago))
        (tmp_path / "session.jsonl").write_text("")
        hook(project, "pre-compact", {"session_id": "s-left", "cwd": str(project),
                                      "transcript_path": str(tmp_path / "session.jsonl")},
             MEMGIT_HOOKS_BACKGROUND="1")
        wait_until(lambda: drained(git_dir), "the background process did not run the record")
        assert not killed.exists() and not stuck.exists()
        assert writing.exists()  # its writer is still at it
        assert "removed a hand-off record its writer left unfinished" in hooks_log(project)
    finally:
        writer.kill()
        writer.wait()


def test_a_session_start_leaves_most_of_a_backlog_to_the_background_in_order(project: Path) -> None:
    git_dir = project / ".git"
    sessions = [f"s-{i:02d}" for i in range(12)]  # more than `spool.INLINE_RECORDS`
    hand_off_session_ends(project, sessions)
    hook(project, "session-start", {"session_id": "s-next", "cwd": str(project), "source": "startup"},
         MEMGIT_HOOKS_BACKGROUND="1")
    assert "handed-off hook events to the background process" in hooks_log(project)
    wait_until(lambda: drained(git_dir), "the background process did not run the rest")
    ended = sessions_ended(project)
    assert ended == sessions  # every one, once, in the order handed off


def test_a_session_start_does_not_wait_out_a_background_process_busy_with_a_long_record(project: Path) -> None:
    git_dir = project / ".git"
    hand_off_session_ends(project, ["s-waiting"])
    lock = localstate.handoff_lock(git_dir)
    lock.parent.mkdir(parents=True, exist_ok=True)
    # What a background process running a long record looks like from outside: the lock held.
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time\n"
        f"f = open({str(lock)!r}, 'a+'); fcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True); time.sleep(600)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        # The hook may wait for memgit's write lock far longer than an agent waits for a hook;
        # the drain before a session starts is bounded on its own (`spool.INLINE_SECONDS`).
        done = subprocess.run([sys.executable, "-I", "-c", RUN_HOOK, "claude", "session-start"],
                              input=json.dumps({"session_id": "s-next", "cwd": str(project), "source": "startup"}),
                              cwd=project, capture_output=True, text=True, timeout=60, check=False,
                              env={**os.environ, "MEMGIT_LOCK_TIMEOUT": "300", "MEMGIT_HOOKS_BACKGROUND": "1"})
        assert done.returncode == 0, done.stderr
        assert (git_dir / "memgit" / "sessions" / "s-next.json").exists()  # the hook's own work done
        assert [p.name for p in spool.pending(git_dir)] != []  # left, in order, to the lock's holder
        assert holder.poll() is None
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()  # type: ignore[union-attr]
    wait_until(lambda: no_job(git_dir), "a background process the hook started did not end")


# -- the warm hook server ----------------------------------------------------------------------


def server_up(cwd: Path, umask: int = 0o022) -> None:
    """Hooks (with `umask`: the server a hook starts has the hook's) until the server answers."""
    wait_until(lambda: hook(cwd, "user-prompt", {"session_id": "s-up", "cwd": str(cwd), "prompt": "x"},
                            umask=umask)[1], "no warm hook server answered")


def test_a_hook_the_server_answers_writes_with_the_hooks_umask(project: Path, warm: Any) -> None:
    server_up(project, umask=0o077)  # a server started by a hook with a strict umask
    _, served = hook(project, "session-start", {"session_id": "s-mask", "cwd": str(project), "source": "startup"},
                     umask=0o002)
    assert served
    written = project / ".git" / "memgit" / "sessions" / "s-mask.json"
    assert stat.S_IMODE(written.stat().st_mode) == 0o664  # the hook's umask, not the server's


def test_a_runtime_folder_too_long_for_a_socket_still_gets_a_server(
        project: Path, tmp_path: Path, warm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / ("r" * 60) / ("u" * 60)
    runtime.mkdir(parents=True)
    runtime.chmod(0o700)
    short = Path(tempfile.mkdtemp(prefix="mg"))  # a $TMPDIR where it fits
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("TMPDIR", str(short))
    try:
        server_up(project)
        socket = warm.socket_path()
        assert socket is not None and socket.parent == short / f"memgit-{os.getuid()}"
        assert stat.S_ISSOCK(socket.lstat().st_mode)
        assert stat.S_IMODE(socket.parent.lstat().st_mode) == 0o700
        assert not (runtime / f"memgit-{os.getuid()}").exists() or not list((runtime / f"memgit-{os.getuid()}").iterdir())
        out, served = hook(project, "user-prompt", {"session_id": "s-long", "cwd": str(project),
                                                    "prompt": "how does the retry handler back off"})
        assert served and "retry handler" in out
    finally:
        stop_server(warm)
        shutil.rmtree(short, ignore_errors=True)
