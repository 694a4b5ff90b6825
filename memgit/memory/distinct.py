"""A memory's `distinct` field: the ids of memories a person said are different from it.

    distinct:
    - m-b41e07

Reflect never proposes merging two memories when either lists the other; that is all the
field does (it hides nothing and lowers nothing). The merge driver keeps the union of both
sides' lists. `memgit.reflect.decisions` writes it.
"""

from __future__ import annotations

from typing import Any

from memgit.memory.format import Memory

FIELD = "distinct"


def listed(value: Any) -> list[str]:
    """The ids a `distinct` value lists: a list of strings, or one string; anything else is none."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [v.strip() for v in items if isinstance(v, str) and v.strip()]


def ids(memory: Memory) -> frozenset[str]:
    return frozenset(listed(memory.extra.get(FIELD)))


def said(a: Memory, b: Memory) -> bool:
    """Whether either memory lists the other as different."""
    return b.id in ids(a) or a.id in ids(b)


def added(memory: Memory, other_id: str) -> list[str]:
    """The memory's list with `other_id` added (order kept)."""
    kept = listed(memory.extra.get(FIELD))
    return kept if other_id in kept else [*kept, other_id]
