"""Duplicate memories: two notes that state the same thing in different words.

Cosine similarity alone cannot tell a duplicate from a related note (two different fixes
of one file share most of their words), so a pair is judged on several signals:

- lexical: cosine of log-tf x idf vectors over the words of title and body;
- meaning: cosine of the memories' MiniLM vectors, when the index has both;
- anchors: the idf-weighted share of identifiers, paths and `path::symbol` they share;
- entity: whether both are about the same file;
- exclusivity: a duplicate is normally the *one* note closest to its twin. A pair is kept
  only when each memory is the other's best candidate (mutual best), and each memory
  joins at most one pair per run. A related note usually has several close neighbours
  that split its similarity; a restated fact has one.

Candidates are never all pairs: an inverted index of the words (very common ones left
out) gives each memory its nearest lexical neighbours, and memories sharing a rare
anchor are added; only those pairs are scored. Ids and creation times are not used.

Measured on a labelled set of 923 real memories (pytest commit messages and the
changelog fragments of the same changes, with hard negatives about the same files):
see `benchmarks/reflect.py` and docs/benchmarks.md for the figures and how the few thresholds
below were chosen.
"""

from __future__ import annotations

import heapq
import math
import operator
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence

from memgit.memory import against, distinct
from memgit.memory.anchors import extract_anchors, normalize_anchor
from memgit.memory.format import Memory
from memgit.reflect.opposites import opposed

#: Neighbours kept per memory from the word index.
NEIGHBOURS = 8
#: Words held by more than this share of memories are left out of candidate search
#: (they add little to a cosine and most of the cost).
COMMON_SHARE = 0.08
#: ...and so are words held by more memories than this, whatever the store's size: at 10k
#: memories a word in 8 % of them makes 800-long posting lists and most of the cost.
COMMON_MAX = 50
#: Anchors held by more memories than this do not make candidates.
ANCHOR_GROUP_MAX = 40

#: The pair's similarity: word cosine and meaning cosine. Shared anchors make candidates
#: and evidence but did not help the decision (same-file notes share them whether or not
#: they are duplicates). Chosen on the dupes-pytest set among a handful of settings.
WEIGHT_LEXICAL = 0.6
WEIGHT_VECTOR = 0.4
#: A pair is a duplicate when similarity + margin reaches the threshold, the margin being
#: how far the pair is ahead of each memory's next closest note (the smaller of the two).
THRESHOLD = 0.55
#: The same without vectors (word cosine alone).
THRESHOLD_WORDS_ONLY = 0.55

_REVERT = re.compile(r"\brevert(?:s|ed|ing)?\b", re.IGNORECASE)

_WORD = re.compile(r"[^\W_]+(?:_[^\W_]+)*", re.UNICODE)
_STOP = frozenset(
    "a an and are as at be been but by can could do does for from had has have if in into is it its "
    "not of on or so than that the their them then there these this those to was we were when which "
    "while will with would you your now also use used using only just more should must may after "
    "before about all any some such no yes one two new same other been being out up over instead".split()
)


@dataclass(frozen=True)
class Pair:
    """Two memories judged to be duplicates, with the signals that said so."""

    a: str
    b: str
    score: float
    lexical: float
    vector: float | None
    anchors: float
    shared_anchors: tuple[str, ...]
    same_entity: bool
    margin: float = 0.0

    def evidence(self) -> str:
        parts = [f"score {self.score:.2f}", f"word cosine {self.lexical:.2f}"]
        if self.vector is not None:
            parts.append(f"meaning cosine {self.vector:.2f}")
        if self.shared_anchors:
            parts.append("shared anchors " + ", ".join(f"`{a}`" for a in self.shared_anchors[:5]))
        if self.same_entity:
            parts.append("same entity file")
        parts.append(f"each is the other's closest memory (by {self.margin:.2f} over the next)")
        return "; ".join(parts)


def words(text: str) -> list[str]:
    out = []
    for word in _WORD.findall(text.casefold()):
        if len(word) < 2 or word in _STOP or word.isdigit():
            continue
        out.append(_stem(word))
    return out


