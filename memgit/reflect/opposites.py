"""Opposites: two memories that read alike but say reverse things are not duplicates.

Notes about `begin_fill` and `end_fill`, or `url2pathname` and `pathname2url`, share nearly
every word and are each other's closest note, so the duplicate detector alone would merge
them. Three rules tell such a pair apart, none of them about particular names:

- **different symbols**: both memories name symbols (`symbols`, or the `::Symbol` of
  `entity`) and they share none;
- **an antonym**: one says a word of a pair (begin/end, enable/disable, add/remove,
  encode/decode, open/close, start/stop, before/after, ...; or a word and its `un`/`de`/`dis`
  form) that the other does not, and the other says its opposite that the first does not.
  Titles and the identifiers named anywhere (split at `_`, camelCase and digits) are read,
  not the prose of bodies (a paraphrase says "output" where its twin says "printing"); the
  pairs that are filler in prose (to/from, in/out, on/off, ...) count only inside names;
- **a reversed direction**: one names `x2y`, `x_to_y`, `xToY` or says "from x to y" and the
  other the reverse (`pathname2url` against `url2pathname`), and neither names both.

A person can still say such a pair is one memory (`memgit feedback A B --duplicate`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memgit.memory.format import Memory

#: Opposite words. Each pair is read both ways.
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("begin", "end"), ("start", "stop"), ("start", "end"), ("start", "finish"), ("open", "close"),
    ("enable", "disable"), ("enabled", "disabled"), ("add", "remove"), ("added", "removed"),
    ("insert", "delete"), ("create", "destroy"), ("push", "pop"), ("encode", "decode"),
    ("encoder", "decoder"), ("encrypt", "decrypt"), ("compress", "decompress"),
    ("serialize", "deserialize"), ("before", "after"), ("to", "from"), ("get", "set"),
    ("read", "write"), ("load", "save"), ("load", "dump"), ("show", "hide"), ("lock", "unlock"),
    ("min", "max"), ("first", "last"), ("upper", "lower"), ("increase", "decrease"),
    ("increment", "decrement"), ("allow", "deny"), ("accept", "reject"), ("true", "false"),
    ("on", "off"), ("up", "down"), ("in", "out"), ("input", "output"), ("import", "export"),
    ("connect", "disconnect"), ("attach", "detach"), ("mount", "unmount"), ("install", "uninstall"),
    ("register", "unregister"), ("subscribe", "unsubscribe"), ("pack", "unpack"),
    ("wrap", "unwrap"), ("escape", "unescape"), ("quote", "unquote"), ("include", "exclude"),
    ("minimum", "maximum"), ("head", "tail"), ("prefix", "suffix"), ("always", "never"),
)
#: Words so common as filler in prose that they count only as parts of identifiers.
PROSE_FILLER = frozenset({"to", "from", "in", "out", "on", "off", "up", "down", "first", "last",
                          "before", "after", "get", "set", "true", "false"})
#: Prefixes that make a word's opposite (`able`/`disable`, `serialize`/`deserialize`).
NEGATIONS = ("un", "de", "dis")

_OPPOSITE: dict[str, frozenset[str]] = {}
for _a, _b in ANTONYMS:
    _OPPOSITE[_a] = _OPPOSITE.get(_a, frozenset()) | {_b}
    _OPPOSITE[_b] = _OPPOSITE.get(_b, frozenset()) | {_a}

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PROSE = re.compile(r"[^\W\d_]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: `a2b`, `b2a_hex`, `url2pathname`: a direction written with a 2 between two names.
_TWO = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]+)2([A-Za-z]+)")
_HUMP = re.compile(r"[a-z][A-Z]")
_FROM_TO = re.compile(r"\bfrom\s+(\w+)\s+to\s+(\w+)", re.IGNORECASE)


def _parts(identifier: str) -> list[str]:
    """An identifier's words: `end_fill` -> end, fill; `pathnameToUrl` -> pathname, to, url."""
    out: list[str] = []
    for chunk in identifier.split("_"):
        out.extend(p.lower() for p in _CAMEL.findall(chunk) if not p.isdigit())
    return out


