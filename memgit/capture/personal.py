"""Capture's personal memories: a first-person preference (`memgit.memory.personal`) goes to the
user's own store (`memgit.store.userstore`), committed there, never into the project.

The same text already in the user store is not written again; an id the user store already
holds is replaced by a new one. When the user store cannot be written, its memories are left
out (said through the project's warning channel) rather than put in the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memgit.index.workspace import Workspace
from memgit.memory import format as memfmt
from memgit.memory.format import Memory
from memgit.memory.personal import scope_for
from memgit.recall import lookup
from memgit.store import userstore


def is_personal(memory: Memory) -> bool:
    return scope_for(memory.kind, f"{memory.title}\n{memory.body}", memory.files, memory.symbols) == "user"


def keep(ws: Workspace, memories: Sequence[Memory], message: str) -> list[Memory]:
    """The project's share of `memories`; the personal ones are committed in the user store."""
    mine = [m for m in memories if is_personal(m)]
    if not mine or ws.memory_dir == userstore.memory_dir():
        return list(memories)
    try:
        root = userstore.prepare()
        user = Workspace(userstore.memory_dir(), userstore.require(), ws.warn)
        with user.writer.writing():
            new: list[Memory] = []
            for memory in mine:
                same, taken = lookup.same_text(user.synced(), user.load, memory.title, memory.body)
                if not same:
                    fresh = memory.id in taken or any(m.id == memory.id for m in new)
                    new.append(replace(memory, id=memfmt.new_id(taken), path="") if fresh
                               else replace(memory, path=""))
            if new:
                user.writer.add(new, message, commit=True)
                ws.warn(f"{len(new)} personal {'memory' if len(new) == 1 else 'memories'} kept in the user "
                        f"store {root}: {', '.join(m.id for m in new)}")
        user.close()
    except Exception as exc:  # noqa: BLE001 - never into the project instead
        ws.warn(f"{len(mine)} personal memories left out: the user store could not be written ({exc})")
    return [m for m in memories if not is_personal(m)]
