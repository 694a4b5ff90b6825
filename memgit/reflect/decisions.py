"""A person's word on a pair of memories: "these are different" and "these are the same".

"Different" is kept in the repository, in both memories' front-matter, so a team shares it
and a reviewer sees it in a pull request:

    distinct:
    - m-b41e07

A pair is different when either memory lists the other. It only stops reflect from
proposing that one merge: nothing is hidden, archived or lowered, and no other pair is
affected (a hand-written or hostile `distinct` can do no more than that). The merge driver
keeps the union of both sides' lists, like `supersedes`.

It is written by `memgit feedback A B --not-duplicate` (one commit changing both files),
and inferred from history: when `git revert` undid a reflect commit that merged two
memories (reflect commits list their merges in `Memgit-Merged:` trailers), reflect no
longer proposes that merge and proposes writing `distinct` into both files, so the "no"
holds in clones whose history does not reach the revert.

"Same" (`memgit feedback A B --duplicate`) merges the two at once, as reflect would,
whatever the detector thinks of them (it never merges opposites on its own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from memgit.errors import MemgitError
from memgit.git import reverts
from memgit.git.repo import Repo
from memgit.index.workspace import Workspace
from memgit.memory import distinct, lenient, patch
from memgit.memory import format as fmt
from memgit.memory.format import Memory
from memgit.recall import lookup
from memgit.recall.usage import utc_now
from memgit.reflect.duplicates import merge, rank

#: The trailer naming each merge of a reflect commit: `Memgit-Merged: KEPT REMOVED`.
TRAILER = "Memgit-Merged"
_TRAILER = re.compile(rf"^{TRAILER}:\s*(\S+)\s+(\S+)\s*$", re.MULTILINE)
#: Reflect commits made before the trailer: their message lists merges as `- merge A, B: ...`.
_LISTED = re.compile(r"^- merge (\S+), (\S+):", re.MULTILINE)
#: The id line of a memory file's front-matter.
_ID = re.compile(r"^id:[ \t]*['\"]?([^\s'\"]+)", re.MULTILINE)


@dataclass(frozen=True)
class Reverted:
    """A merge reflect made that a revert undid."""

    a: str
    b: str
    merged_in: str  # the reflect commit
    reverted_by: str


def merges_of(message: str) -> list[tuple[str, str]]:
    """The merges a commit's message names: its `Memgit-Merged:` trailers (reflect's merges and
    `feedback --duplicate`), or the `- merge A, B:` lines of an older reflect commit."""
    found = _TRAILER.findall(message)
    if not found and message.lstrip().startswith("memory: reflect"):
        found = _LISTED.findall(message)
    return [(a.rstrip(","), b.rstrip(",")) for a, b in found]


def reverted_merges(repo: Repo | None) -> list[Reverted]:
    """Merges reflect made that a standing `git revert` undid, oldest first."""
    if repo is None:
        return []
    out: list[Reverted] = []
    for revert, target, message in reverts.reverted(repo):
        named = merges_of(message)
        if not named:
            continue
        # A message says what it likes: a pair counts only when the commit did merge it (deleted
        # one memory's file and changed the other's), so a forged trailer stops no merge. Where
        # git cannot show the commit's change (a shallow clone), the message is taken at its word.
        changed = reverts.changed_files(repo, target)
        if changed is not None:
            deleted, modified = (frozenset(_id_of(t) for t in texts) for texts in changed)
            named = [(a, b) for a, b in named
                     if (a in deleted and b in modified) or (b in deleted and a in modified)]
        out.extend(Reverted(a, b, target, revert) for a, b in named)
    return out


def _id_of(text: str) -> str:
    """The id a memory file's front-matter gives ("" when it gives none)."""
    if not text.startswith("---"):
        return ""
    found = _ID.search(text[3:].partition("\n---")[0])
    return found.group(1) if found else ""


def _pair(ws: Workspace, first: str, second: str) -> tuple[Memory, Memory]:
    a, b = lookup.get(ws, first), lookup.get(ws, second)
    if a.id == b.id:
        raise MemgitError(f"{first} and {second} are the same memory ({a.id}); name two different ones")
    return a, b


def mark_distinct(ws: Workspace, first: str, second: str, *, commit: bool = True) -> tuple[Memory, Memory]:
    """Record in both files that two memories are different (one commit)."""
    ws.require_store()
    writer = ws.writer
    with writer.writing():
        a, b = _pair(ws, first, second)
        if b.id in distinct.ids(a) and a.id in distinct.ids(b):
            return a, b
        stamp = utc_now().isoformat(timespec="seconds")
        change = writer.change(f"memory: {a.id} and {b.id} are different memories (not duplicates)", commit)
        out = []
        for one, other in ((a, b), (b, a)):
            listed = distinct.added(one, other.id)
            new = replace(one, extra={**one.extra, distinct.FIELD: listed}, updated=stamp)
            change.write(one.path, _text(ws, one, new))
            out.append(new)
        writer.land(change)
        return out[0], out[1]


def mark_duplicate(ws: Workspace, first: str, second: str, *, commit: bool = True) -> tuple[Memory]:
    """Merge two memories a person says are one, as reflect merges duplicates (one commit):
    the more trusted is kept and gains what only the other said; the other file is deleted."""
    ws.require_store()
    writer = ws.writer
    with writer.writing():
        a, b = _pair(ws, first, second)
        base, other = (a, b) if rank(a) >= rank(b) else (b, a)
        # Its file is deleted: changes to it git does not hold would be gone without a trace.
        writer.keep_uncommitted(lambda: other.path, "merging it into the other", forced=False, new_too=True)
        merged = merge(base, other, updated=utc_now().isoformat(timespec="seconds"))
        listed = [v for v in distinct.listed(merged.extra.get(distinct.FIELD)) if v != other.id]
        extra = {k: v for k, v in merged.extra.items() if k != distinct.FIELD}
        merged = replace(merged, extra={**extra, distinct.FIELD: listed} if listed else extra)
        change = writer.change(
            f'memory: merge "{other.title[:60]}" into "{base.title[:60]}" (a person said they are duplicates)'
            f"\n\n{TRAILER}: {base.id} {other.id}\n", commit)
        change.write(base.path, _text(ws, base, merged))
        change.delete(other.path)
        writer.land(change)
        return (merged,)


def _text(ws: Workspace, old: Memory, new: Memory) -> str:
    """The file of `old` with only the changed fields' lines rewritten (the canonical text
    when it cannot be patched so that it reads back as `new`)."""
    current = ws.store.path_of(old.path).read_bytes().decode("utf-8", "replace")
    changes: dict[str, Any] = {name: getattr(new, name) for name in (*fmt.FIELDS, "body")
                               if getattr(new, name) != getattr(old, name)}
    changes.update({k: v for k, v in new.extra.items() if old.extra.get(k) != v})
    changes.update({k: None for k in old.extra if k not in new.extra})
    patched = patch.patch(current, changes)
    if patched is not None and lenient.check(patched, new.path, ws.config.kinds)[0] == new:
        return patched
    return patch.edited(ws.store, old, new)
