"""Finding memories by reference, by text or by field: through the index when there is one,
else by reading the files.

A reference is an id, a unique id prefix, or an exact title (case-insensitive as a last
resort). Asked through the index, finding one memory reads one file at any store size.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Container, Sequence

from memgit.errors import MemgitError
from memgit.index.workspace import Workspace
from memgit.memory import format as fmt
from memgit.memory.format import Memory
from memgit.store.folder import Store

if TYPE_CHECKING:
    from memgit.index.index import Index


def resolve(ref: str, pool: Sequence[Memory]) -> Memory:
    """The memory `ref` names among `pool`, or an error listing what it could mean."""
    for memory in pool:
        if memory.id == ref:
            return memory
    prefixed = [m for m in pool if m.id.startswith(ref)]
    if len(prefixed) == 1:
        return prefixed[0]
    titled = [m for m in pool if m.title == ref] or [m for m in pool if m.title.casefold() == ref.casefold()]
    if len(titled) == 1:
        return titled[0]
    candidates = prefixed or titled
    if candidates:
        listing = ", ".join(m.id for m in candidates[:8])
        raise MemgitError(f"{ref!r} matches {len(candidates)} memories ({listing}); give more of the id")
    raise MemgitError(f"no memory {ref!r}; see 'memgit list'")


def through_index(index: "Index", store: Store, ref: str) -> Memory | None:
    """The memory `ref` names, read from its one file. None means "ask the files" (nothing
    found, or an ambiguous reference that `resolve` explains)."""
    for how in ("id", "prefix", "title", "title_nocase"):
        rows = index.lookup(ref, how)
        if len(rows) > 1:
            return None
        if rows:
            memory, _ = store.read(rows[0][1])
            return memory if memory is not None and memory.id == rows[0][0] else None
    return None


def same_text(index: "Index | None", load: Callable[[], list[Memory]], title: str,
              body: str) -> tuple[list[Memory], Container[str]]:
    """Active memories with this text, and the ids in use: two index lookups at any store
    size (`load`, a read of every file, only without an index)."""
    if index is not None:
        return index.same_text(title, body), IndexedIds(index)
    memories = load()
    key = fmt.normalized_text(title, body)
    same = [m for m in memories if m.active and fmt.normalized_text(m.title, m.body) == key]
    return same, {m.id for m in memories}


class IndexedIds:
    """The ids in use, asked of the index one at a time (`in` is all `new_id` needs)."""

    def __init__(self, index: "Index") -> None:
        self.index = index

    def __contains__(self, memory_id: object) -> bool:
        return isinstance(memory_id, str) and bool(self.index.lookup(memory_id, "id"))


def get(ws: Workspace, ref: str, *, memories: Sequence[Memory] | None = None) -> Memory:
    """A memory by id, unique id prefix, or exact title (see `Memgit.get`)."""
    ws.require_store()
    ref = ref.strip() if isinstance(ref, str) else ""
    if not ref:
        raise MemgitError("give a memory id, id prefix or title")
    if memories is None:
        index = ws.synced()
        found = through_index(index, ws.store, ref) if index is not None else None
        if found is not None:
            return found
    return resolve(ref, list(memories) if memories is not None else ws.load())


def select(ws: Workspace, *, kind: str | None = None, entity: str | None = None, task_id: str | None = None,
           source: str | None = None, status: str | None = "active") -> list[Memory]:
    """Memories matching every filter given, newest first (see `Memgit.list`)."""
    ws.require_store()
    if kind is not None and kind not in ws.config.kinds:
        raise MemgitError(f"unknown kind {kind!r}; use one of {', '.join(ws.config.kinds)}")
    pool = indexed(ws)
    if pool is None:
        pool = [(m, _mtime(ws, m)) for m in ws.load()]
    out = [
        (m, mtime)
        for m, mtime in pool
        if (kind is None or m.kind == kind)
        and (entity is None or m.entity.startswith(entity))
        and (task_id is None or m.task_id == task_id)
        and (source is None or m.source == source)
        and (status is None or m.status == status)
    ]
    # Timestamps have whole seconds; the file's mtime orders memories written in one second.
    out.sort(key=lambda pair: (pair[0].updated or pair[0].created or "", pair[1], pair[0].id), reverse=True)
    return [m for m, _ in out]


def current(ws: Workspace) -> list[Memory]:
    """Every memory, from the index when there is one (one sync instead of parsing all)."""
    found = indexed(ws)
    return [m for m, _ in found] if found is not None else ws.load()


def indexed(ws: Workspace) -> list[tuple[Memory, int]] | None:
    """Every memory with its mtime from the index (kept in step first), or None without one."""
    index = ws.synced()
    return index.all_memories() if index is not None else None


def _mtime(ws: Workspace, memory: Memory) -> int:
    try:
        return os.stat(ws.memory_dir / memory.path).st_mtime_ns
    except OSError:
        return 0
