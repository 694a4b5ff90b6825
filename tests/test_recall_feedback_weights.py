"""Channel weights learned from the clone's own feedback (memgit.recall.learned).

A real repository, real recalls (keywords and anchors: the vector channel is off, as in
most tests) and real `memgit feedback` verdicts: the recall log says which channel found
each memory, the verdicts say which of them were used or wrong; from `MIN_VERDICTS` on,
the channel that found what was used counts more for that kind of query, within bounds.
Nothing changes without feedback, and nothing learned is committed or cloned.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import memgit
from memgit.index.ranking import Weights
from memgit.recall import adaptive, learned

from .conftest import git

QUERY = "billing/client.py retries"


def _store(repo: Path):  # type: ignore[no-untyped-def]
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    anchored = mem.remember("The billing client retries a failed charge three times, then gives up.",
                            title="Charge retries in the billing client",
                            files=["billing/client.py"]).memory.id
    worded = mem.remember("Old retries note: the billing client retries forever (no longer true).",
                          title="Billing client retries forever").memory.id
    return mem, anchored, worded


def _base(mem) -> Weights:  # type: ignore[no-untyped-def]
    c = mem.workspace.config
    return Weights(keyword=c.recall_weight_keyword, vector=c.recall_weight_vector,
                   anchor=c.recall_weight_anchor, title=c.recall_weight_title, method=c.recall_method)


def _rounds(mem, anchored: str, worded: str, n: int) -> None:  # type: ignore[no-untyped-def]
    """`n` recalls, each followed by a verdict on both memories it returned."""
    for _ in range(n):
        found = [h.id for h in mem.recall(QUERY, k=5, min_score=0)]
        assert anchored in found and worded in found
        mem.feedback(anchored, "used")
        mem.feedback(worded, "wrong")


def test_the_recall_log_says_the_query_kind_and_which_channels_found_each_memory(repo: Path) -> None:
    mem, anchored, worded = _store(repo)
    hits = mem.recall(QUERY, k=5, min_score=0)
    assert hits.how is not None and hits.how.query_kind == "identifier"
    line = json.loads((repo / ".git" / "memgit" / "recalls.jsonl").read_text().splitlines()[-1])
    assert line["kind"] == "identifier"
    assert line["channels"][anchored] == ["keyword", "anchor"]
    assert line["channels"][worded] == ["keyword"]


def test_without_enough_feedback_nothing_changes(repo: Path) -> None:
    mem, anchored, worded = _store(repo)
    expected = adaptive.weights_for("identifier", _base(mem))
    hits = mem.recall(QUERY, k=5, min_score=0)
    assert hits.how is not None and dict(hits.how.weights) == {
        "keyword": expected.keyword, "vector": expected.vector, "anchor": expected.anchor,
        "title": expected.title}
    assert not learned.path(repo / ".git").exists()
    assert mem.stats()["learned_weights"] == {}

    # One verdict short of the minimum: counted, not learned.
    _rounds(mem, anchored, worded, learned.MIN_VERDICTS // 2 - 1)
    mem.feedback(anchored, "used")
    summary = mem.stats()["learned_weights"]["identifier"]
    assert summary["verdicts"] == learned.MIN_VERDICTS - 1 and summary["learned"] is False
    assert summary["multipliers"] == {"keyword": 1.0, "vector": 1.0, "anchor": 1.0}
    hits = mem.recall(QUERY, k=5, min_score=0)
    assert hits.how is not None and hits.how.weights["anchor"] == expected.anchor


def test_the_channel_that_found_what_was_used_counts_more_within_bounds(repo: Path) -> None:
    mem, anchored, worded = _store(repo)
    expected = adaptive.weights_for("identifier", _base(mem))
    _rounds(mem, anchored, worded, learned.MIN_VERDICTS // 2)

    # Half the verdicts are "used": keyword found both kinds equally (1.0); anchor found only
    # used ones, (10 + 4 * 0.5) / (10 + 4) / 0.5 = 1.71, held at the upper bound.
    summary = mem.stats()["learned_weights"]["identifier"]
    assert summary["verdicts"] == learned.MIN_VERDICTS and summary["learned"] is True
    assert summary["multipliers"] == {"keyword": 1.0, "vector": 1.0, "anchor": learned.BOUNDS[1]}
    hits = mem.recall(QUERY, k=5, min_score=0)
    assert hits.how is not None
    assert hits.how.weights["anchor"] == pytest.approx(expected.anchor * learned.BOUNDS[1])
    assert hits.how.weights["keyword"] == expected.keyword
    # Another kind of query has no feedback: its weights are as configured.
    words = mem.recall("why do charges fail when the card expired", k=5, min_score=0)
    assert words.how is not None and words.how.query_kind == "question"
    assert words.how.weights["anchor"] == adaptive.weights_for("question", _base(mem)).anchor

    # `memgit stats --json` shows them, as the user runs it.
    done = subprocess.run([sys.executable, "-m", "memgit", "-C", str(repo), "stats", "--json"],
                          capture_output=True, text=True, check=True)
    shown = json.loads(done.stdout)["learned_weights"]["identifier"]
    assert shown["multipliers"]["anchor"] == learned.BOUNDS[1]


def test_what_is_learned_stays_in_this_clone(repo: Path, tmp_path: Path) -> None:
    mem, anchored, worded = _store(repo)
    _rounds(mem, anchored, worded, learned.MIN_VERDICTS // 2)
    assert learned.multipliers(repo / ".git")["identifier"][2] == learned.BOUNDS[1]
    assert git(repo, "status", "--porcelain", "--ignored") == ""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    theirs = memgit.open(clone, warn=lambda message: None)
    hits = theirs.recall(QUERY, k=5, min_score=0)
    assert hits.how is not None
    assert hits.how.weights["anchor"] == adaptive.weights_for("identifier", _base(theirs)).anchor


def test_a_damaged_weights_file_is_ignored(repo: Path) -> None:
    mem, _, _ = _store(repo)
    expected = adaptive.weights_for("identifier", _base(mem))
    target = learned.path(repo / ".git")
    target.parent.mkdir(parents=True, exist_ok=True)
    cases = [("{not json", 1.0),
             (json.dumps({"kinds": {"identifier": {"multipliers": {"anchor": 1e9}}}}), learned.BOUNDS[1]),
             (json.dumps({"kinds": {"identifier": {"multipliers": {"anchor": "many"}}}}), 1.0),
             ("[]", 1.0)]
    for text, multiplier in cases:
        target.write_text(text)
        hits = mem.recall(QUERY, k=5, min_score=0)
        assert hits.how is not None
        # A value out of bounds is held at the bound; one memgit cannot read changes nothing.
        assert hits.how.weights["anchor"] == pytest.approx(expected.anchor * multiplier), text
    assert isinstance(mem.stats()["learned_weights"], dict)


def _when(minutes: float) -> datetime:
    return datetime(2026, 5, 1, 12, 0, tzinfo=UTC) + timedelta(minutes=minutes)


def _stamp(minutes: float) -> str:
    return _when(minutes).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_verdict_counts_for_the_latest_recall_before_it_and_only_within_a_day() -> None:
    recalls = [
        {"ts": _stamp(0), "kind": "question", "ids": ["m1"], "channels": {"m1": ["vector"]}},
        {"ts": _stamp(10), "kind": "identifier", "ids": ["m1"], "channels": {"m1": ["anchor"]}},
        {"ts": _stamp(20), "ids": ["m2"]},  # logged before channels were kept: not counted
        {"ts": _stamp(30), "kind": "words", "ids": ["m3"], "channels": {"m3": ["keyword", "bogus"]}},
    ]
    verdicts = [
        (_when(15), "m1", "used"),  # the identifier recall (10), not the question one (0)
        (_when(5), "m3", "used"),  # before m3 was recalled
        (_when(25), "m2", "wrong"),
        (_when(31 + 24 * 60), "m3", "wrong"),  # more than a day after
        (_when(40), "m3", "ignored"),  # says nothing of a channel
        (_when(45), "m3", "wrong"),
    ]
    counts = learned.learn(recalls, verdicts)
    assert set(counts) == {"identifier", "words"}
    assert counts["identifier"]["channels"]["anchor"] == {"used": 1, "wrong": 0}
    assert counts["words"]["channels"]["keyword"] == {"used": 0, "wrong": 1}
    assert "multipliers" not in counts["identifier"]  # one verdict is too few


def test_multipliers_follow_the_channels_precision_and_stay_within_bounds() -> None:
    recalls, verdicts = [], []
    for n in range(30):  # keyword found all 30; vector the 10 used ones; anchor 10 wrong ones
        found = ["keyword"] + (["vector"] if n < 10 else []) + (["anchor"] if n >= 20 else [])
        recalls.append({"ts": _stamp(n), "kind": "question", "ids": [f"m{n}"], "channels": {f"m{n}": found}})
        verdicts.append((_when(n + 0.5), f"m{n}", "used" if n < 15 else "wrong"))
    entry = learned.learn(recalls, verdicts)["question"]
    assert entry["verdicts"] == 30 and entry["used"] == 15
    values = entry["multipliers"]
    assert values["keyword"] == 1.0
    assert values["vector"] == learned.BOUNDS[1]  # (10 + 2) / 14 / 0.5 = 1.71 -> 1.5
    assert values["anchor"] == learned.BOUNDS[0]  # (0 + 2) / 14 / 0.5 = 0.29 -> 0.5

    # All wrong: no channel did better than another; nothing is learned.
    wrong = [(when, mid, "wrong") for when, mid, _ in verdicts]
    assert "multipliers" not in learned.learn(recalls, wrong)["question"]