def _stem(word: str) -> str:
    """A light suffix strip, so "Fixed the errors" and "fix error" share their words."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and word.isalpha():
            return word[: -len(suffix)]
    return word


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def _entity_file(memory: Memory) -> str:
    return memory.entity.split("::", 1)[0].strip().lower()


class Detector:
    """Duplicate detection over one set of memories (active ones, normally)."""

    def __init__(
        self,
        memories: Sequence[Memory],
        vectors: Mapping[str, Sequence[float]] | None = None,
        *,
        threshold: float | None = None,
        different: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.memories = {m.id: m for m in memories}
        #: Pairs a person said are different beyond the memories' own `distinct` (a revert).
        self.different = {frozenset(pair) for pair in different}
        #: Pairs left out of `duplicates()` and why, for reflect's notes.
        self.vetoed: list[tuple[Pair, str]] = []
        self.vectors = {mid: _unit(v) for mid, v in (vectors or {}).items() if mid in self.memories}
        if threshold is None:
            threshold = THRESHOLD if self.vectors else THRESHOLD_WORDS_ONLY
        self.threshold = threshold
        self._terms: dict[str, dict[str, float]] = {}
        self._anchors: dict[str, dict[str, float]] = {}
        self._scored: list[Pair] | None = None
        self._build()

    # -- representation ------------------------------------------------------------------

    def _build(self) -> None:
        n = max(1, len(self.memories))
        tf: dict[str, dict[str, int]] = {}
        df: dict[str, int] = defaultdict(int)
        anchor_sets: dict[str, set[str]] = {}
        adf: dict[str, int] = defaultdict(int)
        for mid, m in self.memories.items():
            counts: dict[str, int] = defaultdict(int)
            for word in words(m.title):
                counts[word] += 2  # the title says what the note is about
            for word in words(m.body):
                counts[word] += 1
            tf[mid] = counts
            for word in counts:
                df[word] += 1
            # Explicit anchors only here (extracting them from every text costs more than
            # the rest of the detector); the text's anchors are read for the evidence.
            keys = {normalize_anchor(f) for f in (*m.files, *m.symbols, m.entity) if f}
            keys.discard("")
            anchor_sets[mid] = keys
            for key in keys:
                adf[key] += 1
        self.df = df
        self.n = n
        for mid, counts in tf.items():
            vec = {w: (1.0 + math.log(c)) * math.log((n + 1) / df[w]) for w, c in counts.items()}
            norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
            self._terms[mid] = {w: v / norm for w, v in vec.items()}
        for mid, keys in anchor_sets.items():
            self._anchors[mid] = {k: math.log((n + 1) / adf[k]) for k in keys}
        self.adf = adf

    # -- signals ---------------------------------------------------------------------------

    def lexical(self, a: str, b: str) -> float:
        u, v = self._terms[a], self._terms[b]
        if len(u) > len(v):
            u, v = v, u
        return sum(x * v.get(w, 0.0) for w, x in u.items())

    def vector(self, a: str, b: str) -> float | None:
        u, v = self.vectors.get(a), self.vectors.get(b)
        if u is None or v is None:
            return None
        return max(0.0, sum(map(operator.mul, u, v)))

    def anchors(self, a: str, b: str) -> tuple[float, tuple[str, ...]]:
        """The idf-weighted share of anchors (explicit and in the text) the two share."""
        ma, mb = self.memories[a], self.memories[b]
        u = {normalize_anchor(x) for x in extract_anchors(ma.title, ma.body, *ma.files, *ma.symbols)}
        v = {normalize_anchor(x) for x in extract_anchors(mb.title, mb.body, *mb.files, *mb.symbols)}
        u.discard("")
        v.discard("")
        shared = u & v
        if not shared:
            return 0.0, ()

        def weight(key: str) -> float:
            return math.log((self.n + 1) / max(1, self.adf.get(key, 1)))

        smaller = min(sum(map(weight, u)), sum(map(weight, v))) or 1.0
        ordered = tuple(sorted(shared, key=lambda k: (-weight(k), k)))
        return min(1.0, sum(map(weight, shared)) / smaller), ordered

    def score(self, a: str, b: str) -> Pair:
        """The pair's similarity (anchors are filled in by `explain`)."""
        lexical = self.lexical(a, b)
        vector = self.vector(a, b)
        total = lexical if vector is None else WEIGHT_LEXICAL * lexical + WEIGHT_VECTOR * vector
        return Pair(a, b, total, lexical, vector, 0.0, (), False)

    def explain(self, pair: Pair) -> Pair:
        """The pair with its shared anchors and whether it is about one entity file."""
        anchors, shared = self.anchors(pair.a, pair.b)
        ma, mb = self.memories[pair.a], self.memories[pair.b]
        same_entity = bool(_entity_file(ma)) and _entity_file(ma) == _entity_file(mb)
        return replace(pair, anchors=anchors, shared_anchors=shared, same_entity=same_entity)

    # -- candidates --------------------------------------------------------------------------

    def candidates(self, ids: Iterable[str] | None = None) -> set[tuple[str, str]]:
        """Pairs worth scoring: each memory's nearest lexical neighbours, and memories
        sharing a rare anchor. `ids` limits the left side (e.g. to new memories)."""
        common = max(3, min(int(COMMON_SHARE * self.n), COMMON_MAX))
        postings: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for mid, vec in self._terms.items():
            for w, x in vec.items():
                if self.df[w] <= common:
                    postings[w].append((mid, x))
        pairs: set[tuple[str, str]] = set()
        left = list(self.memories) if ids is None else [i for i in ids if i in self.memories]
        for mid in left:
            acc: dict[str, float] = defaultdict(float)
            for w, x in self._terms[mid].items():
                if self.df[w] <= common:
                    for other, y in postings[w]:
                        if other != mid:
                            acc[other] += x * y
            for other, _ in heapq.nsmallest(NEIGHBOURS, acc.items(), key=lambda kv: (-kv[1], kv[0])):
                pairs.add((min(mid, other), max(mid, other)))
        groups: dict[str, list[str]] = defaultdict(list)
        for mid, keys in self._anchors.items():
            for key in keys:
                if 1 < self.adf[key] <= ANCHOR_GROUP_MAX:
                    groups[key].append(mid)
        wanted = set(left)
        for members in groups.values():
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    if a in wanted or b in wanted:
                        pairs.add((min(a, b), max(a, b)))
        return pairs

    # -- decision ----------------------------------------------------------------------------

    def scored(self, ids: Iterable[str] | None = None) -> list[Pair]:
        """Every candidate pair with its similarity, best first. A revert and what it
        reverts are not duplicates (that is a supersession), so such pairs are left out."""
        if ids is None and self._scored is not None:
            return self._scored
        out = [self.score(a, b) for a, b in self.candidates(ids) if not self.reverts(a, b)]
        out.sort(key=lambda p: (-p.score, p.a, p.b))
        if ids is None:
            self._scored = out
        return out

    def veto(self, a: str, b: str) -> str | None:
        """Why two memories may not be merged however alike they read: a person said they are
        different (`distinct`, or a revert of the merge), or they say opposite things."""
        ma, mb = self.memories[a], self.memories[b]
        if distinct.said(ma, mb) or frozenset((a, b)) in self.different:
            return "a person said they are different"
        return opposed(ma, mb) or _written_apart(ma, mb)

    def reverts(self, a: str, b: str) -> bool:
        """One of the two says it reverts something and the other does not."""
        ma, mb = self.memories[a], self.memories[b]
        return bool(_REVERT.search(ma.title)) != bool(_REVERT.search(mb.title))

    def duplicates(self, ids: Iterable[str] | None = None, *, threshold: float | None = None) -> list[Pair]:
        """Pairs where each memory is the other's closest and similarity + margin reaches
        the threshold; each memory in at most one pair. Best first."""
        limit = self.threshold if threshold is None else threshold
        scored = self.scored(ids)
        first: dict[str, float] = {}
        second: dict[str, float] = {}
        for p in scored:  # best first: the first score seen for a memory is its best
            for mid in (p.a, p.b):
                if mid not in first:
                    first[mid] = p.score
                elif mid not in second:
                    second[mid] = p.score
        taken: set[str] = set()
        out: list[Pair] = []
        self.vetoed = []
        for p in scored:
            if p.score < first[p.a] or p.score < first[p.b]:
                continue  # one of them has a closer note: this pair is merely related
            margin = min(p.score - second.get(p.a, 0.0), p.score - second.get(p.b, 0.0))
            if p.score + margin < limit or p.a in taken or p.b in taken:
                continue
            # A pair that must not merge still counts as each one's closest note above, so a
            # "no" or an opposite removes this one merge and changes no other.
            why = self.veto(p.a, p.b)
            if why is not None:
                self.vetoed.append((p, why))
                continue
            taken.update((p.a, p.b))
            out.append(self.explain(replace(p, margin=margin)))
        out.sort(key=lambda p: (-(p.score + p.margin), p.a, p.b))
        return out


