"""git's merge driver for memory files: two branches that touch one memory both keep their work.

git runs `python -m memgit.mergedriver %O %A %B %L %P` for every memory file both sides of a
merge, rebase, cherry-pick or revert changed (`.gitattributes` names the driver; `memgit init`
registers it, see `memgit.git.mergesetup`). `%O` is the common ancestor (empty when both sides
added the file), `%A` ours, `%B` theirs; the result goes into `%A`; exit 0 when clean, 1 when a
conflict is left for a person.

Front-matter merges field by field (docs/format.md, "Merging"):

- `updated`: the later; lists (`tags`, `files`, `symbols`, `supersedes`, `distinct`): the
  union, less the items one side removed;
- `confidence` with `source`: if only one side changed them, that side; if both did, the
  stronger source (user > static > inferred), then the higher confidence;
- `status`: when the sides differ, the side that changed it: a forget (active -> archived) is a
  deliberate act that an edit on the other side, even a later one, does not undo (the edit is
  kept in the archived file); a restore (archived -> active) likewise wins over an edit. Only
  without an ancestor (both sides added the file) does the side updated later decide;
- every other field three-way: a change made on one side is taken; two different changes take
  the side updated later, and the driver says so on stderr.

The body is merged three-way by `merge3` (Breezy's merge algorithm). A true body conflict
leaves standard conflict markers in the body only, under valid front-matter, so `lint` names the
file and `recall` still finds it. A file that is not a memgit memory file with front-matter is
merged as plain text, as git would.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from memgit.memory import distinct, lenient, trust
from memgit.memory import format as fmt
from memgit.memory.format import Memory
from memgit.memory.lenient import conflict_lines
from memgit.memory.patch import patch

#: Fields with their own rule; every other field (and each unknown key) is merged three-way.
OWN_RULE = {"updated", "confidence", "source", "status", *fmt.LIST_FIELDS}


def _when(value: str | None) -> datetime:
    if not value:
        return datetime.min.replace(tzinfo=timezone.utc)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def text_merge(base: str, ours: str, theirs: str, labels: Sequence[str] = ("ours", "base", "theirs"),
               marker_size: int = 7) -> tuple[str, bool]:
    """A three-way line merge; returns the text and whether a conflict was left in it."""
    from merge3 import Merge3  # only when git merges a memory file

    lines = [text.splitlines(keepends=True) for text in (base, ours, theirs)]
    for side in lines:  # a last line without a newline would glue onto a conflict marker
        if side and not side[-1].endswith("\n"):
            side[-1] += "\n"
    merge = Merge3(lines[0], lines[1], lines[2])
    conflict = any(region[0] == "conflict" for region in merge.merge_regions())
    merged = merge.merge_lines(
        name_a=labels[0], name_b=labels[2], start_marker="<" * marker_size, mid_marker="=" * marker_size,
        end_marker=">" * marker_size,
    )
    return "".join(merged), conflict


class Merged:
    """The outcome of merging one memory file: its text, conflict or not, and notes for stderr."""

    def __init__(self, text: str, conflict: bool, notes: list[str]) -> None:
        self.text = text
        self.conflict = conflict
        self.notes = notes


def merge_texts(base: str, ours: str, theirs: str, path: str, marker_size: int = 7,
                labels: Sequence[str] = ("ours", "base", "theirs")) -> Merged:
    """Merge three versions of the memory file at `path` (relative to the memory folder)."""
    name = path.rsplit("/", 1)[-1]
    if ours == theirs:
        return Merged(ours, False, [])
    if base == ours:
        return Merged(theirs, False, [])
    if base == theirs:
        return Merged(ours, False, [])
    memories = [_readable(text, path) for text in (base, ours, theirs)]
    if not fmt.is_memory_file(name) or memories[1] is None or memories[2] is None:
        text, conflict = text_merge(base, ours, theirs, labels, marker_size=marker_size)
        return Merged(text, conflict, [])
    old, mine, other = memories
    assert mine is not None and other is not None
    notes: list[str] = []
    merged = merge_memories(old, mine, other, notes, path)
    body, conflict = text_merge(
        old.body + "\n" if old is not None and old.body else "",
        mine.body + "\n" if mine.body else "",
        other.body + "\n" if other.body else "",
        labels,
        marker_size=marker_size,
    )
    merged = replace(merged, body=fmt.clean_body(body))
    if merged == mine:
        return Merged(ours, conflict, notes)
    if merged == other and not conflict:
        return Merged(theirs, False, notes)
    return Merged(_write(ours, mine, merged, path), conflict, notes)


def _readable(text: str, path: str) -> Memory | None:
    """The memory in `text`, or None when its front-matter cannot be merged field by field."""
    if not text.strip():
        return None
    if not fmt.opens_front_matter(text.removeprefix("\ufeff")):
        return None
    split = fmt.split_front(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    if split is None or conflict_lines(split[0]):
        return None
    memory, _problems = lenient.check(text, path)
    return memory


def merge_memories(base: Memory | None, ours: Memory, theirs: Memory, notes: list[str], path: str) -> Memory:
    """The front-matter of two versions of a memory merged by the rules above (body untouched)."""
    later_is_theirs = _when(theirs.updated) > _when(ours.updated)
    changes: dict[str, Any] = {}
    updated = theirs.updated if later_is_theirs else ours.updated
    changes["updated"] = updated or ours.updated or theirs.updated
    for name in fmt.LIST_FIELDS:
        changes[name] = _union(getattr(base, name) if base else (), getattr(ours, name), getattr(theirs, name))
    changes["source"], changes["confidence"] = _trust(base, ours, theirs)
    if ours.status != theirs.status:
        changes["status"] = _status(base, ours, theirs, later_is_theirs)
    for name in fmt.FIELDS:
        if name in OWN_RULE or name == "id":
            continue
        value, note = _three_way(name, getattr(base, name) if base else None, getattr(ours, name),
                                 getattr(theirs, name), later_is_theirs)
        changes[name] = value
        if note:
            notes.append(f"{path}: {note}")
    extra: dict[str, Any] = {}
    for key in dict.fromkeys([*ours.extra, *theirs.extra]):
        if key == distinct.FIELD:  # a "these are different" from either side stands
            listed = _union(distinct.listed((base.extra if base else {}).get(key)),
                            distinct.listed(ours.extra.get(key)), distinct.listed(theirs.extra.get(key)))
            if listed:
                extra[key] = list(listed)
            continue
        value, note = _three_way(key, (base.extra if base else {}).get(key), ours.extra.get(key),
                                 theirs.extra.get(key), later_is_theirs)
        if note:
            notes.append(f"{path}: {note}")
        if value is not None:
            extra[key] = value
    return replace(ours, **changes, extra=extra)


def _status(base: Memory | None, ours: Memory, theirs: Memory, later_is_theirs: bool) -> str:
    """Differing statuses: the side that changed it from the ancestor's (a forget or a restore),
    however late the other side's edit; without an ancestor, the side updated later."""
    if base is not None and base.status == ours.status:
        return theirs.status
    if base is not None and base.status == theirs.status:
        return ours.status
    return theirs.status if later_is_theirs else ours.status


