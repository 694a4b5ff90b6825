"""A reflection in pages, for an agent: a summary, then the proposals a page at a time.

On a store of thousands of memories every proposal with its files' texts and the whole diff
is megabytes, more than an agent can read in one answer. A page holds the summary (how many
proposals of each kind), at most `size` proposals, each with the diff it makes (against the
files as the proposals before it left them, so the pages' diffs applied in order make the
whole diff), and stays within `max_bytes` of JSON. `next_cursor` asks for the next page.

A cursor names where the next page starts and a fingerprint of what reflect proposed. A
first page always runs reflect; the next pages reuse that run (`Pager`) while no file of the
memory folder changed (and for at most `KEEP_SECONDS`), else run it again. When the store
changed so that its proposals are not the same, an old cursor is refused with a message
saying to start again, rather than pointing into a different list. The fingerprint leaves out
what changes with the clock alone (the `updated` stamp a change writes, ages in the evidence).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memgit.errors import MemgitError
from memgit.reflect.proposals import Proposal, Reflection, unified_diff

#: Proposals on a page unless asked otherwise, and at most.
PAGE_SIZE = 20
MAX_PAGE_SIZE = 200
#: Malformed files and notes listed on a page at most (all are counted in the summary).
MAX_LISTED = 20
#: How long the next pages may reuse the reflect run of the first, the memory folder unchanged.
KEEP_SECONDS = 600.0

_CURSOR = re.compile(r"^r1\.(\d{1,9})\.([0-9a-f]{16})$")


def fingerprint(reflection: Reflection) -> str:
    """What the proposals are, without what changes with the clock alone: 16 hex digits."""
    touched = {c.path for p in reflection.proposals for c in p.changes}
    shape = {
        "proposals": [
            [p.kind, list(p.ids), p.what, [[c.path, c.text is None] for c in p.changes]]
            for p in reflection.proposals
        ],
        "before": sorted((path, reflection.before.get(path)) for path in touched),
        "problems": list(reflection.problems),
    }
    data = json.dumps(shape, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hashlib.sha256(data).hexdigest()[:16]


def cursor(start: int, mark: str) -> str:
    return f"r1.{start}.{mark}"


def _start(given: str | None, mark: str, total: int) -> int:
    if not given:
        return 0
    found = _CURSOR.match(given.strip())
    if found is None or int(found.group(1)) > total:
        raise MemgitError(
            f"{given!r} is not a cursor reflect gave: pass the `next_cursor` of the page before, "
            "or no cursor for the first page"
        )
    if found.group(2) != mark:
        raise MemgitError(
            "the memory store changed since this cursor was given, so reflect's proposals are not "
            "the ones it pointed into; call reflect again without a cursor to start from the first page"
        )
    return int(found.group(1))


def summary(reflection: Reflection) -> dict[str, Any]:
    changes = len(reflection.actionable)
    return {
        "proposals": len(reflection.proposals),
        "changes": changes,
        "for_review": len(reflection.proposals) - changes,
        "by_kind": dict(sorted(Counter(p.kind for p in reflection.proposals).items())),
        "malformed_files": len(reflection.problems),
    }


def page(reflection: Reflection, *, given: str | None = None, size: int = PAGE_SIZE,
         max_bytes: int = 60_000) -> dict[str, Any]:
    """The page `given` (a cursor; None: the first) of `reflection`: at most `size`
    proposals and `max_bytes` of JSON, at least one proposal when one is left."""
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise MemgitError(f"page_size {size}: use a number from 1 to {MAX_PAGE_SIZE}")
    proposals = reflection.proposals
    mark = fingerprint(reflection)
    start = _start(given, mark, len(proposals))
    out: dict[str, Any] = {
        "summary": summary(reflection),
        "problems": list(reflection.problems[:MAX_LISTED]),
        "notes": list(reflection.notes[:MAX_LISTED]),
        "first": start + 1,
        "proposals": [],
        "next_cursor": cursor(len(proposals), mark),  # the longest it can be, while measuring
    }
    used = _size(out)
    state = _state_before(reflection, start)
    items: list[dict[str, Any]] = []
    for number, proposal in enumerate(proposals[start:start + size], start + 1):
        item = _item(number, proposal, state, reflection.prefix)
        cost = _size(item) + 2
        if items and used + cost > max_bytes:
            break
        if used + cost > max_bytes:
            item = _cut_diff(item, max_bytes - used)
            cost = _size(item) + 2
        items.append(item)
        used += cost
        for change in proposal.changes:
            state[change.path] = change.text
    end = start + len(items)
    out["proposals"] = items
    out["next_cursor"] = cursor(end, mark) if end < len(proposals) else None
    return out


class Pager:
    """Pages for a long-lived server: the reflect run of a first page, kept for the next pages
    while the memory folder's files are as they were (a run takes seconds on a large store)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: tuple[str, str, float, Reflection] | None = None  # (folder state, mark, when, run)

    def answer(self, run: Callable[[], Reflection], folder: Path, only: Sequence[str], *,
               given: str | None = None, size: int = PAGE_SIZE, max_bytes: int = 60_000) -> dict[str, Any]:
        state = folder_state(folder, only)
        with self._lock:
            kept = self._kept
        found = _CURSOR.match(given.strip()) if given else None
        if (found is not None and kept is not None and kept[0] == state and kept[1] == found.group(2)
                and time.monotonic() - kept[2] < KEEP_SECONDS):
            reflection = kept[3]
        else:
            reflection = run()
            with self._lock:
                self._kept = (state, fingerprint(reflection), time.monotonic(), reflection)
        return page(reflection, given=given, size=size, max_bytes=max_bytes)


def folder_state(folder: Path, only: Sequence[str]) -> str:
    """Every file under the memory folder by path, size and modification time (and `only`):
    a different value when a memory was added, edited or removed."""
    entries = [",".join(sorted(only))]
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            try:
                stat = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            entries.append(f"{os.path.join(root, name)}\0{stat.st_size}\0{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(entries).encode("utf-8", "surrogateescape")).hexdigest()


def _state_before(reflection: Reflection, start: int) -> dict[str, str | None]:
    """Each file's text as the proposals before `start` left it."""
    state: dict[str, str | None] = dict(reflection.before)
    for proposal in reflection.proposals[:start]:
        for change in proposal.changes:
            state[change.path] = change.text
    return state


def _item(number: int, proposal: Proposal, state: dict[str, str | None], prefix: str) -> dict[str, Any]:
    before = {c.path: text for c in proposal.changes if (text := state.get(c.path)) is not None}
    after = {c.path: c.text for c in proposal.changes}
    return {
        "number": number,
        **{key: value for key, value in proposal.to_dict().items() if key != "changes"},
        "files": [{"path": c.path, "delete": c.text is None} for c in proposal.changes],
        "diff": unified_diff(before, after, prefix),
    }


def _cut_diff(item: dict[str, Any], room: int) -> dict[str, Any]:
    """One proposal bigger than a page: its diff cut to fit, saying so."""
    note = "\n… (diff cut to fit the answer: `memgit reflect` prints it whole)\n"
    diff = str(item["diff"])
    keep = max(0, len(diff) - (_size(item) + 2 - room) - len(note.encode("utf-8")) - 64)
    while keep > 0 and _size({**item, "diff": diff[:keep] + note}) + 2 > room:
        keep = keep * 3 // 4
    return {**item, "diff": diff[:keep] + note}


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