# -- merging ---------------------------------------------------------------------------------

_SOURCE_RANK = {"user": 3, "static": 2, "inferred": 1}
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _written_apart(a: Memory, b: Memory) -> str | None:
    """Two memories written against different versions of the same code: each was true of
    its own version, and a merge would give the kept one the other's outdated sentences."""
    mine, theirs = against.recorded(a) or {}, against.recorded(b) or {}
    for anchor in sorted(set(mine) & set(theirs)):
        one, other = mine[anchor], theirs[anchor]
        if one != other and against.UNKNOWN not in (one, other) and "-" not in (one, other):
            return f"written against different versions of `{anchor}`: check which one holds now"
    return None


def rank(memory: Memory) -> tuple[int, float, str]:
    """Which of two memories to trust: source (user > static > inferred), confidence, newer."""
    return (_SOURCE_RANK.get(memory.source, 0), memory.confidence, memory.updated or memory.created or "")


#: Kinds from the strongest: what the team committed to (a decision, a convention, a stated
#: preference) binds more than what was learnt (a lesson, a skill), which binds more than a
#: description (a fact, a summary); a checkpoint is a task's passing state. A merge keeps the
#: stronger of the two, so merging a restated decision into a fact does not demote it. Kinds
#: not listed (a project's own) rank with facts.
KIND_STRENGTH = ("decision", "convention", "preference", "lesson", "skill", "fact", "summary", "checkpoint")