def _three_way(name: str, base: Any, ours: Any, theirs: Any, later_is_theirs: bool) -> tuple[Any, str | None]:
    if ours == theirs or base == theirs:
        return ours, None
    if base == ours:
        return theirs, None
    side = "theirs" if later_is_theirs else "ours"
    return (theirs if later_is_theirs else ours), (
        f"both sides changed {name!r}; kept {side} ({(theirs if later_is_theirs else ours)!r}), updated later")


def _union(base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]) -> tuple[str, ...]:
    """Ours then theirs' new items; an item in the ancestor that one side removed stays removed."""
    removed = {item for item in base if item not in ours or item not in theirs}
    return tuple(item for item in dict.fromkeys([*ours, *theirs]) if item not in removed)


def _trust(base: Memory | None, ours: Memory, theirs: Memory) -> tuple[str, float]:
    mine, other = (ours.source, ours.confidence), (theirs.source, theirs.confidence)
    if mine == other:
        return mine
    old = (base.source, base.confidence) if base is not None else None
    if old == mine:
        return other
    if old == other:
        return mine
    return max(mine, other, key=lambda pair: (trust.rank(pair[0]), pair[1]))


def _write(ours_text: str, ours: Memory, merged: Memory, path: str) -> str:
    """Our file with only the changed fields' lines replaced, or the canonical text."""
    changes = {name: getattr(merged, name) for name in (*fmt.FIELDS, "body") if getattr(merged, name) != getattr(ours, name)}
    for key in set(ours.extra) | set(merged.extra):
        if ours.extra.get(key) != merged.extra.get(key):
            changes[key] = merged.extra.get(key)
    patched = patch(ours_text, changes)
    if patched is not None and lenient.check(patched, path)[0] == merged:
        return patched
    return fmt.dump(merged)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _labels(given: Sequence[str]) -> tuple[str, str, str]:
    """Conflict labels as git's own merge writes them: git >= 2.44 passes them (%S %X %Y);
    before, ours is HEAD and theirs is the branch git names in its GITHEAD_<sha> variable."""
    named = [value for key, value in os.environ.items() if key.startswith("GITHEAD_")]
    defaults = ("base", "HEAD", named[0] if len(named) == 1 else "theirs")
    picked = [g if g and not g.startswith("%") else d for g, d in zip([*given, "", "", ""][:3], defaults)]
    base, ours, theirs = picked  # git's order: %S ancestor, %X ours, %Y theirs
    return ours, base, theirs


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m memgit.mergedriver BASE OURS THEIRS [MARKER_SIZE] [PATH]`, as git calls it."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3:
        print("usage: python -m memgit.mergedriver %O %A %B [%L] [%P]", file=sys.stderr)
        return 2
    base_file, ours_file, theirs_file = (Path(a) for a in args[:3])
    marker_size = int(args[3]) if len(args) > 3 and args[3].isdigit() else 7
    path = args[4] if len(args) > 4 else ours_file.name
    labels = _labels(args[5:8])
    texts = [_decode(p.read_bytes()) if p.exists() else "" for p in (base_file, ours_file, theirs_file)]
    try:
        merged = merge_texts(texts[0], texts[1], texts[2], path=path, marker_size=marker_size, labels=labels)
    except Exception as exc:  # noqa: BLE001 - never lose a side: fall back to git's kind of merge
        print(f"memgit merge driver: {path}: {exc}; merged as plain text", file=sys.stderr)
        text, conflict = text_merge(texts[0], texts[1], texts[2], labels, marker_size=marker_size)
        merged = Merged(text, conflict, [])
    for note in merged.notes:
        print(f"memgit: {note}", file=sys.stderr)
    if merged.text != texts[1]:
        ours_file.write_bytes(merged.text.encode("utf-8", "surrogateescape"))
    if merged.conflict:
        print(f"memgit: {path}: both sides changed the same lines of the body; resolve the conflict markers "
              "in the body (the front-matter is merged)", file=sys.stderr)
        return 1
    return 0
