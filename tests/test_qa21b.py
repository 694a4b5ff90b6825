"""The thread that reads every token's postings (`memgit.index.postings.Postings.preload`)
as a long-lived process and a careless caller meet it: stores opened and closed many times,
an index file deleted under a running process.

The store and its stand-in embedder (`HashEmbedder`, no model) are
tests/test_recall_resident.py's.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import memgit
from memgit.index import postings
from tests.test_recall_resident import QUERIES, store

__all__ = ["store"]  # the fixture, used by name

@pytest.fixture(autouse=True)
def preload(monkeypatch: pytest.MonkeyPatch) -> None:
    """The thread that reads every token's postings on, as in the MCP server."""
    monkeypatch.setattr(postings, "PRELOAD", True)


PROC_FDS = Path("/proc/self/fd")
needs_proc = pytest.mark.skipif(not PROC_FDS.is_dir(), reason="counts this process's open files in /proc")


def open_on(path: Path) -> int:
    """How many of this process's file descriptors are open on `path` itself."""
    count = 0
    for fd in os.listdir(PROC_FDS):
        try:
            if os.readlink(PROC_FDS / fd) == str(path):
                count += 1
        except OSError:
            continue
    return count


def postings_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "memgit-postings" and t.is_alive()]


def ended(threads: list[threading.Thread]) -> bool:
    """Whether they all end (within 20 s in all: on a close they end at once)."""
    until = time.monotonic() + 20
    for thread in threads:
        thread.join(max(0.0, until - time.monotonic()))
    return not any(t.is_alive() for t in threads)


@needs_proc
def test_the_thread_waiting_for_quiet_holds_no_connection_and_ends_on_close(
        store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postings, "IDLE_SECONDS", 3600.0)  # never quiet: it waits all along
    index = Path(store.index.db.path).resolve()
    store.recall(QUERIES[0])
    before = open_on(index)
    store.recall(QUERIES[1])  # the second search: the thread starts and waits
    assert store.index.resident.postings._loading is not None
    waiting = postings_threads()
    assert waiting
    assert open_on(index) == before  # no connection of its own yet
    store.close()
    assert ended(waiting)  # woken by the close, not at the end of its wait


@needs_proc
def test_many_opens_and_closes_leave_no_thread_or_connection(
        repo: Path, store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postings, "IDLE_SECONDS", 3600.0)
    index = Path(store.index.db.path).resolve()
    store.close()
    before = open_on(index)
    started: list[threading.Thread] = []
    for n in range(12):
        opened = memgit.open(repo, warn=lambda message: None)
        opened.recall(QUERIES[n % len(QUERIES)])
        opened.recall(QUERIES[(n + 1) % len(QUERIES)])
        started += [t for t in postings_threads() if t not in started]
        opened.close()
    assert len(started) == 12
    assert ended(started)
    assert open_on(index) == before


def test_an_index_deleted_under_the_process_is_not_made_again_by_the_thread(
        store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postings, "IDLE_SECONDS", 0.0)
    index = Path(store.index.db.path)
    store.recall(QUERIES[0])
    index.unlink()  # the process still reads its open file
    store.recall(QUERIES[1])  # the second search starts the thread
    book = store.index.resident.postings
    assert not book.wait(60)  # nothing to read: the tokens are read as asked for
    assert not index.exists()
    assert store.recall(QUERIES[2]) == store.recall(QUERIES[2])
