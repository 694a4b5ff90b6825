"""One `Memgit` kept open for hours, as an MCP server or a hook runner does.

Real git repositories and real SQLite; threads are real threads on one `Memgit`.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import memgit
from memgit.errors import MemgitError

TOPICS = [
    ("parse_config returns a tuple (path, Config)", "src/config.py::parse_config"),
    ("Network calls retry three times with exponential backoff", "ingest/http.py::get_json"),
    ("Use ruff for linting, not flake8", ""),
    ("The login handler must check get_user() for None", "src/auth/login.py::login"),
    ("Release tags look like v1.2.3 and are signed", ""),
    ("Database migrations live in migrations/ and run at start-up", "migrations/"),
]
QUERIES = ["why does parse_config return a tuple?", "how do network calls retry?", "linting tool",
           "login None check", "release tags", "where are migrations?"]


@pytest.fixture
def filled(mem):  # type: ignore[no-untyped-def]
    for text, entity in TOPICS:
        mem.remember(text, entity=entity)
    return mem


def test_two_threads_recall_at_once_and_get_what_one_thread_gets(  # type: ignore[no-untyped-def]
        filled, repo: Path) -> None:
    expected = {q: [h.id for h in filled.recall(q, record=False)] for q in QUERIES}
    # A file written behind the store's back makes the first recalls of both threads sync.
    extra = filled.memory_dir / "extra.md"
    extra.write_text("---\nid: m-extra1\ntitle: Caching uses Redis with a 5 minute TTL\n---\n")
    other = memgit.open(repo, warn=lambda m: None)  # a second store: the answer one thread alone gets
    expected_extra = [h.id for h in other.recall("redis cache ttl", record=False)]
    start = threading.Barrier(2)
    errors: list[BaseException] = []
    results: list[tuple[str, list[str]]] = []

    def work(offset: int) -> None:
        try:
            start.wait()
            for round_ in range(15):
                for i in range(len(QUERIES)):
                    query = QUERIES[(i + offset + round_) % len(QUERIES)]
                    results.append((query, [h.id for h in filled.recall(query)]))
                results.append(("redis cache ttl", [h.id for h in filled.recall("redis cache ttl")]))
        except BaseException as exc:  # reported below, with the thread's traceback
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(results) == 2 * 15 * (len(QUERIES) + 1)
    for query, ids in results:
        assert ids == (expected_extra if query == "redis cache ttl" else expected[query]), query
    assert "m-extra1" in expected_extra


def test_an_open_store_sees_a_config_change(filled) -> None:  # type: ignore[no-untyped-def]
    assert len(filled.recall("parse_config tuple retry linting login release tags", min_score=0)) == 5
    config = filled.memory_dir / "config.toml"
    config.write_text(config.read_text().replace("[recall]\n", "[recall]\nk = 2\n"))
    assert len(filled.recall("parse_config tuple retry linting login release tags", min_score=0)) == 2
    with pytest.raises(MemgitError, match="unknown kind 'incident'"):
        filled.remember("The outage of May 3 came from a full disk", kind="incident")
    text = config.read_text().replace("[memory]\n", '[memory]\nkinds = ["incident"]\n')
    config.write_text(text)
    made = filled.remember("The outage of May 3 came from a full disk", kind="incident")
    assert made.memory.kind == "incident"
    assert [h.id for h in filled.recall("outage full disk", kinds=["incident"])] == [made.memory.id]


def test_close_then_use_opens_the_index_again(repo: Path, mem) -> None:  # type: ignore[no-untyped-def]
    mem.remember("parse_config returns a tuple (path, Config)")
    with memgit.open(repo, warn=lambda m: None) as store:
        first = [h.id for h in store.recall("parse_config tuple")]
        index = store.index
    assert store.workspace._index is None  # closed on leaving the block
    with pytest.raises(MemgitError, match="closed"):
        index.search("parse_config")  # a closed Index says so; the Memgit opens a new one
    assert [h.id for h in store.recall("parse_config tuple")] == first
    assert store.index is not index
    store.close()
    store.close()  # twice is fine


def test_a_writing_thread_and_recalling_threads_share_one_store(  # type: ignore[no-untyped-def]
        filled) -> None:
    start = threading.Barrier(3)
    errors: list[BaseException] = []
    written: list[str] = []

    def recalling() -> None:
        try:
            start.wait()
            for i in range(30):
                filled.recall(QUERIES[i % len(QUERIES)])
        except BaseException as exc:  # reported below
            errors.append(exc)

    def writing() -> None:
        try:
            start.wait()
            for i in range(6):
                made = filled.remember(f"Feature flag number {i} defaults to off in production")
                assert filled.get(made.memory.id).id == made.memory.id
                written.append(made.memory.id)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for work in (recalling, recalling, writing)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(written)) == 6
    assert {h.id for h in filled.recall("feature flag production", k=10, min_score=0)} >= set(written)


def test_an_embedder_that_failed_to_load_is_tried_again_later(repo: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import memgit.index.vectors as vectors_mod

    gate = tmp_path / "gate"
    gate.mkdir()
    (gate / "fail").write_text("")
    monkeypatch.setenv("MEMGIT_TEST_GATE", str(gate))
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", "tests.gated_embedder:GatedEmbedder")
    warnings: list[str] = []
    mem = memgit.open(repo, warn=warnings.append)
    mem.init()
    mem.remember("parse_config returns a tuple (path, Config)")
    assert [h.id for h in mem.recall("parse_config tuple")]
    assert mem.status()["vectors_on"] is False and any("told to fail" in w for w in warnings)
    (gate / "fail").unlink()  # fixed while the store stays open
    assert mem.recall("parse_config tuple") and mem.status()["vectors_on"] is False  # not at once
    monkeypatch.setattr(vectors_mod, "RETRY_LOAD_SECONDS", 0.0)  # as if ten minutes had passed
    assert "vector" in mem.recall("parse_config tuple", min_score=0)[0].channels
    assert mem.status()["vectors_on"] is True and mem.status()["pending_vectors"] == 0
