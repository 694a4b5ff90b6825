"""Asking memory on someone's behalf: recall with what the session already holds left out and
the recall logged, and the `[inject]` policy applied to it.

The CLI, the agent hooks (`memgit.agents.briefing`) and the MCP server all recall through
`recall` here; fitting hits into a token budget is `memgit.recall.inject.fit`'s alone.
"""

from __future__ import annotations

from typing import Any, Collection, Sequence

from memgit.errors import MemgitError
from memgit.git import cochange, localstate
from memgit.index.workspace import Workspace
from memgit.recall import codecheck, learned, provenance, scopes
from memgit.recall import recall as recall_mod
from memgit.recall.hit import Hit, Hits
from memgit.recall.inject import HEADER, Injection, fit


def recall(ws: Workspace, query: str, k: int | None = None, *, task_id: str | None = None,
           kinds: Sequence[str] | None = None, min_score: float | None = None,
           budget_tokens: int | None = None, include_archived: bool = False, known: Collection[str] = (),
           record: bool = True, at: str | None = None, mark: bool = True, deep: bool = False,
           by_sentence: bool = True) -> Hits:
    """The memories that best answer `query`, best first, leaving out the `known` ones (what
    memgit already gave the session), the user store's merged in (`memgit.recall.scopes`);
    with `record`, logged in `recalls.jsonl`. With `mark`, each project hit says whether it was
    reviewed (`memgit.recall.provenance`). With `at`, from the memories of that commit instead
    (`memgit.recall.asof`: no user store, nothing logged). `deep`: follow the links of the best
    hits (`memgit.recall.deep`; files that change together from this repository's history).
    `by_sentence`: a question of several sentences is also searched sentence by sentence
    (`memgit.recall.sentences`)."""
    if at is not None:
        return Hits(_recall_at(ws, at, query, k, task_id=task_id, kinds=kinds, min_score=min_score,
                               budget_tokens=budget_tokens, include_archived=include_archived, known=known))
    with ws.held():  # the settings looked at once for the whole recall
        return _recall(ws, query, k, task_id=task_id, kinds=kinds, min_score=min_score,
                       budget_tokens=budget_tokens, include_archived=include_archived, known=known,
                       record=record, mark=mark, deep=deep, by_sentence=by_sentence)


def _recall(ws: Workspace, query: str, k: int | None, *, task_id: str | None, kinds: Sequence[str] | None,
            min_score: float | None, budget_tokens: int | None, include_archived: bool,
            known: Collection[str], record: bool, mark: bool, deep: bool, by_sentence: bool) -> Hits:
    config = ws.config
    k = config.recall_k if k is None else k
    skip = set(known)
    found = recall_mod.recall(
        ws.index,
        query,
        k=k + len(skip),
        task_id=task_id,
        kinds=kinds,
        min_score=min_score,
        budget_tokens=budget_tokens,
        include_archived=include_archived,
        config=config,
        path_prefix=ws.path_prefix(),
        deep=deep,
        cochange=(lambda: cochange.partners(repo)) if (repo := ws.repo) is not None else None,
        learned=learned.multipliers(repo.git_dir) if repo is not None else None,
        by_sentence=by_sentence,
    )
    hits = codecheck.annotate(ws, [h for h in found if h.id not in skip][:k])
    theirs = scopes.ask(ws, scopes.share(k), kinds, lambda user, n, kinds: recall(
        user, query, n, task_id=task_id, kinds=kinds, min_score=min_score, budget_tokens=budget_tokens,
        include_archived=include_archived, known=known, record=False, mark=False, deep=deep,
        by_sentence=by_sentence))
    if theirs:
        hits = scopes.merge(hits, theirs, k)
        hits = list(fit(hits, budget_tokens).hits) if budget_tokens is not None else hits
    if record:
        log(ws, query, hits)
    degraded(ws, found)
    return Hits(provenance.mark(ws, hits) if mark else hits, found.how)


def _recall_at(ws: Workspace, rev: str, query: str, k: int | None, **options: Any) -> list[Hit]:
    from memgit.recall import asof  # only `recall --at` reads a commit's memories

    return asof.recall(ws, rev, query, k, **options)


def degraded(ws: Workspace, found: Hits) -> None:
    """Say (on stderr, or in the hooks' log for a hook) when a recall ran without vectors, or
    without them for some candidates, and why; not when vectors are turned off by choice."""
    use = found.how.vectors if found.how is not None else None
    if use is not None and use.state not in ("used", "disabled"):
        ws.warn(f"recall without vectors ({use.state}): {use.detail}" if not use.used
                else f"recall with vectors for some memories only: {use.detail}")


def inject(ws: Workspace, query: str, *, task_id: str | None = None, kinds: Sequence[str] | None = None,
           k: int | None = None, budget: int | None = None, min_score: float | None = None,
           known: Collection[str] = (), record: bool = True, at: str | None = None,
           deep: bool = False, by_sentence: bool = True) -> Injection:
    """What an agent is given for `query`: the `[inject]` policy (k, budget, tokens per
    memory, floor) applied to `recall`; see `Memgit.inject`."""
    c = ws.config
    k = c.inject_k if k is None else k
    budget = c.inject_budget if budget is None else budget
    if budget < 1 or k < 1:
        raise MemgitError("the budget and k must be at least 1")
    floor = c.inject_min_score if min_score is None else min_score
    hits = recall(ws, query, k, task_id=task_id, kinds=kinds, min_score=floor, known=known, record=False,
                  at=at, deep=deep, by_sentence=by_sentence)
    given = fit(hits, budget, c.inject_per_memory, k, header=HEADER)
    if record:
        log(ws, query, given.hits)
    return given


def log(ws: Workspace, query: str, hits: Sequence[Hit]) -> None:
    """Note which memories a recall returned (local state in the git dir; none outside git)."""
    for store, mine in scopes.split(ws, hits):
        if store.repo is not None:
            how = mine[0].how if mine else None
            recall_mod.record_recall(localstate.recalls(store.repo.git_dir), query, [h.id for h in mine],
                                     warn=ws.warn, kind=how.query_kind if how is not None else None,
                                     found={h.id: [c for c in learned.CHANNELS if h.channels.get(c, 0) > 0]
                                            for h in mine})
