"""What changed in memory between two revisions, in memory terms, for a pull-request review.

`memgit diff main...HEAD` reads the memory files git reports as changed and compares them
memory by memory (matched by id, so a moved file is one edited memory): added, edited (which
fields, old → new, and whether the body changed), archived, merged (archived and superseded
by another memory of the change), restored, deleted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit import gitrepo
from memgit import memory as fmt
from memgit.errors import MemgitError
from memgit.memory import Memory

ORDER = ("added", "edited", "merged", "archived", "restored", "deleted")
#: Fields not worth a line of their own: `updated` changes with every edit.
QUIET = {"updated"}


@dataclass(frozen=True)
class MemoryChange:
    """One memory's change. `fields` maps a front-matter field to (old, new)."""

    id: str
    title: str
    change: str
    path: str
    kind: str = "fact"
    fields: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    body_changed: bool = False
    merged_into: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "title": self.title, "change": self.change, "path": self.path, "kind": self.kind,
            "fields": {k: {"old": _plain(o), "new": _plain(n)} for k, (o, n) in self.fields.items()},
            "body_changed": self.body_changed, "merged_into": list(self.merged_into),
        }


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def revisions(repo: gitrepo.Repo, rev_range: str | None) -> tuple[str, str | None]:
    """(old commit, new commit or None for the work tree) of `A..B`, `A...B`, `A` or nothing."""
    def commit(rev: str) -> str:
        rev = rev or "HEAD"
        if rev.startswith("-"):
            raise MemgitError(f"{rev!r} is not a revision")
        try:
            return gitrepo.resolve(repo, rev)
        except MemgitError:
            raise MemgitError(f"unknown revision {rev!r}; give a range such as main...HEAD") from None

    if not rev_range:
        return commit("HEAD"), None
    if "..." in rev_range:
        a, b = rev_range.split("...", 1)
        new = commit(b)
        return gitrepo.merge_base(repo, commit(a), new), new
    if ".." in rev_range:
        a, b = rev_range.split("..", 1)
        return commit(a), commit(b)
    return commit(rev_range), None


def diff(repo: gitrepo.Repo, memory_dir: Path, kinds: tuple[str, ...], rev_range: str | None) -> list[MemoryChange]:
    """The memory-level changes of `rev_range` (see `revisions`), in ORDER then by title."""
    old_rev, new_rev = revisions(repo, rev_range)
    under = Path(os.path.relpath(memory_dir, repo.root)).as_posix()
    prefix = "" if under == "." else under + "/"
    olds: dict[str, Memory] = {}
    news: dict[str, Memory] = {}
    for status, old_path, new_path in gitrepo.changed_paths(repo, old_rev, new_rev, under):
        if status != "A" and fmt.is_memory_file(old_path.rsplit("/", 1)[-1]):
            memory = _read(gitrepo.show(repo, old_rev, old_path), old_path.removeprefix(prefix), kinds)
            if memory is not None:
                olds[memory.id] = memory
        if status != "D" and new_path and fmt.is_memory_file(new_path.rsplit("/", 1)[-1]):
            data = gitrepo.show(repo, new_rev, new_path) if new_rev else _file(repo.root / new_path)
            memory = _read(data, new_path.removeprefix(prefix), kinds)
            if memory is not None:
                news[memory.id] = memory
    superseded: dict[str, list[str]] = {}
    for memory in news.values():
        before = set(olds[memory.id].supersedes) if memory.id in olds else set()
        for gone in set(memory.supersedes) - before:
            superseded.setdefault(gone, []).append(memory.id)
    changes = [_change(olds.get(i), news.get(i), tuple(superseded.get(i, ()))) for i in {*olds, *news}]
    found = [c for c in changes if c is not None]
    return sorted(found, key=lambda c: (ORDER.index(c.change), c.title.casefold(), c.id))


def _file(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _read(data: bytes | None, rel: str, kinds: tuple[str, ...]) -> Memory | None:
    if data is None:
        return None
    return fmt.check(data, rel, kinds)[0]


def _change(old: Memory | None, new: Memory | None, merged_into: tuple[str, ...]) -> MemoryChange | None:
    if new is None:
        assert old is not None
        return MemoryChange(old.id, old.title, "deleted", old.path, old.kind, merged_into=merged_into)
    fields = {name: (getattr(old, name), getattr(new, name)) for name in fmt.FIELDS
              if old is not None and getattr(old, name) != getattr(new, name) and name not in QUIET}
    if old is not None:
        for key in {*old.extra, *new.extra}:
            if old.extra.get(key) != new.extra.get(key):
                fields[key] = (old.extra.get(key), new.extra.get(key))
        if old.path != new.path:
            fields["path"] = (old.path, new.path)
    body_changed = old is not None and old.body != new.body
    if old is None:
        change = "added"
    elif old.active and not new.active:
        change = "merged" if merged_into else "archived"
    elif not old.active and new.active:
        change = "restored"
    elif fields or body_changed:
        change = "edited"
    else:
        return None  # only `updated` (or the file's layout) changed
    fields.pop("status", None)
    return MemoryChange(new.id, new.title, change, new.path, new.kind, fields, body_changed, merged_into)


def markdown(changes: list[MemoryChange], titles: dict[str, str] | None = None) -> str:
    """The changes as Markdown for a pull-request comment."""
    if not changes:
        return "No memory changes.\n"
    titles = {c.id: c.title for c in changes} | (titles or {})
    counts = {name: sum(1 for c in changes if c.change == name) for name in ORDER}
    summary = ", ".join(f"{n} {name}" for name, n in counts.items() if n)
    lines = [f"### Memory changes: {summary}", ""]
    for name in ORDER:
        group = [c for c in changes if c.change == name]
        if not group:
            continue
        lines += [f"**{name.capitalize()}**", ""]
        for c in group:
            line = f"- **{_md(c.title)}** (`{c.id}`, {c.kind})"
            details = [_field(k, o, n) for k, (o, n) in c.fields.items()]
            if c.body_changed:
                details.append("body changed")
            if c.merged_into:
                details.append("into " + ", ".join(f"**{_md(titles.get(i, i))}** (`{i}`)" for i in c.merged_into))
            lines.append(line + (": " + "; ".join(details) if details else ""))
        lines.append("")
    return "\n".join(lines)


def _field(name: str, old: Any, new: Any) -> str:
    if isinstance(old, tuple) and isinstance(new, tuple):
        added = [f"+`{item}`" for item in new if item not in old]
        removed = [f"−`{item}`" for item in old if item not in new]
        return f"{name} {' '.join(added + removed)}"
    return f"{name} {_value(old)} → {_value(new)}"


def _value(value: Any) -> str:
    return "(none)" if value in (None, "", ()) else f"`{value}`"


def _md(text: str) -> str:
    return text.replace("*", r"\*").replace("_", r"\_").replace("`", "'")
