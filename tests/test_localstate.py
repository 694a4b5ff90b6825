"""memgit's local state in `<git-dir>/memgit/` and the one git runner: logs rotate one way,
files from older versions are still read, one timestamp shape, git's output read whatever
bytes a file name holds, and a clear error when git is missing."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest

import memgit
from memgit.errors import MemgitError
from memgit.git import localstate, repostate, runner

from .conftest import git

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def test_every_log_rotates_past_the_same_size_and_readers_see_both_files(repo: Path, mem: memgit.Memgit) -> None:
    """feedback.jsonl grew without end (only the recall and hook logs rotated, at two sizes)."""
    made = mem.remember("deploys go through the release train", kind="convention").memory
    log = repo / ".git" / "memgit" / "feedback.jsonl"
    old = json.dumps({"ts": "2026-11-20T10:00:00+00:00", "id": made.id, "verdict": "used", "session": "s0"})
    log.write_text((old + "\n") * (localstate.ROTATE_BYTES // len(old) + 2), encoding="utf-8")
    big = log.stat().st_size

    record = mem.feedback(made.id, "used", session="s1")

    rotated = repo / ".git" / "memgit" / "feedback.jsonl.1"
    assert rotated.exists() and rotated.stat().st_size == big
    assert [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] == [record]
    assert STAMP.match(record["ts"]), record
    # The older file, in the +00:00 shape an older memgit wrote, still counts.
    from memgit.recall import usage

    found = usage.load(repo / ".git").of(made.id)
    assert found.verdicts["used"] == big // (len(old) + 1) + 1
    assert found.used_sessions == {"s0", "s1"}


def test_the_logs_memgit_appends_to_share_one_timestamp_shape(repo: Path, mem: memgit.Memgit) -> None:
    mem.remember("the build uses uv, never pip", kind="convention")
    made = mem.list()[0]
    mem.recall("which installer does the build use")
    mem.feedback(made.id, "ignored")
    git_dir = repo / ".git"
    for path in (localstate.recalls(git_dir), localstate.feedback(git_dir)):
        stamps = [json.loads(line)["ts"] for line in path.read_text(encoding="utf-8").splitlines()]
        assert stamps and all(STAMP.match(s) for s in stamps), (path, stamps)


def test_replace_leaves_the_old_file_or_the_new_and_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "memgit" / "sessions" / "s.json"
    localstate.replace(path, '{"a": 1}')
    localstate.replace(path, b'{"a": 2}')
    assert path.read_text() == '{"a": 2}' and os.listdir(path.parent) == ["s.json"]
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(OSError):
        localstate.replace(blocked / "x.json", "{}")


def test_lint_reads_a_memory_folder_file_whose_name_is_not_utf8(repo: Path, mem: memgit.Memgit) -> None:
    """git's output was read as strict text: such a name made `memgit lint` fail with a traceback."""
    mem.remember("a fact to keep", kind="fact")
    odd = os.fsencode(repo / ".memory") + b"/caf\xe9.md"
    with open(odd, "wb") as handle:
        handle.write(b"not a memory\n")
    problems = [(Path(p.path).name, p.message) for p in mem.lint()]
    assert [m for name, m in problems if name == "caf\udce9.md"] == [
        "git does not track this file, so teammates do not get it: commit it (or delete it)"], problems


def test_git_missing_is_a_clear_error(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(MemgitError, match="git is not installed or not on PATH"):
        runner.run(["status"], repo)
    with pytest.raises(MemgitError, match="git is not installed"):
        memgit.open(repo, warn=lambda m: None).remember("a fact")
    assert repostate.head(repo) is None  # the session's state is best effort: nothing, not a failure


def test_a_folder_that_is_gone_is_not_called_a_missing_git(tmp_path: Path) -> None:
    with pytest.raises(MemgitError, match="is not a folder"):
        runner.run(["status"], tmp_path / "gone")


def test_a_held_index_lock_is_waited_for(repo: Path, mem: memgit.Memgit) -> None:
    """Another git (an editor's, a prompt's) holding `index.lock` for a moment does not fail a
    memgit write: every git command memgit runs waits for it."""
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    threading.Timer(0.3, lock.unlink).start()
    made = mem.remember("a note written while another git held the index")
    assert made.commit and not lock.exists()
    assert "a note written" in git(repo, "log", "-1", "--format=%s")
