"""What code a memory was written against: its `written_against` front-matter field.

A memory anchored to code (`files`, a path `entity`, `path::symbol` items of `symbols`) records,
when it is written or edited, a fingerprint of each anchor as the code was then (see
`memgit.git.codeprint`), one `ANCHOR FINGERPRINT` line each, so a pull request shows it:

    written_against:
    - src/auth.py 3f9c2a1b2c4d
    - src/auth.py::login py:9f8e7d6c5b4a

`?` means it could not be told, `-` that the anchor was not there. The field is read as
untrusted input: a line that is not one memgit writes is kept as it is and only ever makes the
memory doubtful. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from memgit.memory.format import Memory

FIELD = "written_against"
UNKNOWN = "?"

_PATHLIKE = re.compile(r"^[\w.@+-]+(?:/[\w.@+-]+)*\.\w{1,8}$|^[\w.@+-]+(?:/[\w.@+-]+)+$")


def looks_like_path(text: str) -> bool:
    """Whether `text` looks like a repository path (a topic entity such as "release process" does not)."""
    text = text.strip()
    return bool(text) and " " not in text and not text.startswith(("http:", "https:")) \
        and bool(_PATHLIKE.match(text))


def code_anchors(memory: Memory) -> list[str]:
    """The memory's anchors into code, in field order: file paths and `path::symbol`."""
    out: dict[str, None] = {}
    for anchor in (*memory.files, memory.entity, *memory.symbols):
        path, sep, symbol = anchor.partition("::")
        path, symbol = path.strip(), symbol.strip()
        if looks_like_path(path) and (not sep or symbol):
            out[f"{path}::{symbol}" if sep else path] = None
    return list(out)


def names_symbols(memory: Memory) -> bool:
    """Whether the memory names a `path::symbol`: then its symbols say whether what it is about
    changed, and its plain file anchors count only when the file is renamed or gone."""
    return any("::" in a for a in code_anchors(memory))


def recorded(memory: Memory) -> dict[str, str] | None:
    """The fingerprints the memory's file records, by anchor; None when it records none.
    Lines that cannot be read are left out (their anchors are then not recorded)."""
    value = memory.extra.get(FIELD)
    if value is None:
        return None
    out: dict[str, str] = {}
    for line in value if isinstance(value, list) else ():
        if isinstance(line, str) and " " in line.strip():
            anchor, _, fingerprint = line.strip().rpartition(" ")
            out[anchor.strip()] = fingerprint
    return out


def with_record(memory: Memory, prints: Mapping[str, str | None]) -> Memory:
    """`memory` recording `prints` (None: unknown) for its code anchors; without the field
    when it has none."""
    extra = {k: v for k, v in memory.extra.items() if k != FIELD}
    anchors = code_anchors(memory)
    if anchors:
        extra[FIELD] = [f"{a} {prints.get(a) or UNKNOWN}" for a in anchors]
    return replace(memory, extra=extra)


def stamp(new: Memory, old: Memory | None, print_of: Callable[[str], str | None]) -> Memory:
    """`new` recording the code its anchors point at now, unless it is an edit that left its
    anchors, title and body as they were and keeps the record it had."""
    if not code_anchors(new) and FIELD not in new.extra:
        return new
    if (old is not None and FIELD in old.extra and new.extra.get(FIELD) == old.extra.get(FIELD)
            and code_anchors(new) == code_anchors(old) and (new.title, new.body) == (old.title, old.body)):
        return new
    return with_record(new, {a: print_of(a) for a in code_anchors(new)})
