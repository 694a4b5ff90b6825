"""Recall rules for questions in words: query-term coverage rewards holding all a query says,
not a part of it (memgit.recall.coverage).

Real repositories and real SQLite; keywords only where vectors are not the point.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memgit
from memgit.index.ranking import Ranked
from memgit.recall import coverage

#: Names one identifier; the rest is the asker's own words.
MIXED = "why does `parse_config` get slow when the cache folder sits on a network drive and times out"


def _coverage_store(repo: Path) -> memgit.Memgit:
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    fillers = [{"id": f"filler-{i}", "title": f"Module {i} notes",
                "body": f"Module {i} formats dates as ISO strings and option values as text."}
               for i in range(12)]
    mem.import_jsonl([json.dumps(m) for m in [
        {"id": "full", "title": "parse_config on network drives",
         "body": "parse_config gets slow when the cache folder sits on a network drive: each stat "
                 "waits on the drive and the call times out. Keep the cache local."},
        {"id": "partial", "title": "Mapped drives",
         "body": "Mapped network paths show up under a drive letter."},
        {"id": "other", "title": "Release checklist", "body": "Tag, build wheels, upload, announce."},
        *fillers,
    ]])
    return mem


def test_coverage_lifts_a_memory_holding_all_the_query_says_over_one_holding_a_part(repo: Path) -> None:
    mem = _coverage_store(repo)
    index = mem.workspace.index
    index.sync(embed="none")
    probe = {r.id: r.channels.get("coverage", 0.0) for r in coverage.lift(
        index, MIXED, [Ranked(mid, 0.1, 0.1, {}) for mid in ("full", "partial", "other")])}
    share = probe["partial"]
    assert probe["full"] == pytest.approx(1.0) and 0.05 < share < 0.3 and probe["other"] == 0.0
    # "other" leads "partial" by less than a linear lift of a fifth of the share would make up
    # (0.2 * share), by more than what holding a part of the query earns now; "full" trails by 0.3.
    gap = 0.18 * share
    ranked = [Ranked("other", 0.5, 0.5, {}), Ranked("partial", 0.5 - gap, 0.5 - gap, {}),
              Ranked("full", 0.2, 0.2, {})]
    lifted = coverage.lift(index, MIXED, ranked)
    assert [r.id for r in lifted] == ["full", "other", "partial"]
    # Only the order changes: relevance stays what the channels said.
    assert {r.id: r.relevance for r in lifted} == {r.id: r.relevance for r in ranked}
    assert all(0.0 <= r.score <= 1.0 for r in lifted)
