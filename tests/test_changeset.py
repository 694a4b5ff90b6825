"""Change sets: a multi-file write lands completely, or the next memgit write finishes it.

The import is killed for real (SIGKILL) while it runs, at several moments; whatever moment the
kill hits, the next command must leave every memory committed exactly once, no temporary file
behind, and a teammate's clone with all of them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

import memgit
from memgit.errors import MemgitError

from .conftest import git

COUNT = 300


def _lines(count: int = COUNT) -> str:
    out = []
    for i in range(count):
        record = {"title": f"Fact {i} about module_{i}.py", "body": f"f_{i}() in src/mod_{i}.py returns {i}."}
        if i % 3:
            record["id"] = f"imp-{i}"  # a third come from a tool that has no ids
        out.append(json.dumps(record))
    return "\n".join(out) + "\n"


def _memgit(repo: Path, *args: str, tmpdir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    return subprocess.Popen(
        [sys.executable, "-m", "memgit", "-C", str(repo), *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _memory_files(repo: Path) -> list[str]:
    return sorted(p.name for p in (repo / ".memory").iterdir() if p.suffix == ".md" and not p.name.startswith("."))


def _wait_until(condition: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not condition() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    assert condition(), "the import never reached the moment to kill it"


def _kill(proc: subprocess.Popen[str]) -> None:
    """SIGKILL `proc`, and check that it really was running: an import that had already exited
    would make the test prove nothing."""
    proc.kill()
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, \
        f"the import was not running when killed (exit {proc.returncode})"


def _journal(repo: Path) -> Path:
    return repo / ".git" / "memgit" / "changeset.json"


KILL_POINTS: dict[str, Callable[[Path], bool]] = {
    "at start": lambda repo: True,
    "once the journal is written": lambda repo: _journal(repo).exists(),
    "with some files written": lambda repo: len(_memory_files(repo)) >= 50,
    "with most files written": lambda repo: len(_memory_files(repo)) >= COUNT // 2,
    "while git commits": lambda repo: (repo / ".git" / "index.lock").exists() or len(_memory_files(repo)) >= COUNT,
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_an_import_killed_midway_is_finished_by_the_next_command(repo: Path, tmp_path: Path, point: str) -> None:
    mem = memgit.open(repo, warn=lambda m: None)
    mem.init()
    source = tmp_path / "in.jsonl"
    source.write_text(_lines())
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()

    proc = _memgit(repo, "import", str(source), tmpdir=tmpdir)
    _wait_until(lambda: KILL_POINTS[point](repo), proc)
    _kill(proc)
    interrupted = _journal(repo).exists()
    if point not in ("at start", "while git commits"):  # the journal is written before any file
        assert interrupted

    # Whatever was left, lint and status say so until it is finished…
    written = len(_memory_files(repo))
    committed = len(git(repo, "ls-files", ".memory").split()) - 1  # minus config.toml
    if written > committed:
        problems = memgit.open(repo, warn=lambda m: None).lint()
        assert sum("not committed" in p.message or "does not track" in p.message for p in problems) == written - committed

    # …and running the import again adds everything exactly once.
    rerun = _memgit(repo, "import", str(source), tmpdir=tmpdir)
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    # The interrupted change is finished, and said so, before the import runs again.
    assert ("finished an interrupted change 'memory: import" in err) == interrupted, err
    assert len(_memory_files(repo)) == COUNT
    assert len(git(repo, "ls-files", ".memory").split()) == COUNT + 1
    assert git(repo, "status", "--porcelain", ".memory") == ""
    assert not [p for p in (repo / ".memory").iterdir() if p.name.startswith(".tmp-")]
    assert not _journal(repo).exists()
    assert list(tmpdir.iterdir()) == []  # no path lists or other leftovers in $TMPDIR
    assert memgit.open(repo, warn=lambda m: None).lint() == []

    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert len(_memory_files(clone)) == COUNT
    titles = [m.title for m in memgit.open(clone, warn=lambda m: None).list()]
    assert len(titles) == len(set(titles)) == COUNT


def test_an_import_run_twice_adds_nothing_the_second_time(mem: memgit.Memgit, tmp_path: Path) -> None:
    first = mem.import_jsonl(_lines(30).splitlines())
    second = mem.import_jsonl(_lines(30).splitlines())
    assert (first.imported, first.present) == (30, 0)
    assert (second.imported, second.present, second.skipped, second.commit) == (0, 30, [], None)
    assert len(mem.list()) == 30


def test_a_reused_id_with_another_text_is_still_refused(mem: memgit.Memgit) -> None:
    mem.import_jsonl(['{"id": "x-1", "title": "one"}'])
    report = mem.import_jsonl(['{"id": "x-1", "title": "another"}'])
    assert report.skipped == ["line 1: id 'x-1' already exists with another text"]


def test_a_file_edited_by_hand_after_the_kill_is_left_alone(repo: Path, mem: memgit.Memgit, tmp_path: Path) -> None:
    from memgit.store import changeset

    # The state a kill leaves: the journal saved, one of two files written.
    change = mem.writer.change("memory: import 2 memories")
    change.write("a.md", "---\nid: a\ntitle: A\n---\n")
    change.write("b.md", "---\nid: b\ntitle: B\n---\n")
    change._save(mem.writer.journal())
    (repo / ".memory" / "a.md").write_text("---\nid: a\ntitle: A by hand\n---\n")
    assert mem.status()["interrupted_change"] == "'memory: import 2 memories' (2 file(s): a.md, b.md)"

    messages: list[str] = []
    again = memgit.open(repo, warn=messages.append)
    again.remember("something else")
    assert "finished an interrupted change 'memory: import 2 memories' (2 file(s): a.md, b.md): committed" in messages[0]
    assert messages[1] == "left a.md as it is: it was changed by hand after the interruption"
    assert (repo / ".memory" / "a.md").read_text() == "---\nid: a\ntitle: A by hand\n---\n"
    assert git(repo, "ls-files", ".memory/b.md").strip() == ".memory/b.md"
    assert not changeset.pending(mem.writer.journal(), mem.config.kinds)


def test_status_counts_memory_files_git_does_not_track(repo: Path, mem: memgit.Memgit) -> None:
    mem.remember("committed one")
    (repo / ".memory" / "by-hand.md").write_text("written by hand, never added\n")
    info = mem.status()
    assert (info["memories"], info["untracked_files"], info["interrupted_change"]) == (2, 1, None)


def test_the_write_lock_times_out_with_a_clear_message(repo: Path, mem: memgit.Memgit, monkeypatch: pytest.MonkeyPatch) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, sys, time; h = open(sys.argv[1], 'a+'); fcntl.flock(h, fcntl.LOCK_EX); "
         "h.truncate(0); h.write('pid 4242'); h.flush(); print('locked', flush=True); time.sleep(60)",
         str(repo / ".git" / "memgit" / "write.lock")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        monkeypatch.setenv("MEMGIT_LOCK_TIMEOUT", "0.3")
        with pytest.raises(MemgitError, match=r"another memgit command \(pid 4242\) has been writing .* nothing was changed"):
            mem.remember("blocked")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert mem.remember("not blocked any more").created


def test_a_lock_timeout_that_is_not_a_number_of_seconds_gets_the_default() -> None:
    from memgit.git.repo import LOCK_TIMEOUT_SECONDS, lock_timeout

    assert lock_timeout("2.5") == 2.5 and lock_timeout("0") == 0
    for bad in ("nan", "inf", "-1", "soon", None):
        assert lock_timeout(bad) == LOCK_TIMEOUT_SECONDS, bad