def stronger_kind(a: str, b: str) -> str:
    """The stronger of two kinds (`KIND_STRENGTH`); `a` on a tie."""
    def strength(kind: str) -> int:
        order = KIND_STRENGTH.index(kind if kind in KIND_STRENGTH else "fact")
        return len(KIND_STRENGTH) - order

    return b if strength(b) > strength(a) else a


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def unique_sentences(base: Memory, other: Memory, *, covered: float = 0.75) -> list[str]:
    """Sentences of `other` that `base` does not already say: those with less than
    `covered` of their words in `base`."""
    known = set(words(f"{base.title}\n{base.body}"))
    out = []
    for sentence in sentences(f"{other.title}\n{other.body}"):
        mine = set(words(sentence))
        if not mine or len(mine & known) / len(mine) >= covered:
            continue
        out.append(sentence)
        known |= mine
    return out


def merge(base: Memory, other: Memory, *, updated: str) -> Memory:
    """`base` with what only `other` says added: its unique sentences (as a paragraph),
    files, symbols, tags and `distinct` ids, the stronger kind of the two, and `other` (and
    what it superseded) in `supersedes`."""
    extra = unique_sentences(base, other)
    body = base.body.rstrip()
    if extra:
        said = " ".join(s if s[-1] in ".!?:;" else s + "." for s in extra)
        body = (body + "\n\n" if body else "") + said

    def union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*a, *b)))

    supersedes = union(base.supersedes, (other.id, *other.supersedes))
    kept_extra = dict(base.extra)
    different = [i for i in union(tuple(distinct.listed(base.extra.get(distinct.FIELD))),
                                  tuple(distinct.listed(other.extra.get(distinct.FIELD))))
                 if i not in (base.id, other.id)]
    if different:
        kept_extra[distinct.FIELD] = different
    else:
        kept_extra.pop(distinct.FIELD, None)
    return replace(
        base,
        body=body,
        kind=stronger_kind(base.kind, other.kind),
        extra=kept_extra,
        files=union(base.files, other.files),
        symbols=union(base.symbols, other.symbols),
        tags=union(base.tags, other.tags),
        supersedes=tuple(s for s in supersedes if s != base.id),
        updated=updated,
    )
