"""Recall: fusion, precise matches, task isolation, the floor, budgets, the injection format,
the usage log, and one end-to-end run with the real MiniLM embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgit.config import Config
from memgit.errors import MemgitError
from memgit.index.embedders import embedder_available
from memgit.index.index import Index
from memgit.memory.format import Memory, count_tokens
from memgit.recall.inject import format_markdown, render_hit
from memgit.recall.recall import Hit, recall, record_recall
from memgit.store.folder import Store

CONFIG = Config()


class Warnings(list):
    def __call__(self, message: str) -> None:
        self.append(message)


def write(folder: Path, id: str, title: str, body: str = "", **fields: object) -> None:
    Store(folder).write(Memory(id=id, title=title, body=body, path=f"{id}.md", **fields))  # type: ignore[arg-type]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "repo" / ".memory"
    path.mkdir(parents=True)
    write(path, "m-login", "Login fails on empty password",
          "In src/auth/login.py::Login.check an empty password raised a null pointer; "
          "we now reject it before hashing.", files=("src/auth/login.py",), kind="lesson")
    write(path, "m-cfg", "parse_config returns a tuple",
          "parse_config returns (config, warnings) so that callers can log the warnings.", kind="decision")
    write(path, "m-tabs", "Indentation uses tabs", "We indent with tabs everywhere.", status="archived")
    write(path, "m-t1", "Session cache for task one", "The session cache lives in redis for task one.",
          task_id="T-1")
    write(path, "m-t2", "Flaky websocket reconnect", "The websocket reconnect loop is flaky under load; "
          "backoff fixed it.", task_id="T-2")
    write(path, "m-pref", "User prefers pytest over unittest", "Write tests with pytest fixtures.",
          kind="preference")
    return path


@pytest.fixture
def index(folder: Path) -> Index:
    return Index(folder.parent / ".git" / "memgit" / "index.db", Store(folder), "none", warn=Warnings())


def ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


def test_empty_query_is_a_usage_error(index: Index) -> None:
    for query in ("", "   ", "\n\t", "\x00\x01"):
        with pytest.raises(MemgitError, match="empty query"):
            recall(index, query, config=CONFIG)


@pytest.mark.parametrize("query", [
    'NOT "login" AND (', "src/auth/login.py::Login.check NEAR/3 *", "-password -- ^x", "x" * 100_000,
    "login\x00pass\x1bword\x7f", "登录 失败 login 実装 로그인", "\ud800 lone surrogate", "a" * 10 + " OR " * 500,
])
def test_hostile_queries_never_raise(index: Index, query: str) -> None:
    hits = recall(index, query, config=CONFIG)
    assert all(0.0 <= h.score <= 1.0 for h in hits)


def test_recall_finds_and_explains(index: Index) -> None:
    hits = recall(index, "null pointer with an empty password in src/auth/login.py", config=CONFIG,
                  path_prefix=".memory/")
    assert ids(hits)[0] == "m-login"
    top = hits[0]
    assert top.path == ".memory/m-login.md" and top.memory.kind == "lesson"
    # A query naming code also weighs the share of its words a hit holds (memgit.recall.coverage).
    assert set(top.channels) == {"keyword", "anchor", "coverage"} and top.channels["anchor"] == pytest.approx(1.0)
    json.dumps([h.to_dict() for h in hits])  # JSON-ready
    assert hits[0].to_dict()["memory"]["path"] == ".memory/m-login.md"


def test_precise_id_and_title_come_first(index: Index) -> None:
    assert ids(recall(index, "m-cfg", config=CONFIG))[0] == "m-cfg"
    hits = recall(index, "USER PREFERS PYTEST OVER UNITTEST", config=CONFIG)
    assert ids(hits)[0] == "m-pref" and hits[0].score == 1.0 and hits[0].channels["exact"] == 1.0


def test_relevance_floor_drops_junk(index: Index) -> None:
    assert recall(index, "purple elephants dancing the tango at midnight", config=CONFIG) == []
    # one common word among many unknown ones: weak, dropped by the floor, kept without it
    weak = "grapefruit marmalade recipe for the session"
    assert recall(index, weak, config=CONFIG) == []
    assert "m-t1" in ids(recall(index, weak, min_score=0, config=CONFIG))


def test_archived_only_when_asked(index: Index) -> None:
    assert "m-tabs" not in ids(recall(index, "indentation tabs", config=CONFIG))
    assert ids(recall(index, "indentation tabs", include_archived=True, config=CONFIG))[0] == "m-tabs"


def test_kinds_filter(index: Index) -> None:
    assert ids(recall(index, "pytest login tuple", kinds=["preference"], min_score=0, config=CONFIG)) == ["m-pref"]


def test_task_isolation_and_widening(index: Index) -> None:
    # T-1 sees its own and task-less memories, not T-2's
    hits = recall(index, "session cache redis", task_id="T-1", config=CONFIG)
    assert ids(hits)[0] == "m-t1"
    hits = recall(index, "websocket reconnect flaky login password", task_id="T-1", config=CONFIG)
    assert ids(hits) == ["m-login"]  # the task-less match is above the floor: no widening
    # nothing in T-1 (or without a task) matches: widen to all, T-2's score times 0.7
    plain = recall(index, "websocket reconnect backoff", config=CONFIG)
    widened = recall(index, "websocket reconnect backoff", task_id="T-1", config=CONFIG)
    assert ids(plain)[0] == ids(widened)[0] == "m-t2"
    assert widened[0].score == pytest.approx(plain[0].score * CONFIG.recall_task_widen)
    # no widening when the task has something above the floor
    assert "m-t2" not in ids(recall(index, "session cache websocket", task_id="T-1", config=CONFIG))


def test_k_and_budget(index: Index) -> None:
    query = "login password tuple config pytest session cache websocket"
    all_hits = recall(index, query, k=10, min_score=0, config=CONFIG)
    assert len(all_hits) >= 4
    assert len(recall(index, query, k=2, min_score=0, config=CONFIG)) == 2
    first = count_tokens(render_hit(all_hits[0], 200))
    second = count_tokens(render_hit(all_hits[1], 200))
    budgeted = recall(index, query, k=10, min_score=0, budget_tokens=first + second + 1, config=CONFIG)
    assert ids(budgeted) == ids(all_hits)[:2]
    # A budget smaller than the best memory still returns it, cut to fit when rendered.
    small = recall(index, query, k=10, min_score=0, budget_tokens=first - 1, config=CONFIG)
    assert ids(small) == ids(all_hits)[:1]
    assert count_tokens(render_hit(small[0], first - 1)) <= first - 1
    # Not even a title fits: nothing.
    assert recall(index, query, k=10, min_score=0, budget_tokens=2, config=CONFIG) == []
    assert recall(index, query, k=0, config=CONFIG) == []


def test_format_markdown_cuts_each_memory_and_keeps_anchors(folder: Path, index: Index) -> None:
    long_body = "Start. " + " ".join(f"word{i}" for i in range(2000)) + " See src/deep/far_away.py::late_symbol."
    write(folder, "m-long", "A very long memory about login", long_body, files=("src/auth/login.py",))
    hits = recall(index, "login", k=5, min_score=0, config=CONFIG)
    text = format_markdown(hits, budget=600, per_memory=200, k=3)
    assert count_tokens(text) <= 600
    sections = text.split("\n### ")[1:]
    assert 1 <= len(sections) <= 3
    for section in sections:
        assert count_tokens(section) <= 205
    long = next(s for s in sections if s.startswith("A very long memory"))
    assert "src/deep/far_away.py::late_symbol" in long and "…" in long  # anchor kept, body cut
    assert format_markdown([], budget=600) == ""
    tiny = format_markdown(hits, budget=60, per_memory=200)
    assert count_tokens(tiny) <= 60


def test_record_recall(tmp_path: Path) -> None:
    path = tmp_path / "git" / "memgit" / "recalls.jsonl"
    record_recall(path, "why tuple?", ["m-a", "m-b"])
    record_recall(path, "x" * 1000, [])
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["ids"] == ["m-a", "m-b"] and lines[0]["query"] == "why tuple?"
    assert len(lines[1]["query"]) == 200 and len(lines[1]["query_sha1"]) == 40
    warnings = Warnings()
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    record_recall(blocked / "recalls.jsonl", "q", ["m-a"], warn=warnings)  # never raises
    assert len(warnings) == 1 and "could not record" in warnings[0]


def test_recall_syncs_first(folder: Path, index: Index) -> None:
    assert recall(index, "kubernetes operator", config=CONFIG) == []
    write(folder, "m-k8s", "Kubernetes operator reconciles nodes", "The operator loop runs every 30 s.")
    assert ids(recall(index, "kubernetes operator", config=CONFIG)) == ["m-k8s"]


def test_busy_index_still_answers(folder: Path, index: Index) -> None:
    index.sync()
    blocker = index.db.driver.connect(str(index.db_path), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process is writing for a long time
    index.conn.execute("PRAGMA busy_timeout = 100")
    try:
        write(folder, "m-new", "A new memory about parsers", "parse_config again")
        hits = recall(index, "parse_config tuple", config=CONFIG)
        assert ids(hits)[0] == "m-cfg"
        assert any("could not update the index" in w for w in index.warn)  # type: ignore[attr-defined]
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()


@pytest.mark.skipif(not embedder_available("minilm")[0], reason="the MiniLM embedder is not installed")
def test_end_to_end_with_minilm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real default embedder: a paraphrase with no shared keyword is found by vectors; the
    model is loaded once for the index, not again per call (loads are counted, not timed)."""
    from memgit.index import embedders

    loads: list[str] = []
    real_load = embedders.load_embedder

    def counted_load(name: str = "minilm", **options: object) -> object:
        loads.append(name)
        return real_load(name, **options)

    monkeypatch.setattr(embedders, "load_embedder", counted_load)
    folder = tmp_path / ".memory"
    folder.mkdir()
    notes = [
        ("m-db", "Database connections are pooled", "We keep at most 10 open connections to Postgres."),
        ("m-cat", "The office cat", "A grey cat called Miso sleeps on the server rack."),
        ("m-deploy", "Deploys happen on Tuesdays", "Release to production only on Tuesday mornings."),
        ("m-style", "Code style", "Use black with line length 100 and isort."),
        ("m-login", "Login fails on empty password", "src/auth/login.py raised a null pointer."),
    ]
    for mid, title, body in notes:
        write(folder, mid, title, body)
    warnings = Warnings()
    index = Index(tmp_path / "index.db", Store(folder), "minilm", warn=warnings)
    report = index.sync()  # 5 pending: "auto" embeds them now
    assert report.embedded == 5
    status = index.status()
    assert status["vectors_on"] and status["vectors"] == 5 and status["embedder_id"].startswith("minilm")
    hits = recall(index, "which weekday can we ship a new version?", k=3, min_score=0, config=CONFIG)
    assert hits[0].id == "m-deploy" and hits[0].channels["vector"] > 0.3
    hits = recall(index, "kitten sleeping on hardware", k=3, config=CONFIG)
    assert hits and hits[0].id == "m-cat"
    assert loads == ["minilm"]
    model = index.vectors.embedder()
    hits = recall(index, "pool size for postgres", config=CONFIG)
    assert hits[0].id == "m-db" and "vector" in hits[0].channels
    assert loads == ["minilm"] and index.vectors.embedder() is model  # warm: no model reload per call
