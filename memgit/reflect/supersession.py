"""Supersessions: a newer memory that replaces an older one about the same thing.

Four patterns are recognised. A revert is found by its title; the other three only between
two memories about the same entity file that are each other's closest memory:

- a revert: one title is `Revert "<the other's title>"` (the revert wins);
- the code moved on: the two were written against different versions of the same code
  (`written_against`, `memgit.memory.against`) and the work tree's code is the version one of
  them records, not the other's: that one holds now and wins, whatever their dates (a change
  undone makes the older note true again). When neither matches, nothing is proposed here
  (`memgit doubts` and recall's code check say both changed);
- a change: the newer one says the thing changed ("now", "no longer", "instead of",
  "replaced by", "from now on", "switched to", "deprecated");
- a contradiction: one says "always"/"must" and the other "never"/"do not" about it.

Who wins: the higher source (user > static > inferred), then the higher confidence;
on a tie the newer memory. When the newer one claims the change but the older one
outranks it, or the two cannot be ordered in time, reflect cannot tell which is right:
the pair is reported for a person and nothing is changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memgit.memory import against
from memgit.memory.format import Memory
from memgit.recall.usage import parse_time
from memgit.reflect.duplicates import Detector, rank

_REVERT_OF = re.compile(
    r'^\s*revert(?:s|ed)?\s*[:"\'“]+\s*(.+?)\s*["\'”]*\s*(?:\(#\d+\))?\s*$', re.IGNORECASE
)
_CHANGE = re.compile(
    r"\b(now|no longer|instead of|replaced by|from now on|switched to|changed to|is deprecated|"
    r"are deprecated|not anymore|any more)\b",
    re.IGNORECASE,
)
_ALWAYS = re.compile(r"\b(always|must)\b", re.IGNORECASE)
_NEVER = re.compile(r"\b(never|do not|don't|must not|mustn't)\b", re.IGNORECASE)
#: Similarity (word and meaning) two memories need to be compared at all; they must also be
#: each other's closest memory and be about the same entity file. Changelog-style notes say
#: "now" all the time: on 923 pytest notes a looser rule (0.35, any neighbour) archived
#: 100+ memories that were merely related.
MIN_SIMILARITY = 0.5


@dataclass(frozen=True)
class Found:
    """A newer/older pair; `winner` is the id to keep, None when a person must decide."""

    newer: str
    older: str
    winner: str | None
    reason: str
    evidence: tuple[str, ...]


def _norm(title: str) -> str:
    return " ".join(re.sub(r"\(#\d+\)", "", title).casefold().strip(" .\"'").split())


def find(memories: Sequence[Memory], detector: Detector,
         code_now: Callable[[str], str | None] | None = None) -> list[Found]:
    """The supersessions among `memories`; `code_now` gives an anchor's fingerprint in the work
    tree (`memgit.git.codeprint.Prints.of`), None where it cannot tell; without it the code is
    not consulted."""
    by_id = {m.id: m for m in memories}
    by_title: dict[str, list[Memory]] = {}
    for memory in memories:
        by_title.setdefault(_norm(memory.title), []).append(memory)
    out: list[Found] = []
    seen: set[frozenset[str]] = set()
    for memory in sorted(memories, key=lambda m: m.id):  # reverts by title
        match = _REVERT_OF.match(memory.title)
        if not match:
            continue
        for target in by_title.get(_norm(match.group(1)), []):
            if target.id != memory.id and frozenset((memory.id, target.id)) not in seen:
                seen.add(frozenset((memory.id, target.id)))
                out.append(
                    Found(
                        memory.id,
                        target.id,
                        memory.id,
                        "it reverts the older memory's change",
                        (f'title: "{memory.title}"',),
                    )
                )
    scored = detector.scored()
    best: dict[str, float] = {}
    for pair in scored:
        best.setdefault(pair.a, pair.score)
        best.setdefault(pair.b, pair.score)
    for pair in scored:
        if pair.score < MIN_SIMILARITY:
            break
        key = frozenset((pair.a, pair.b))
        a, b = by_id.get(pair.a), by_id.get(pair.b)
        if a is None or b is None or key in seen or pair.score < best[pair.a] or pair.score < best[pair.b]:
            continue
        if a.entity.split("::")[0] != b.entity.split("::")[0]:
            continue
        found = (_by_code(a, b, pair.score, code_now) if code_now is not None else None) \
            or _judge(a, b, pair.score)
        if found is not None:
            seen.add(key)
            out.append(found)
    return out


def _by_code(a: Memory, b: Memory, similarity: float, code_now: Callable[[str], str | None]) -> Found | None:
    """The one of two memories written against different versions of an anchor whose version the
    code is now (see the module docstring); None when the code does not tell them apart."""
    mine, theirs = against.recorded(a) or {}, against.recorded(b) or {}
    for anchor in sorted(set(mine) & set(theirs)):
        one, other = mine[anchor], theirs[anchor]
        if one == other or against.UNKNOWN in (one, other) or "-" in (one, other):
            continue
        now = code_now(anchor)
        if now is None:
            continue
        holds = [m for m, then in ((a, one), (b, other)) if now == then or (len(then) >= 7 and now.startswith(then))]
        if len(holds) != 1:
            continue
        winner = holds[0]
        loser = b if winner is a else a
        ta, tb = parse_time(winner.updated or winner.created), parse_time(loser.updated or loser.created)
        newer, older = (winner, loser) if ta is None or tb is None or ta >= tb else (loser, winner)
        return Found(newer.id, older.id, winner.id,
                     f"`{anchor}` is now the code the kept memory was written against; the archived one "
                     "was written against another version of it",
                     (f"similarity {similarity:.2f}",
                      (f"`{anchor}` now {now[:16]}; kept {mine[anchor] if winner is a else theirs[anchor]}, "
                       f"archived {theirs[anchor] if winner is a else mine[anchor]}")))
    return None


def _judge(a: Memory, b: Memory, similarity: float) -> Found | None:
    ta, tb = parse_time(a.updated or a.created), parse_time(b.updated or b.created)
    text_a, text_b = f"{a.title}\n{a.body}", f"{b.title}\n{b.body}"
    contradiction = (bool(_ALWAYS.search(text_a)) and bool(_NEVER.search(text_b))) or (
        bool(_NEVER.search(text_a)) and bool(_ALWAYS.search(text_b))
    )
    if ta is None or tb is None or ta == tb:
        if contradiction:
            return Found(
                a.id,
                b.id,
                None,
                "one says always, the other never, and they cannot be ordered in time",
                (f"similarity {similarity:.2f}",),
            )
        return None
    newer, older = (a, b) if ta > tb else (b, a)
    newer_text = f"{newer.title}\n{newer.body}"
    change = _CHANGE.search(newer_text)
    if change and _CHANGE.search(f"{older.title}\n{older.body}"):
        change = None  # both speak of change: that is their style, not a replacement
    if not change and not contradiction:
        return None
    what = f'the newer memory says "{change.group(0)}"' if change else "one says always, the other never"
    evidence = (
        f"similarity {similarity:.2f}",
        f"newer {(newer.updated or newer.created or '')[:10]} ({newer.source}, {newer.confidence:g}), "
        f"older {(older.updated or older.created or '')[:10]} ({older.source}, {older.confidence:g})",
    )
    if rank(older)[:2] > rank(newer)[:2]:
        return Found(
            newer.id,
            older.id,
            None,
            f"{what}, but the older memory has the higher source or confidence",
            evidence,
        )
    return Found(
        newer.id, older.id, newer.id, f"{what} about the same thing; it replaces the older one", evidence
    )
