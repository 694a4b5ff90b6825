"""Pure fusion of channel candidates (keyword, vector, anchor) into ranked, scored hits.

Two numbers per memory, for two different jobs:

- `score` answers "is this relevant at all?": the weighted mean of the memory's channel
  strengths, each already absolute in [0, 1] (see the channel contract in
  docs/architecture.md), over the channels that were available. A relevance floor applies
  to it and means the same thing for every query.
- the *order* answers "which first?": by default ("minmax") a convex combination of each
  channel's strengths min-max normalised within this query's candidates — so a channel's
  best candidate counts fully whatever the scale of its strengths (Bruch et al., "An
  Analysis of Fusion Functions for Hybrid Retrieval", 2022, found it beats RRF; on memgit's
  development sets it did too: see benchmarks/quality.py); or weighted reciprocal-rank
  fusion ("rrf"); or the score itself ("weighted").

No I/O, standard library only, so it can be tested exhaustively.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memgit.errors import MemgitError

__all__ = ["CHANNELS", "Channels", "Ranked", "Weights", "apply_floor", "fuse"]

CHANNELS = ("keyword", "vector", "anchor")
METHODS = ("minmax", "rrf", "weighted")

Candidates = Sequence[tuple[str, float]]


@dataclass(frozen=True)
class Weights:
    """How much each channel counts, and how their orders are fused (from the config).

    Vector 0.6 and anchor 0.4 follow the brief (semantic 0.6, hard information 0.4); keyword
    0.5 and "minmax" were chosen on a coarse grid over the development sets (README).
    """

    keyword: float = 0.5
    vector: float = 0.6
    anchor: float = 0.4
    method: str = "minmax"  # "minmax" | "rrf" | "weighted"
    rrf_k: int = 60

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
    """

    keyword: Candidates | None = ()
    vector: Candidates | None = ()
    anchor: Candidates | None = ()


@dataclass(frozen=True)
class Ranked:
    """One fused hit: its id, absolute score in [0, 1], and its strength per channel."""

    id: str
    score: float
    channels: Mapping[str, float] = field(default_factory=dict)  # only where it appeared


def fuse(ch: Channels, w: Weights = Weights(), boosts: Mapping[str, float] | None = None) -> list[Ranked]:
    """Fuse channel candidates into one ranked list, best first.

    `score` is the weighted mean of a memory's strengths over the available channels
    (absent from an available channel counts as 0), times its boost, clipped to [0, 1].
    Order: with "weighted", by boosted score; with "rrf", by Σ weight / (rrf_k + rank) times
    the boost; with "minmax", by Σ weight × (strength − lowest) / (highest − lowest) over each
    channel's candidates (1 when they are all equal) times the boost; then score, then id. Ranks come from the strengths (equal strengths share a
    rank), so the order in which equal candidates arrive never matters.

    `boosts` are per-id multipliers (>= 0): e.g. a precise title match, or 0.7 for a memory
    from another task when recall had to widen.
    """
    strengths: dict[str, dict[str, float]] = {}
    weighted: dict[str, float] = {}
    rrf: dict[str, float] = {}
    convex: dict[str, float] = {}
    total_weight = 0.0
    k = w.rrf_k
    for name in CHANNELS:
        candidates: Candidates | None = getattr(ch, name)
        if candidates is None:
            continue  # unavailable: neither in the scores nor in their normaliser
        weight = float(getattr(w, name))
        total_weight += weight
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

    order = {"rrf": rrf, "minmax": convex}.get(w.method)
    keyed: list[tuple[float, float, str]] = []
    for memory_id, total in weighted.items():
        boost = _boost(boosts, memory_id)
        boosted = (total / total_weight if total_weight > 0 else 0.0) * boost  # unclipped: orders boosts > 1
        keyed.append((-(order[memory_id] * boost) if order is not None else -boosted, -boosted, memory_id))
    keyed.sort()
    return [
        Ranked(memory_id, min(1.0, max(0.0, -negative)), strengths[memory_id])
        for _, negative, memory_id in keyed
    ]


def apply_floor(ranked: Sequence[Ranked], min_score: float) -> list[Ranked]:
    """The hits whose score reaches `min_score`, in the same order."""
    return [hit for hit in ranked if hit.score >= min_score]


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


def _boost(boosts: Mapping[str, float] | None, memory_id: str) -> float:
    if not boosts:
        return 1.0
    factor = boosts.get(memory_id, 1.0)
    if not math.isfinite(factor) or factor < 0:
        raise MemgitError(f"boost for {memory_id!r} must be a number >= 0, not {factor!r}")
    return factor
