"""Deep recall, query-adaptive fusion, long notes by passage, time questions, the degraded flag.

Real repositories in tmp_path, real SQLite, the CLI, the MCP server and the agent hooks run
as subprocesses the way a user or an agent runs them. Vectors, where a test needs them, come
from `PrefixEmbedder`, a stand-in that (like the bundled model, which reads about 128
tokens) sees only the first `PrefixEmbedder.WORDS` words of a text.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

import pytest

import memgit


class PrefixEmbedder:
    """Bag of hashed words over the first `WORDS` words only, 128-d, L2-normalised."""

    id = "prefix-words-30"
    dim = 128
    WORDS = 30

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(":", " ").replace(",", " ").split()[: self.WORDS]:
                out[row, int(hashlib.md5(word.strip(".?!").encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def embed_query(self, text: str) -> Any:
        return self.embed([text])[0]


EMBEDDER = f"{__name__}:PrefixEmbedder"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def write(folder: Path, memory_id: str, title: str, body: str, **front: Any) -> None:
    """A memory file as a person (or another memgit) wrote it."""
    lines = [
        f"id: {memory_id}",
        f"title: {title}",
        f"kind: {front.pop('kind', 'fact')}",
        "confidence: 0.9",
        f"source: {front.pop('source', 'user')}",
    ]
    for key, value in front.items():
        lines.append(f"{key}: {json.dumps(value)}")
    (folder / f"{memory_id}.md").write_text(
        "---\n" + "\n".join(lines) + f"\n---\n\n{body}\n", encoding="utf-8"
    )


def commit_all(repo: Path, message: str = "memories") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def cli(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memgit", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def ids(hits: Sequence[Any]) -> list[str]:
    return [h.id for h in hits]


# -- deep mode: each link kind -------------------------------------------------------------


@pytest.fixture
def linked(repo: Path, mem: memgit.Memgit) -> Path:
    """A seed memory about invoice rounding, and one memory per link kind that shares none
    of the query's words."""
    folder = repo / ".memory"
    write(
        folder,
        "seed",
        "Invoice totals are rounded half-even",
        "Banker's rounding on invoice totals; see note-ledger for the ledger side.",
        entity="src/billing.py",
        files=["src/billing.py"],
        task_id="t-42",
        created="2025-03-01T10:00:00+00:00",
    )
    write(
        folder,
        "same-entity",
        "Currency codes come from ISO 4217",
        "Three-letter codes only.",
        entity="src/billing.py",
        created="2025-01-01T09:00:00+00:00",
    )
    write(
        folder,
        "same-task",
        "Stripe webhooks are retried by the worker",
        "The worker retries with backoff.",
        task_id="t-42",
        created="2025-03-01T10:30:00+00:00",
    )
    write(
        folder,
        "note-ledger",
        "Ledger entries are immutable",
        "Corrections are new entries.",
        created="2024-06-01T00:00:00+00:00",
    )
    write(
        folder,
        "names-seed",
        "Tax export format",
        "The CSV export follows seed for its amounts.",
        created="2024-07-01T00:00:00+00:00",
    )
    write(
        folder,
        "newer",
        "Checkout uses the payment intents API",
        "Replaces the charges API.",
        supersedes=["older"],
        created="2025-04-01T00:00:00+00:00",
    )
    write(
        folder,
        "older",
        "Invoice totals computed by the charges API",
        "Legacy.",
        created="2024-01-01T00:00:00+00:00",
    )
    write(
        folder,
        "partner",
        "PDF layout of receipts",
        "Receipts are A4.",
        entity="src/receipts.py",
        files=["src/receipts.py"],
        created="2023-01-01T00:00:00+00:00",
    )
    src = repo / "src"
    src.mkdir()
    for n in range(3):  # src/billing.py and src/receipts.py change together, three times
        (src / "billing.py").write_text(f"RATE = {n}\n")
        (src / "receipts.py").write_text(f"SIZE = {n}\n")
        git(repo, "add", "src")
        git(repo, "commit", "-q", "-m", f"billing and receipts {n}")
    commit_all(repo)
    return repo


def test_deep_follows_every_link_kind(linked: Path) -> None:
    mem = memgit.open(linked, warn=lambda message: None)
    query = "how are invoice totals rounded?"
    shallow = mem.recall(query, k=10, min_score=0, include_archived=True)
    assert ids(shallow)[0] == "seed"
    deep = mem.recall(query, k=10, min_score=0, include_archived=True, deep=True)
    by_id = {h.id: h for h in deep}
    assert deep.how is not None and deep.how.deep is True
    expected = {
        "same-entity": "link:entity",
        "same-task": "link:session",
        "note-ledger": "link:names",
        "names-seed": "link:names",
        "partner": "link:cochange",
    }
    for memory_id, link in expected.items():
        if link != "link:session":  # every recall follows the session link; the others are deep's
            assert memory_id not in ids(shallow), memory_id
        assert link in by_id[memory_id].channels, (memory_id, by_id[memory_id].channels)
    # The session link, followed by every recall: the same task's memory, which matches no word.
    assert "link:session" in {h.id: h for h in shallow}["same-task"].channels
    assert shallow.how is not None and shallow.how.deep is False
    # "older" matches the query's words; what supersedes it comes with it.
    assert "link:supersedes" in by_id["newer"].channels
    assert ids(deep)[0] == "seed"  # a link never outranks the memory it came from
    # co-change was mined from the real history once and cached per HEAD
    cache = json.loads((linked / ".git" / "memgit" / "cochange.json").read_text())
    assert cache["partners"]["src/billing.py"]["src/receipts.py"] == 3
    # a damaged cache is mined again, not trusted
    damaged = {"head": cache["head"], "partners": {"src/billing.py": ["src/receipts.py"]}}
    (linked / ".git" / "memgit" / "cochange.json").write_text(json.dumps(damaged))
    again = mem.recall(query, k=10, min_score=0, include_archived=True, deep=True)
    assert "link:cochange" in {h.id: h for h in again}["partner"].channels


