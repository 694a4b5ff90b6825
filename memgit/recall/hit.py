"""`Hit`: one recalled memory, as recall returns it and injection renders it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from memgit.index.index import VectorUse
from memgit.memory.format import Memory

if TYPE_CHECKING:
    from memgit.recall.codecheck import CodeState

#: What `Review.state` says about a memory, compared with the default branch's copy.
REVIEW_STATES = ("reviewed", "changed", "unreviewed")


@dataclass(frozen=True)
class Review:
    """Whether a person has merged a memory (`memgit.recall.provenance`): `state` is
    "reviewed" (the default branch `branch` holds it as recalled), "changed" (it holds
    another version: edited here since) or "unreviewed" (only this branch has it, or no
    commit yet)."""

    state: str
    branch: str


@dataclass(frozen=True)
class How:
    """How a recall ranked: the query's kind and the channel weights it chose
    (`memgit.recall.adaptive`), whether vectors were used and why not, deep mode and the
    time question (`memgit.recall.timing`) if any."""

    query_kind: str
    weights: Mapping[str, float]
    vectors: VectorUse
    deep: bool = False
    time: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"query_kind": self.query_kind, "weights": {k: round(v, 4) for k, v in self.weights.items()},
                "vectors": self.vectors.to_dict(), "deep": self.deep, "time": self.time}


class Hits(list["Hit"]):
    """A recall's hits, best first, with `how` they were ranked (None when nothing ran)."""

    def __init__(self, hits: Iterable["Hit"] = (), how: How | None = None) -> None:
        super().__init__(hits)
        self.how = how


@dataclass(frozen=True)
class Hit:
    """One recalled memory. Hits come sorted by `score` (relative to the query's other
    candidates: see `memgit.index.ranking`); `relevance` is the absolute score the floor applies
    to. `channels` holds each channel's strength (and "exact": 1.0 for a precise id or
    title match); `path` is relative to the repository root — of the project, or of the user
    store when `scope` is "user" (`memgit.recall.scopes`)."""

    id: str
    title: str
    score: float
    relevance: float
    channels: Mapping[str, float]
    path: str
    memory: Memory = field(compare=False)
    scope: str = "project"
    #: Its anchors checked against the work tree (`memgit.recall.codecheck`); None: no code anchors.
    code: "CodeState | None" = field(default=None, compare=False)
    review: Review | None = field(default=None, compare=False)
    how: How | None = field(default=None, compare=False)
    passage: int | None = None  # the passage of a long memory that matched (memgit.index.passages)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the hit's fields, and the memory's front-matter and body."""
        memory = self.memory.to_dict()
        memory["path"] = self.path
        return {
            "id": self.id,
            "title": self.title,
            "score": round(self.score, 4),
            "relevance": round(self.relevance, 4),
            "channels": {name: round(value, 4) for name, value in self.channels.items()},
            "path": self.path,
            "scope": self.scope,
            "memory": memory,
            **self._code_dict(),
            "trust": trust(self),
            **self._how_dict(),
        }

    def _code_dict(self) -> dict[str, Any]:
        return {"code": self.code.to_dict()} if self.code is not None else {}

    def _how_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.how is not None:
            out["vectors"] = self.how.vectors.to_dict()
            out["how"] = self.how.to_dict()
        if self.passage is not None:
            out["passage"] = self.passage
        return out


def trust(hit: Hit) -> dict[str, Any]:
    """Who wrote a hit's memory (its `source`: user, static, or inferred, an agent's) and
    whether it was reviewed ("unknown" with no default branch to compare with)."""
    review = hit.review
    return {"source": hit.memory.source, "review": review.state if review else "unknown",
            "branch": review.branch if review else None}
