"""Who may hide whom: a memory's `supersedes` hides another only if its source is as trusted.

Sources rank user > static > inferred (`memory.SOURCES`). A memory listing an id in
`supersedes` hides that memory from recall only when its own source ranks at least as high
as the target's: an agent's conclusion (`inferred`) never hides what a person said (`user`).
The rule holds when memgit writes a memory (`sort`) and when recall reads the index
(`channels.CURRENT`), so a hand-edited file from someone else's branch cannot get round it.

A supersession that may not hide its target is kept as `proposed_supersedes:` in the new
memory's file, where a reviewer sees it in the diff; `memgit reflect` lists it for a person,
and recall hides nothing for it.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol, Sequence

from memgit.errors import MemgitError
from memgit.memory import format as fmt
from memgit.memory.format import Memory

#: How much each source is trusted; an unknown source is read as the least.
RANK: Mapping[str, int] = {"user": 3, "static": 2, "inferred": 1}
#: The front-matter key of supersessions held for a person.
PROPOSED = "proposed_supersedes"


def rank(source: str) -> int:
    return RANK.get(source, 1)


def may_hide(source: str, target_source: str) -> bool:
    """Whether a memory from `source` may hide one from `target_source` by superseding it."""
    return rank(source) >= rank(target_source)


class Memories(Protocol):
    """Where memories are looked up by id (the index: `memgit.index.index.Index`)."""

    def memories(self, ids: Sequence[str]) -> Mapping[str, Memory]: ...


def sort(ids: Sequence[str], trust: str, index: Memories | None, load: Callable[[], list[Memory]]
         ) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The ids a new memory written with `trust` (a source) may supersede, and the extra
    front-matter (`proposed_supersedes`) holding the others for a person.

    The targets are looked up in the index (`load`, a read of every file, only without one).
    An id that is not a memory id, or that no memory has, is a MemgitError: nothing is written.
    """
    wanted = list(dict.fromkeys(item.strip() if isinstance(item, str) else "" for item in ids))
    for item in wanted:
        if not fmt.ID_RE.match(item):
            raise MemgitError(f"supersedes: {item!r} is not a memory id; ids are letters, digits, '.', '_' "
                              "and '-' (first a letter or digit), e.g. m-7f3a2c; nothing was saved")
    found: Mapping[str, Memory] = {}
    if wanted:
        found = index.memories(wanted) if index is not None else {m.id: m for m in load() if m.id in wanted}
    missing = [item for item in wanted if item not in found]
    if missing:
        raise MemgitError(f"supersedes: no memory has the id {', '.join(map(repr, missing))}; give the ids of "
                          "existing memories, e.g. m-7f3a2c ('memgit list' shows them); nothing was saved")
    allowed = tuple(item for item in wanted if may_hide(trust, found[item].source))
    held = [item for item in wanted if item not in allowed]
    return allowed, ({PROPOSED: held} if held else {})


def proposed(memory: Memory) -> list[str]:
    """The ids a memory proposes to supersede: its `proposed_supersedes`."""
    value = memory.extra.get(PROPOSED)
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    return [str(item) for item in items if isinstance(item, (str, int)) and str(item).strip()]