def test_deep_from_the_cli_and_mcp(linked: Path) -> None:
    done = cli(
        linked,
        "recall",
        "how are invoice totals rounded?",
        "--deep",
        "--json",
        "-k",
        "10",
        "--min-score",
        "0",
    )
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)
    assert any("link:session" in h["channels"] for h in hits)
    assert all(h["how"]["deep"] is True for h in hits)
    plain = json.loads(
        cli(
            linked, "recall", "how are invoice totals rounded?", "--json", "-k", "10", "--min-score", "0"
        ).stdout
    )
    # Without --deep only the session link is followed.
    assert {name for h in plain for name in h["channels"] if name.startswith("link:")} == {"link:session"}

    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(linked), env=dict(os.environ)
    )

    async def main() -> Any:
        async with Client(params) as client:
            deep = await client.call_tool(
                "recall", {"query": "how are invoice totals rounded?", "k": 10, "deep": True}
            )
            plain = await client.call_tool("recall", {"query": "nothing like this zzqx"})
            return deep.structured_content, plain.structured_content

    deep_result, empty = anyio.run(main)
    assert deep_result["how"]["deep"] is True
    assert "same-task" in [h["id"] for h in deep_result["hits"]]
    # even an empty answer says whether vectors were used, and why not
    assert empty["hits"] == [] and empty["vectors"] == {
        "used": False,
        "state": "disabled",
        "why": 'embeddings are turned off (embedder = "none")',
    }


# -- fusion that adapts to the query -------------------------------------------------------


def test_weights_are_chosen_per_query_kind(repo: Path, mem: memgit.Memgit) -> None:
    mem.remember("Settings are loaded once at start-up", entity="src/config.py::load_settings")
    cases = {
        "src/config.py::load_settings": ("identifier", 0.5, 0.3, 0.6, 0.225),
        "why do we only load the settings once at start-up?": ("question", 0.5, 0.9, 0.4, 0.45),
        "change load_settings so that it reloads the settings when the file changes": (
            "mixed",
            0.5,
            0.6,
            0.4,
            0.45,
        ),
    }
    for query, (kind, keyword, vector, anchor, title) in cases.items():
        done = cli(repo, "recall", query, "--json", "--min-score", "0")
        assert done.returncode == 0, done.stderr
        how = json.loads(done.stdout)[0]["how"]
        assert how["query_kind"] == kind, query
        assert how["weights"] == {"keyword": keyword, "vector": vector, "anchor": anchor, "title": title}, query
    from memgit.recall import adaptive

    assert adaptive.shape("settings").kind == "words"
    explained = cli(repo, "recall", "src/config.py::load_settings", "--explain")
    assert "query: identifier; weights keyword 0.50  vector 0.30  anchor 0.60" in explained.stdout


# -- long notes by passage -----------------------------------------------------------------


RULES = "\n".join(
    [
        f"- Rule {n}: keep module {n} small and give every public function a docstring and type hints."
        for n in range(1, 9)
    ]
    + [
        "- Never translate EBCDIC by hand: decode mainframe records with the codec table in codecs.py.",
        "- Format with the project formatter before committing.",
    ]
)


