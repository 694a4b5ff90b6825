"""Pure fusion of channel candidates (keyword, vector, anchor, title) into ranked, scored hits.

Two numbers per memory, for two different jobs:

- `relevance` answers "is this relevant at all?": the weighted mean of the memory's
  channel strengths, each already absolute in [0, 1] (see the channel contract in
  docs/architecture.md), over the channels available *for that memory*. A relevance floor
  applies to it and means the same thing for every query.
- `score` answers "which first?", and the list is sorted by it: by default ("minmax") a
  convex combination of each channel's strengths min-max normalised within this query's
  candidates — so a channel's best candidate counts fully whatever the scale of its
  strengths (Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval", 2022,
  found it beats RRF; on memgit's development sets it did too: see benchmarks/quality.py);
  or weighted reciprocal-rank fusion ("rrf") scaled so that first in every channel is 1;
  or the relevance itself ("weighted"). It is relative to this query's candidates.

A channel is available for a memory when it ran (not None) and, for the vector and title
channels, when the memory has that vector: a memory written since the last embedding (e.g.
brought by a `git pull`) is unknown to them, not a poor match, so both numbers are taken
over its other channels (the weights renormalised) instead of counting its vector as 0.

No I/O, standard library only, so it can be tested exhaustively.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memgit.errors import MemgitError

__all__ = ["CHANNELS", "Channels", "Ranked", "Weights", "apply_floor", "fuse"]

CHANNELS = ("keyword", "vector", "anchor", "title")
METHODS = ("minmax", "rrf", "weighted")

Candidates = Sequence[tuple[str, float]]


@dataclass(frozen=True)
class Weights:
    """How much each channel counts, and how their orders are fused (from the config).

    Vector 0.6 and anchor 0.4 are the starting design (semantic 0.6, hard information 0.4); keyword
    0.5 and "minmax" were chosen on a coarse grid over the development sets (docs/benchmarks.md),
    and title 0.45 (the title lane, `memgit.index.titles`) among 0.3 / 0.45 / 0.6 on them.
    """

    keyword: float = 0.5
    vector: float = 0.6
    anchor: float = 0.4
    method: str = "minmax"  # "minmax" | "rrf" | "weighted"
    rrf_k: int = 60
    title: float = 0.45

    def __post_init__(self) -> None:
        # Weights come from a hand-edited config file: say which setting is wrong.
        for name in CHANNELS:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise MemgitError(f"recall weight_{name} must be a number >= 0, not {value!r}")
        if self.method not in METHODS:
            raise MemgitError(f"recall method must be one of {', '.join(METHODS)}, not {self.method!r}")
        if not isinstance(self.rrf_k, int) or self.rrf_k < 0:
            raise MemgitError(f"rrf_k must be a whole number >= 0, not {self.rrf_k!r}")


@dataclass(frozen=True)
class Channels:
    """Each channel's candidates `(memory_id, strength)`, best first, strength in [0, 1].

    None means the channel is unavailable (vectors off): it is left out of the scores.
    An empty sequence means it ran and found nothing: it still counts.
    `vectorless` are candidates that have no vector (not embedded yet): the vector and title
    channels are unavailable for them alone (the vector channel alone when the embedder gave
    none usable for the memory's text but one for its title); `titleless`, candidates with a vector but no
    title vector yet (`memgit.index.titles`): the title channel is unavailable for them.
    """

    keyword: Candidates | None = ()
    vector: Candidates | None = ()
    anchor: Candidates | None = ()
    vectorless: frozenset[str] = frozenset()
    title: Candidates | None = None
    titleless: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Ranked:
    """One fused hit: its id, its `score` in [0, 1] (what the list is sorted by, relative
    to the query's candidates), its absolute `relevance` in [0, 1] (what the floor applies
    to), and its strength per channel."""

    id: str
    score: float
    relevance: float
    channels: Mapping[str, float] = field(default_factory=dict)  # only where it appeared


def fuse(ch: Channels, w: Weights = Weights(), boosts: Mapping[str, float] | None = None) -> list[Ranked]:
    """Fuse channel candidates into one ranked list, sorted by `score`, best first.

    For each memory, over the channels available for it (see the module docstring; absent
    from an available channel counts as 0), with W the sum of their weights:

    - `relevance` = Σ weight × strength / W, times its boost, clipped to [0, 1];
    - `score`, by method: "weighted", the relevance; "rrf", Σ weight / (rrf_k + rank) /
      (W / (rrf_k + 1)); "minmax", Σ weight × (strength − lowest) / (highest − lowest) / W
      over each channel's candidates (1 when they are all equal); times the boost, clipped
      to [0, 1].

    Sorted by score, then relevance, then id (before clipping, so a boost above 1 still
    orders). Ranks come from the strengths (equal strengths share a rank), so the order in
    which equal candidates arrive never matters.

    `boosts` are per-id multipliers (>= 0): e.g. a precise title match, or 0.7 for a memory
    from another task when recall had to widen.
    """
    strengths: dict[str, dict[str, float]] = {}
    weighted: dict[str, float] = {}
    rrf: dict[str, float] = {}
    convex: dict[str, float] = {}
    present: list[tuple[str, float]] = []  # (name, weight) of the channels that ran
    k = w.rrf_k
    for name in CHANNELS:
        candidates: Candidates | None = getattr(ch, name)
        if candidates is None:
            continue  # unavailable: neither in the scores nor in their normaliser
        weight = float(getattr(w, name))
        present.append((name, weight))
        ranked = _ranked(candidates)
        high = ranked[0][1] if ranked else 0.0
        low = ranked[-1][1] if ranked else 0.0
        for memory_id, strength, rank in ranked:
            spread = (strength - low) / (high - low) if high > low else 1.0
            if memory_id not in strengths:
                strengths[memory_id] = {}
                weighted[memory_id] = rrf[memory_id] = convex[memory_id] = 0.0
            strengths[memory_id][name] = strength
            weighted[memory_id] += weight * strength
            rrf[memory_id] += weight / (k + rank)
            convex[memory_id] += weight * spread

    weight_of = dict(present)
    total_weight = sum(weight_of.values())
    keyed: list[tuple[float, float, str]] = []
    for memory_id in strengths:
        boost = _boost(boosts, memory_id)
        # Found by a vector channel means it has that vector, whatever `vectorless` says.
        mine = strengths[memory_id]
        unknown: tuple[str, ...] = ()
        if memory_id in ch.vectorless and "vector" not in mine and "title" not in mine:
            unknown = ("vector", "title")
        elif memory_id in ch.vectorless and "vector" not in mine:
            unknown = ("vector",)  # the embedder gave none usable for its text, one for its title
        elif memory_id in ch.titleless and "title" not in mine:
            unknown = ("title",)
        total = sum(w for name, w in weight_of.items() if name not in unknown) if unknown else total_weight
        if total <= 0:
            keyed.append((-0.0, -0.0, memory_id))
            continue
        relevance = weighted[memory_id] / total * boost  # unclipped: orders boosts > 1
        if w.method == "rrf":
            order = rrf[memory_id] / (total / (k + 1)) * boost
        elif w.method == "minmax":
            order = convex[memory_id] / total * boost
        else:
            order = relevance
        keyed.append((-order, -relevance, memory_id))
    keyed.sort()
    return [
        Ranked(memory_id, _unit(-order), _unit(-relevance), strengths[memory_id])
        for order, relevance, memory_id in keyed
    ]


def apply_floor(ranked: Sequence[Ranked], min_score: float) -> list[Ranked]:
    """The hits whose relevance reaches `min_score`, in the same order."""
    return [hit for hit in ranked if hit.relevance >= min_score]


def _ranked(candidates: Candidates) -> list[tuple[str, float, int]]:
    """Each id once (its best strength), with its competition rank (1, 2, 2, 4) by strength."""
    best: dict[str, float] = {}
    for memory_id, strength in candidates:
        # NaN or out-of-range strengths from a channel must not poison the fusion.
        if not 0.0 <= strength <= 1.0:
            strength = 1.0 if strength > 1.0 else 0.0
        if memory_id not in best or strength > best[memory_id]:
            best[memory_id] = strength
    ordered = sorted(best.items(), key=lambda item: -item[1])
    ranked: list[tuple[str, float, int]] = []
    previous = math.inf
    rank = 0
    for position, (memory_id, strength) in enumerate(ordered, start=1):
        if strength < previous:
            rank, previous = position, strength
        ranked.append((memory_id, strength, rank))
    return ranked


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))


def _boost(boosts: Mapping[str, float] | None, memory_id: str) -> float:
    if not boosts:
        return 1.0
    factor = boosts.get(memory_id, 1.0)
    if not math.isfinite(factor) or factor < 0:
        raise MemgitError(f"boost for {memory_id!r} must be a number >= 0, not {factor!r}")
    return factor
