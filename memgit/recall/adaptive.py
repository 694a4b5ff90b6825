"""Fusion weights chosen from what the query is.

One fixed weight set is a compromise: the vector channel helps a question asked in words
and hurts a query that names code (an identifier's nearest neighbours in meaning are other
code, not the memory anchored to it). So recall looks at the query first (`shape`):

- "identifier": it names a path, a `path::symbol` or a code identifier and little else
  (at most `FEW_WORDS` plain words): anchors and keywords decide, vectors count half;
- "mixed": anchors and several words: the configured weights as they are;
- "question": no anchor, `FEW_WORDS` words or more: meaning decides, vectors count
  1.5 times, less `LANE_SHIFT` times the share of memories with a title vector (the title
  lane, `memgit.index.titles`, then carries that part of the meaning);
- "words": a few plain words: the configured weights.

The multipliers apply to the configured `[recall] weight_*` (`MULTIPLIERS`), and `Weights`
says which kind chose them (`recall --explain`, `--json`); feedback given in this clone
scales them further, per kind and within bounds (`memgit.recall.learned`). They change the
order only: the relevance floor is measured with the configured weights (`memgit.recall.recall`), so a
question's heavier vectors never carry a loose match in meaning into what an agent is given. A memory without a vector is
still fused over its other channels (`memgit.index.ranking`), so the share of the store
that has vectors needs no weight of its own; long memories are read by passage
(`memgit.index.passages`). Standard library only, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from memgit.index.ranking import Weights
from memgit.memory.anchors import query_anchors

#: Plain words a query may have and still be "identifier" (or must have to be "question").
FEW_WORDS = 3
#: Per query kind: (keyword, vector, anchor, title) multipliers of the configured weights.
MULTIPLIERS: dict[str, tuple[float, float, float, float]] = {
    "identifier": (1.0, 0.5, 1.5, 0.5),
    "mixed": (1.0, 1.0, 1.0, 1.0),
    "question": (1.0, 1.5, 1.0, 1.0),
    "words": (1.0, 1.0, 1.0, 1.0),
}
#: A question's vector multiplier gives up this much times the share of the store that has
#: title vectors (`memgit.index.titles.share`): 1.5 with no title lane, 1.0 with a lane for
#: every memory, where the lane carries the rest of what a question asks in meaning.
#: Measured on the development sets (docs/benchmarks.md): with the lane (weight 0.45) on
#: codemem-pytest, a question's vector multiplier 1.0 / 1.5 gave natural R@5 0.763 / 0.735
#: (at lane weight 0.3, 1.0 / 1.5 / 2.0 gave 0.757 / 0.754 / 0.747); cosqa, whose titles
#: are bare names and get no lane, keeps 1.5, the figure it had before the lane.
LANE_SHIFT = 0.5
KINDS = tuple(MULTIPLIERS)

_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass(frozen=True)
class Shape:
    """What a query is: its `kind` (see the module docstring), its anchors and plain words."""

    kind: str
    anchors: tuple[str, ...]
    words: int


def shape(query: str) -> Shape:
    """The kind of `query` (see the module docstring)."""
    anchors = tuple(query_anchors(query[:2000]))
    rest = query
    for anchor in anchors:
        rest = rest.replace(anchor, " ")
    words = len(_WORD.findall(rest))
    if anchors:
        kind = "identifier" if words <= FEW_WORDS else "mixed"
    else:
        kind = "question" if words >= FEW_WORDS else "words"
    return Shape(kind, anchors, words)


def weights_for(kind: str, base: Weights, title_share: float = 0.0,
                learned: Mapping[str, Sequence[float]] | None = None) -> Weights:
    """The configured weights `base` scaled for a query of `kind`, in a store where
    `title_share` of the embedded memories have a title vector (see `LANE_SHIFT`), then by what
    this clone's feedback taught for that kind (`memgit.recall.learned`; nothing without
    feedback). The title lane is a vector channel: it takes the vector channel's lesson."""
    keyword, vector, anchor, title = MULTIPLIERS.get(kind, (1.0, 1.0, 1.0, 1.0))
    if kind == "question":
        vector -= LANE_SHIFT * min(1.0, max(0.0, title_share))
    taught = (learned or {}).get(kind)
    if taught is not None and len(taught) == 3:
        keyword, vector, anchor = keyword * taught[0], vector * taught[1], anchor * taught[2]
        title *= taught[1]
    return replace(
        base, keyword=base.keyword * keyword, vector=base.vector * vector, anchor=base.anchor * anchor,
        title=base.title * title,
    )