def test_a_long_note_is_found_by_the_passage_that_answers(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", EMBEDDER)
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    folder = repo / ".memory"
    write(folder, "code-style", "Code style", RULES, kind="convention")
    for n in range(6):
        write(folder, f"other-{n}", f"Release checklist step {n}", f"Tag the release and publish wheel {n}.")
    commit_all(repo)
    mem.reindex()
    query = "EBCDIC mainframe records decode codec"
    found = mem.index.search(query, limit=10)
    vector = dict(found.channels.vector or ())
    # the whole-note vector never reads that line (cosine 0); its passage does, at half credit
    assert vector.get("code-style", 0.0) > 0.2
    assert found.passages.get("code-style", 0) >= 1
    hits = mem.recall(query, k=3, min_score=0)
    assert hits[0].id == "code-style" and hits[0].passage is not None
    # the memory stays the unit: one hit, not one per passage
    assert ids(hits).count("code-style") == 1
    # an edited note's passages are embedded again, a forgotten one's go with it
    write(
        folder,
        "code-style",
        "Code style",
        RULES.replace(
            "Never translate EBCDIC by hand: decode mainframe records with the codec table in codecs.py.",
            "Prefer small commits.",
        ),
        kind="convention",
    )
    mem.index.sync(embed="all")
    assert dict(mem.index.search(query, limit=10).channels.vector or ()).get("code-style", 0.0) < 0.1
    commit_all(repo)
    mem.forget("code-style", hard=True)
    mem.index.sync(embed="all")
    rows = mem.index.conn.execute(
        "SELECT count(*) FROM passage_vectors WHERE doc NOT IN (SELECT doc FROM memories)"
    ).fetchone()[0]
    assert rows == 0


def test_a_flag_word_does_not_outrank_the_note_titled_with_the_answer(repo: Path, mem: memgit.Memgit) -> None:
    folder = repo / ".memory"
    write(
        folder,
        "extras",
        "Optional extras",
        "Install them with pip install 'pkg[s3,gcs]'; they are not in the default install.",
    )
    write(
        folder,
        "ci",
        "CI setup",
        "The CI job runs uv sync --all-extras then pytest; caching is keyed "
        "by the lock file and the Python version.",
    )
    commit_all(repo)
    hits = mem.recall("how do I install the optional extras?", k=2, min_score=0)
    assert ids(hits)[0] == "extras"


# -- time questions ------------------------------------------------------------------------


@pytest.fixture
def history(repo: Path, mem: memgit.Memgit) -> memgit.Memgit:
    folder = repo / ".memory"
    write(
        folder,
        "db-1",
        "The database is PostgreSQL",
        "We store orders in PostgreSQL.",
        created="2024-01-10T00:00:00+00:00",
    )
    write(
        folder,
        "migration",
        "Migration to SQLite finished",
        "The data moved to SQLite.",
        created="2024-06-01T00:00:00+00:00",
    )
    write(
        folder,
        "db-2",
        "The database is SQLite",
        "We store orders in SQLite since the move.",
        created="2024-06-02T00:00:00+00:00",
        updated="2024-06-03T00:00:00+00:00",
    )
    for n, topic in enumerate(
        ["logging", "linting", "releases", "docs", "fixtures", "tracing", "retries", "locales"]
    ):
        write(
            folder,
            f"other-{n}",
            f"How {topic} work",
            f"Notes on {topic}.",
            created=f"2024-0{n + 1}-15T00:00:00+00:00",
        )
    commit_all(repo)
    return mem


def test_time_questions_use_the_memories_dates(history: memgit.Memgit) -> None:
    now = history.recall("which database do we store orders in now?", k=2, min_score=0)
    assert now.how is not None and now.how.time == "recent"
    assert ids(now)[0] == "db-2"
    first = history.recall("which database did we store orders in originally?", k=2, min_score=0)
    assert first.how is not None and first.how.time == "early"
    assert ids(first)[0] == "db-1"
    before = history.recall("where did we store orders before the migration?", k=3, min_score=0)
    assert before.how is not None and before.how.time == "before"
    assert ids(before).index("db-1") < ids(before).index("db-2")
    from memgit.recall import timing

    assert timing.question("when did we switch databases?") is not None
    assert timing.question("how are configs parsed?") is None


# -- the degraded flag ---------------------------------------------------------------------


def test_every_result_says_whether_vectors_were_used(repo: Path, mem: memgit.Memgit) -> None:
    mem.remember("The cache key includes the locale", entity="src/cache.py")
    done = cli(repo, "recall", "what is in the cache key?", "--json")
    assert json.loads(done.stdout)[0]["vectors"] == {
        "used": False,
        "state": "disabled",
        "why": 'embeddings are turned off (embedder = "none")',
    }
    broken = {"MEMGIT_INDEX_EMBEDDER": "no_such_module_zz:Embedder"}
    done = cli(repo, "recall", "what is in the cache key?", "--json", env=broken)
    vectors = json.loads(done.stdout)[0]["vectors"]
    assert vectors["used"] is False and vectors["state"] == "failed" and "no_such_module_zz" in vectors["why"]
    assert "recall without vectors (failed)" in done.stderr
    # an empty answer says it too (on stderr)
    done = cli(repo, "recall", "zzqx nothing", "--json", env=broken)
    assert json.loads(done.stdout) == [] and "recall without vectors (failed)" in done.stderr


def test_the_hooks_log_says_when_recall_ran_without_vectors(repo: Path, mem: memgit.Memgit) -> None:
    mem.remember("The cache key includes the locale", entity="src/cache.py")
    payload = json.dumps(
        {
            "session_id": "s-1",
            "cwd": str(repo),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "what goes into the cache key?",
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "memgit.hookrun", "claude", "user-prompt"],
        input=payload.encode(),
        cwd=repo,
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "MEMGIT_INDEX_EMBEDDER": "no_such_module_zz:Embedder"},
    )
    assert done.returncode == 0
    log = (repo / ".git" / "memgit" / "hooks.log").read_text()
    assert "claude user-prompt: recall without vectors (failed)" in log
