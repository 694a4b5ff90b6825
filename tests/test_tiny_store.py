"""A store of a few memories, keywords only: a word every memory holds is its topic, not noise.

In a store of three memories that all say "deploy", a session on branch `deploy-fixes` used to
be briefed nothing: beside "fixes", which no memory holds, a word every memory holds weighed
next to nothing in the keyword strength's coverage, and the relevance floor dropped all three.
Below `fts.PRIOR_ROWS` memories the coverage weighs the query's words as if the store had that
many (`memgit.index.fts.keyword_scale`). Real repositories, real SQLite, the SessionStart hook
run as the agent runs it; embedder "none" (conftest).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import memgit
from memgit.index import fts

from .conftest import git

DEPLOY = [
    "Deploy runs from the main branch only",
    "Deploy needs the AWS profile named prod",
    "Deploy is blocked on Fridays by policy",
]
START = {"session_id": "5b2c9a8e-1111-4c2d-9e3f-0123456789ab", "hook_event_name": "SessionStart",
         "source": "startup", "transcript_path": ""}


def remembered(mem: memgit.Memgit, texts: list[str]) -> dict[str, str]:
    return {mem.remember(text).memory.id: text for text in texts}


def titles(mem: memgit.Memgit, query: str) -> list[str]:
    return [h.title for h in mem.recall(query)]


def session_start(repo: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "memgit.hookrun", "claude", "session-start"],
                          input=json.dumps({**START, "cwd": str(repo)}), cwd=repo, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def test_a_session_on_the_stores_topic_is_briefed(repo: Path, mem: memgit.Memgit) -> None:
    remembered(mem, DEPLOY)
    git(repo, "switch", "-q", "-c", "deploy-fixes")
    briefing = session_start(repo)
    assert all(f"### {title}" in briefing for title in DEPLOY), briefing


def test_a_word_in_every_memory_still_matches(repo: Path, mem: memgit.Memgit) -> None:
    remembered(mem, DEPLOY)
    assert sorted(titles(mem, "deploy")) == sorted(DEPLOY)
    assert sorted(titles(mem, "deploy fixes")) == sorted(DEPLOY)
    assert titles(mem, "deploy branch fixes") == [DEPLOY[0]]  # the word that tells them apart decides
    assert titles(mem, "deploy fridays") == [DEPLOY[2]]  # the word that tells them apart decides


def test_off_topic_questions_still_get_nothing(repo: Path, mem: memgit.Memgit) -> None:
    remembered(mem, DEPLOY)
    for query in ("kubernetes helm chart", "what is the capital of france", "fixes"):
        assert titles(mem, query) == [], query
    assert titles(mem, "the policy") == [DEPLOY[2]]  # a stopword held by two of three weighs nothing
    git(repo, "switch", "-q", "-c", "docs-typo")
    assert session_start(repo) == ""


def test_one_and_two_memories(repo: Path, mem: memgit.Memgit) -> None:
    remembered(mem, DEPLOY[:1])
    assert titles(mem, "deploy") == DEPLOY[:1]
    assert titles(mem, "deploy fixes") == DEPLOY[:1]
    remembered(mem, DEPLOY[1:2])
    assert sorted(titles(mem, "deploy fixes")) == sorted(DEPLOY[:2])
    assert titles(mem, "main branch deploy")[0] == DEPLOY[0]


def test_archived_memories_count_but_are_not_recalled(repo: Path, mem: memgit.Memgit) -> None:
    ids = list(remembered(mem, DEPLOY))
    mem.forget(ids[2])
    assert sorted(titles(mem, "deploy fixes")) == sorted(DEPLOY[:2])
    assert next(h.title for h in mem.recall("deploy fridays", include_archived=True)) == DEPLOY[2]


def test_a_store_of_prior_rows_ranks_as_fts5_does(repo: Path, mem: memgit.Memgit) -> None:
    # At PRIOR_ROWS memories and more FTS5's idf is used as it is: a word in every memory of
    # a store that size is not what tells them apart.
    texts = [f"Deploy note {i}: the step {i} of the release" for i in range(fts.PRIOR_ROWS)]
    remembered(mem, texts)
    assert titles(mem, "deploy fixes") == []
    assert titles(mem, "deploy step 7")[0].startswith("Deploy note 7:")