def _identifiers(text: str) -> list[str]:
    """Names that look like code: with `_`, a digit between letters, or camelCase."""
    return [w for w in _IDENT.findall(text) if "_" in w.strip("_") or _TWO.search(w) or _HUMP.search(w)]


def _anchors(memory: Memory) -> list[str]:
    return [*memory.symbols, memory.entity]


def symbols(memory: Memory) -> frozenset[str]:
    """The symbols a memory names in its anchors (`symbols`, `entity`'s `::Symbol`), without paths."""
    out: set[str] = set()
    for anchor in (*memory.symbols, memory.entity if "::" in memory.entity else ""):
        name = anchor.rpartition("::")[2].strip()
        if name:
            out.add(name.rsplit(".", 1)[-1].lower())
    return frozenset(out)


@dataclass(frozen=True)
class _Reading:
    title: frozenset[str]  # the words of the title
    names: frozenset[str]  # the parts of the identifiers and anchors it names anywhere
    directions: frozenset[tuple[str, str]]  # (x, y) of x2y, x_to_y, xToY, "from x to y"


@lru_cache(maxsize=4096)
def _read(title: str, body: str, anchors: tuple[str, ...]) -> _Reading:
    text = f"{title}\n{body}"
    names = [*_identifiers(text), *anchors]
    parts: set[str] = set()
    directions: set[tuple[str, str]] = set()
    for name in names:
        for match in _TWO.finditer(name):
            directions.add((match.group(1).lower(), match.group(2).lower()))
        for piece in re.split(r"[:/.\s]+", name):
            split = _parts(piece)
            parts.update(split)
            directions.update((split[i - 1], split[i + 1])
                              for i in range(1, len(split) - 1) if split[i] == "to")
    directions.update((m.group(1).lower(), m.group(2).lower()) for m in _FROM_TO.finditer(text))
    return _Reading(frozenset(w.lower() for w in _PROSE.findall(title)), frozenset(parts),
                    frozenset((x, y) for x, y in directions if x != y))


def _reading(memory: Memory) -> _Reading:
    return _read(memory.title, memory.body, tuple(_anchors(memory)))


def _antonym(only_mine: set[str], only_theirs: set[str]) -> tuple[str, str] | None:
    """A word of one side whose opposite (or `un`/`de`/`dis` form, either way) only the other says."""
    for word in sorted(only_mine):
        for opposite in sorted(_OPPOSITE.get(word, ())):
            if opposite in only_theirs:
                return word, opposite
        for prefix in NEGATIONS:
            if len(word) >= 4 and prefix + word in only_theirs:
                return word, prefix + word
            base = word[len(prefix):]
            if word.startswith(prefix) and len(base) >= 4 and base in only_theirs:
                return word, base
    return None


def opposed(a: Memory, b: Memory) -> str | None:
    """Why `a` and `b` say different or reverse things (None when nothing says so)."""
    sa, sb = symbols(a), symbols(b)
    if sa and sb and not sa & sb:
        return f"they name different symbols (`{sorted(sa)[0]}`, `{sorted(sb)[0]}`)"
    ra, rb = _reading(a), _reading(b)
    da, db = ra.directions, rb.directions
    for x, y in sorted(da):
        if (y, x) in db and (y, x) not in da and (x, y) not in db:
            return f"they go opposite ways ({x} to {y}, {y} to {x})"
    # Filler words (to, in, first...) count only as parts of names: in prose they say little.
    said_a = {w for w in ra.title if w not in PROSE_FILLER} | ra.names
    said_b = {w for w in rb.title if w not in PROSE_FILLER} | rb.names
    everything_a, everything_b = ra.title | ra.names, rb.title | rb.names
    found = _antonym(said_a - everything_b, said_b - everything_a)
    if found is not None:
        return f"one says {found[0]!r} where the other says {found[1]!r}"
    return None
