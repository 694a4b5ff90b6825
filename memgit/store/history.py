"""A memory's history: its commits, what each changed in its front-matter, and rollback."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from memgit.errors import MemgitError
from memgit.git import repo as gitrepo
from memgit.memory import format as fmt
from memgit.memory import lenient
from memgit.memory.format import Memory
from memgit.store.folder import Store
from memgit.store.writer import Writer


@dataclass(frozen=True)
class Change:
    """One commit of a memory's history, with the front-matter fields that changed in it."""

    revision: gitrepo.Revision
    fields: dict[str, tuple[Any, Any]]
    body_changed: bool


def changes_of(repo: gitrepo.Repo, path: Path, kinds: tuple[str, ...]) -> list[Change]:
    """The commits that touched the memory file at `path` (following renames), newest first."""
    revisions = gitrepo.history(repo, path)
    versions: list[Memory | None] = []
    for revision in revisions:
        data = gitrepo.show(repo, revision.sha, revision.path)
        versions.append(lenient.check(data, revision.path, kinds)[0] if data is not None else None)
    changes = []
    for i, revision in enumerate(revisions):
        new = versions[i]
        old = versions[i + 1] if i + 1 < len(versions) else None
        changes.append(Change(revision, field_changes(old, new), _body(old) != _body(new)))
    return changes


def version_at(
    repo: gitrepo.Repo, sha: str, memory_id: str, under: str, current: str | None
) -> tuple[bytes, str] | None:
    """The file that held `memory_id` at commit `sha` (under the folder `under`), and its path.

    Found by the `id:` line, so a memory that was moved or renamed since is still found;
    `current` (its path in the folder now) covers hand-written files whose id is their path.
    """
    candidates = gitrepo.grep_id(repo, sha, memory_id, under)
    if current is not None:
        candidates.append(os.path.join(under, current))
    for candidate in candidates:
        data = gitrepo.show(repo, sha, candidate)
        if data is not None:
            return data, candidate
    return None


def field_changes(old: Memory | None, new: Memory | None) -> dict[str, tuple[Any, Any]]:
    """Front-matter fields whose value differs (`updated` always does, so it is left out)."""
    changes: dict[str, tuple[Any, Any]] = {}
    for name in fmt.FIELDS:
        if name == "updated":
            continue
        before = getattr(old, name) if old is not None else None
        after = getattr(new, name) if new is not None else None
        if before != after:
            changes[name] = (before, after)
    return changes


def _body(memory: Memory | None) -> str | None:
    return memory.body if memory is not None else None


def rollback(writer: Writer, store: Store, ref: str, to: str, *, commit: bool,
             current: Callable[[], Memory]) -> Memory | None:
    """Restore a memory (`current()` finds it; a deleted one is looked up by its id at `to`)
    to its content at revision `to`, as one change set. None when it is already so.
    Call under `writer.writing()`."""
    repo = writer.repo()
    sha = gitrepo.resolve(repo, to)
    under = os.path.relpath(store.root, repo.root)
    now: Memory | None
    try:
        now = current()
    except MemgitError:
        now = None  # deleted (forget --hard)? Look for it at `to`.
        if not fmt.ID_RE.match(ref.strip()):
            raise
    memory_id = now.id if now else ref.strip()
    version = version_at(repo, sha, memory_id, under, now.path if now else None)
    if version is None:
        raise MemgitError(f"{memory_id} did not exist at {to}; see 'memgit history {memory_id}'")
    data, found = version
    rel = now.path if now else Path(os.path.relpath(repo.root / found, store.root)).as_posix()
    # Restored byte for byte: a hand-written file with an odd field is read liberally, as always.
    old = lenient.check(data, rel, store.kinds)[0]
    if old is None:
        raise MemgitError(f"at {to} that file held no readable text (binary, or over 1 MB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MemgitError(f"at {to} that file was not valid UTF-8; restore it with 'git checkout {to} -- {found}'") from None
    if old.id != memory_id:
        raise MemgitError(f"at {to} that file held {old.id}, not {memory_id}")
    target = store.path_of(rel)
    if now is None and target.exists():
        rel = store.new_path(old)
        target = store.path_of(rel)
    if target.exists() and target.read_bytes() == data:
        return None
    verb = "roll back" if now else "restore"
    title = old.title if len(old.title) <= 60 else old.title[:59] + "…"
    change = writer.change(f'memory: {verb} "{title}" to {sha[:10]}', commit)
    change.write(rel, text)
    writer.land(change)
    return replace(old, path=rel)


def path_in_history(repo: gitrepo.Repo, memory_dir: Path, ref: str, current: Callable[[], Memory]) -> Path:
    """The file of a memory (`current()` finds it), or of a deleted one (by its id) as it was
    last committed."""
    try:
        return memory_dir / current().path
    except MemgitError:
        if not fmt.ID_RE.match(ref.strip()):
            raise
        path = gitrepo.deleted_path(repo, ref.strip(), os.path.relpath(memory_dir, repo.root))
        if path is None:
            raise
        return repo.root / path
