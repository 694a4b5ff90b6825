"""Every recall follows the session link: a conversation's other turns come with the one that
matches, unless the memories' dates cannot tell sessions apart (a store imported at once).

Real repositories in tmp_path, real SQLite, keyword search only (no vectors needed: the
linked turn shares none of the query's words, so only the link can bring it); the CLI runs
as a subprocess the way a user or an agent runs it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import memgit
from memgit.index import sqlite as sq


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def write(folder: Path, memory_id: str, title: str, body: str, entity: str, created: str) -> None:
    (folder / f"{memory_id}.md").write_text(
        f"---\nid: {memory_id}\ntitle: {title}\nkind: summary\nentity: {entity}\nsource: user\n"
        f"created: {created}\n---\n\n{body}\n",
        encoding="utf-8",
    )


def conversation(folder: Path, instant: bool) -> None:
    """Sessions of two turns with the "shop-api" project, a day apart, and filler about other
    projects; with `instant`, every memory is stamped with one instant, as an import is."""
    day = "2025-02-%02dT00:00:00+00:00"
    turns = [
        ("s1-r1", "Order lifecycle", "Orders move from pending to paid to shipped; a webhook confirms payment."),
        ("s1-r2", "Follow-up", "Snapshot the cart into JSONB when the customer checks out."),
        ("s2-r1", "Rate limits", "Sixty calls a minute per token, counted in Redis."),
        ("s2-r2", "Follow-up", "Return 429 with a Retry-After header."),
    ]
    for n, (mid, title, body) in enumerate(turns):
        write(folder, mid, title, body, "shop-api", day % (1 if instant else 1 + n // 2))
    for n in range(12):
        write(folder, f"other-{n}", f"Dashboard note {n}", f"Chart {n} uses the blue palette.",
              f"dashboard-{n}", day % (1 if instant else 10 + n))


def commit(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memories")


def test_a_plain_recall_brings_the_other_turn_of_the_session(repo: Path, mem: memgit.Memgit) -> None:
    conversation(repo / ".memory", instant=False)
    commit(repo)
    hits = mem.recall("what happens when a webhook confirms payment of an order?", k=5)
    by_id = {h.id: h for h in hits}
    assert hits[0].id == "s1-r1"
    # The second turn shares no word of weight with the question: only the session link finds it.
    assert by_id["s1-r2"].channels == {"link:session": 0.85}
    assert hits.how is not None and hits.how.deep is False
    # The other session of the same project, a day later, is not this one.
    assert "s2-r2" not in by_id

    done = subprocess.run(
        [sys.executable, "-m", "memgit", "recall", "webhook confirms payment of an order", "--json",
         ],
        cwd=repo, capture_output=True, text=True, env=dict(os.environ), timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "link:session" in {h["id"]: h for h in json.loads(done.stdout)}["s1-r2"]["channels"]


def test_memories_stamped_at_one_instant_are_not_one_session(repo: Path, mem: memgit.Memgit) -> None:
    conversation(repo / ".memory", instant=True)
    commit(repo)
    hits = mem.recall("what happens when a webhook confirms payment of an order?", k=5, min_score=0)
    assert hits[0].id == "s1-r1"
    assert not any(name.startswith("link:") for h in hits for name in h.channels)
    # Deep recall still follows the entity: that link does not ask the dates anything.
    deep = mem.recall("what happens when a webhook confirms payment of an order?", k=5, min_score=0,
                      deep=True)
    assert any("link:entity" in h.channels for h in deep)


def test_an_index_of_the_previous_version_gets_the_entity_index_in_place(
    repo: Path, mem: memgit.Memgit
) -> None:
    conversation(repo / ".memory", instant=False)
    commit(repo)
    mem.recall("order", k=1)
    db = repo / ".git" / "memgit" / "index.db"
    mem.index.close()
    with sqlite3.connect(db) as conn:  # as the previous memgit left it
        conn.execute("DROP INDEX memories_entity")
        conn.execute("INSERT INTO meta(key, value) VALUES ('left-by-test', 'kept')")
        conn.execute("PRAGMA user_version = 5")
    again = memgit.open(repo, warn=lambda message: None)
    assert "link:session" in {h.id: h for h in again.recall(
        "what happens when a webhook confirms payment of an order?", k=5, min_score=0)}["s1-r2"].channels
    again.index.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == sq.SCHEMA_VERSION
        # In place: a rebuild would have dropped this row (and embedded every memory again).
        assert conn.execute("SELECT value FROM meta WHERE key = 'left-by-test'").fetchone() == ("kept",)
        plan = conn.execute("EXPLAIN QUERY PLAN SELECT id FROM memories m WHERE m.entity = ? "
                            "AND m.entity <> ''", ("shop-api",)).fetchall()
        assert any("memories_entity" in str(row) for row in plan), plan


def test_a_smaller_k_gives_the_head_of_the_longer_answer(repo: Path, mem: memgit.Memgit) -> None:
    """Links that could not reach the first k are not looked up; the first k stay the same."""
    conversation(repo / ".memory", instant=False)
    commit(repo)
    for question in ("what happens when a webhook confirms payment of an order?", "rate limits per token",
                     "which palette do the charts use?"):
        for deep in (False, True):
            whole = [(h.id, h.score) for h in mem.recall(question, k=16, min_score=0, deep=deep)]
            assert any(mid.startswith("s") for mid, _ in whole)
            for k in range(1, 8):
                head = [(h.id, h.score) for h in mem.recall(question, k=k, min_score=0, deep=deep)]
                assert head == whole[:k], (k, deep)
