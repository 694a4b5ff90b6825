"""What a team and an attacker found on the hooks' hand-off folder and the warm hook server:

- a stray `.<name>.<digits>.tmp` in the hand-off folder whose digits are no pid (too many of
  them, or digits other than ASCII ones) is removed as a leftover; it used to make every
  drain raise, so that nothing handed off ran again;
- a relative $TMPDIR is passed over for the warm server's socket: it made the private folder
  inside the project a hook ran in, and no server was ever found there; so is one that is not
  there (no server at all, where /tmp would do);
- query-term coverage reads a candidate's body up to `coverage.BODY_CHARS` characters: it
  tokenized every candidate's whole body on every query (30 memories of ~770 KB: 2 s a recall);
- a query longer than `MAX_QUERY_CHARS` is cut at a space: cut inside a word, the word's first
  half became a term and an anchor no memory holds, and a pasted log of one repeated line
  lost its only answer to it.

Real repositories; hooks as subprocesses the way an agent runs them, the server as a hook
starts it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import memgit
from memgit.agents import spool
from memgit.git import localstate
from memgit.index.ranking import Ranked
from memgit.recall import coverage
from memgit.recall.recall import MAX_QUERY_CHARS, clean_query

from .hookwatch import hand_off_session_ends, hooks_log, sessions_ended, stop_server
from .test_hook_leftovers import hook, project, server_up  # noqa: F401 (project: a fixture)


def assert_two_sessions_end_through_a_session_start(folder: Path) -> None:
    """Two session ends handed off are run, in order, by the next session start's hook."""
    sessions = ["s-a", "s-b"]
    hand_off_session_ends(folder, sessions)
    hook(folder, "session-start", {"session_id": "s-next", "cwd": str(folder), "source": "startup"},
         MEMGIT_HOOKS_BACKGROUND="1")
    assert spool.pending(folder / ".git") == []
    assert sessions_ended(folder) == sessions


def test_a_leftover_whose_name_holds_no_pid_does_not_stop_the_drain(project: Path) -> None:  # noqa: F811
    git_dir = project / ".git"
    folder = localstate.handoffs(git_dir)
    folder.mkdir(parents=True, exist_ok=True)
    strays = [folder / ".00000000000000000001-1.json.99999999999999999999999.tmp",
              folder / ".00000000000000000002-1.json.\u00b2\u00b3.tmp"]
    for stray in strays:
        stray.write_text('{"agent": "claude", "event": "pre-comp')
    assert_two_sessions_end_through_a_session_start(project)
    assert not any(stray.exists() for stray in strays)
    assert "removed a hand-off record its writer left unfinished" in hooks_log(project)


@pytest.mark.parametrize("tmpdir", ["tmp", "/nonexistent-memgit-tmp"])
def test_a_relative_or_missing_tmpdir_is_passed_over_for_the_servers_socket(
        tmpdir: str, project: Path, warm: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", tmpdir)  # relative: another folder wherever a hook runs; or not there
    (project / "tmp").mkdir()
    monkeypatch.chdir(project)
    try:
        server_up(project)
        socket = warm.socket_path()
        assert socket is not None and socket.is_absolute()
        assert socket.parent == Path("/tmp") / f"memgit-{os.getuid()}"
        assert list((project / "tmp").iterdir()) == []  # nothing made inside the project
    finally:
        stop_server(warm)


def test_coverage_reads_a_long_body_only_up_to_its_cap(repo: Path, mem: memgit.Memgit) -> None:
    filler = "the loader reads the settings file. " * 600  # ~22k characters, past the cap
    mem.import_jsonl([json.dumps(line) for line in (
        {"id": "m-long", "kind": "fact", "title": "Long notes", "body": f"getConfig is cached. {filler} parseIni too."},
        {"id": "m-short", "kind": "fact", "title": "Short notes", "body": "getConfig calls parseIni once."},
        {"id": "m-other", "kind": "fact", "title": "Deploys", "body": "Deploys go out on Tuesdays."},
    )])
    mem.index.sync()
    ranked = [Ranked("m-long", 0.5, 0.5, {"keyword": 0.5}), Ranked("m-short", 0.5, 0.5, {"keyword": 0.5})]
    lifted = {hit.id: hit.channels.get("coverage", 0.0) for hit in coverage.lift(mem.index, "getConfig parseIni", ranked)}
    assert lifted["m-short"] == 1.0
    assert 0.0 < lifted["m-long"] < 1.0  # `parseIni` comes past the cap: not seen
    assert coverage.BODY_CHARS < len(filler) // 2


def test_a_query_too_long_is_cut_between_words(repo: Path, mem: memgit.Memgit) -> None:
    mem.import_jsonl([json.dumps(line) for line in (
        {"id": "m-cfg", "kind": "fact", "title": "getConfig reads the ini once", "body": "It caches the result."},
        *({"id": f"m-{n:03d}", "kind": "fact", "title": f"Deploy note {n}", "body": f"Deploys go out on day {n}."}
          for n in range(60)),
    )])
    pasted = "`getConfig` " * (MAX_QUERY_CHARS // 12 + 1)  # the cut falls inside a `getConfig`
    assert not pasted[MAX_QUERY_CHARS].isspace()
    done = subprocess.run([sys.executable, "-m", "memgit", "recall", "--json", "-"], input=pasted, cwd=repo,
                          capture_output=True, text=True, check=True, env=dict(os.environ))
    hits = json.loads(done.stdout)
    assert [hit["id"] for hit in hits] == ["m-cfg"]
    assert hits[0]["channels"]["anchor"] == 1.0  # it holds every name asked for: no half of one
    assert clean_query(pasted).endswith("`getConfig`")
    assert clean_query("x" * (MAX_QUERY_CHARS - 2) + "ab\x01cd").endswith("xab")  # a control character is a gap
    assert len(clean_query("\u5b57" * (MAX_QUERY_CHARS + 5))) == MAX_QUERY_CHARS  # no gap: cut where it falls


def test_a_folder_named_like_a_record_does_not_stop_the_drain(project: Path) -> None:  # noqa: F811
    git_dir = project / ".git"
    folder = localstate.handoffs(git_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stray = folder / "00000000000000000001-1.json"  # sorts first; not a file memgit wrote
    stray.mkdir()
    assert_two_sessions_end_through_a_session_start(project)
    assert stray.is_dir()  # left to a person: memgit removes only what it wrote


def test_a_long_lived_process_recalls_from_a_store_with_nothing_indexed(repo: Path, mem: memgit.Memgit) -> None:
    # From its second search a long-lived process keeps the index's postings; an FTS5 table
    # that never held a row has an empty totals block, which must read as no rows.
    assert mem.index.resident is not None  # this process keeps what it can
    for _ in range(3):
        assert list(mem.recall("how does the retry handler back off")) == []
    mem.remember("The retry handler backs off exponentially, capped at 30 seconds")
    assert [h.memory.title for h in mem.recall("retry handler back off")][:1] != []
