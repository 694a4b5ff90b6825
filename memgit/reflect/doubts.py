"""`memgit doubts A..B`: the memories whose code a revision range changes, renames or deletes.

For a pull request: each memory's code anchors (`memgit.memory.against.code_anchors`) are looked
up in the range's diff (git's rename detection on). A file anchor counts when its file changed,
moved or went; a `path::symbol` anchor only when that definition's fingerprint
(`memgit.git.codeprint`) differs between the two ends — an edit elsewhere in the file is not a
doubt. A definition gone from its file is looked for as renamed (the same body under a new name,
Python) or moved (the same definition in another file the range changed). A doubt is
"resolved" when the memory itself records the new code (it was edited or `memgit verify`-ed in
the range); `failing(pinned=True)` is the pinned memories left doubtful, for CI.

The Markdown goes into a pull-request comment: every value from the repository is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memgit.errors import MemgitError
from memgit.git import codeprint, runner
from memgit.git.memdiff import _code, _md, revisions
from memgit.git.repo import Repo
from memgit.index.workspace import Workspace
from memgit.memory import against
from memgit.memory.format import Memory
from memgit.recall import codecheck, lookup


@dataclass(frozen=True)
class AnchorChange:
    """What the range did to one anchor: `change` is "changed", "renamed" (the file, or the
    symbol within it), "moved" (the definition to another file) or "deleted"; `new` the anchor
    it became; `commits` the range's commits that touched its file (`sha subject`)."""

    anchor: str
    change: str
    new: str | None = None
    commits: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"anchor": self.anchor, "change": self.change, "new": self.new, "commits": list(self.commits)}


@dataclass(frozen=True)
class Doubtful:
    """A memory the range makes doubtful; `resolved` when it records the range's new code."""

    memory: Memory
    path: str
    changes: tuple[AnchorChange, ...]
    resolved: bool = False

    def to_dict(self) -> dict[str, Any]:
        m = self.memory
        return {"id": m.id, "title": m.title, "path": self.path, "pinned": m.pinned,
                "resolved": self.resolved,
                "changes": [c.to_dict() for c in self.changes]}


@dataclass(frozen=True)
class Doubts:
    """The memories a range `base..head` makes doubtful."""

    base: str
    head: str
    memories: tuple[Doubtful, ...] = field(default=())

    def failing(self, *, pinned: bool = True) -> list[Doubtful]:
        """The doubtful memories not resolved (only the pinned ones, with `pinned`)."""
        return [d for d in self.memories if not d.resolved and (d.memory.pinned or not pinned)]

    def to_dict(self) -> dict[str, Any]:
        return {"base": self.base, "head": self.head, "memories": [d.to_dict() for d in self.memories]}

    def markdown(self) -> str:
        """A pull-request comment."""
        if not self.memories:
            return "No memory's code is changed by this range.\n"
        lines = [f"## Memories this change makes doubtful ({len(self.memories)})", ""]
        for d in self.memories:
            m = d.memory
            flags = ", ".join(f for f in ("pinned" if m.pinned else "", "verified in this range" if d.resolved
                                          else "") if f)
            flagged = f", {flags}" if flags else ""
            lines.append(f"- **{_md(m.title)}** ({_code(m.id)}{flagged}) — {_code(d.path)}")
            for c in d.changes:
                what = {"changed": "changed", "deleted": "deleted", "renamed": "renamed to",
                        "moved": "moved to"}.get(c.change, c.change)
                new = f" {_code(c.new)}" if c.new else ""
                short = ", ".join(_code(s.split(" ", 1)[0]) for s in c.commits[:3])
                shas = f" ({short})" if c.commits else ""
                lines.append(f"  - {_code(c.anchor)} {what}{new}{shas}")
            if not d.resolved and any(c.change == "deleted" for c in d.changes):
                lines.append(f"  - its code is gone (`memgit verify` refuses it): edit it, or `memgit forget {_md(m.id)}`")
            elif not d.resolved:
                renamed = any(c.change in ("renamed", "moved") for c in d.changes)
                lines.append(f"  - check it, then `memgit verify {_md(m.id)}`"
                             + (" (`memgit reflect --apply` fixes renamed paths)" if renamed else "")
                             + " or edit it")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _FileChange:
    status: str
    new: str | None


def file_changes(repo: Repo, base: str, head: str) -> dict[str, _FileChange]:
    """Files the range changed, by their path at `base` (renames found; added files by their new path)."""
    done = runner.run(["-c", "core.quotePath=false", "diff", "--raw", "-z", "-M", "--no-abbrev", base, head],
                      repo.root)
    fields = done.stdout.split("\0") if done.ok else []
    out: dict[str, _FileChange] = {}
    i = 0
    while i < len(fields) and fields[i].startswith(":"):
        status = fields[i].split(" ")[4][:1]
        if status in ("R", "C"):
            if status == "R":
                out[fields[i + 1]] = _FileChange("R", fields[i + 2])
            out.setdefault(fields[i + 2], _FileChange("A", fields[i + 2]))
            i += 3
        else:
            out[fields[i + 1]] = _FileChange(status, None if status == "D" else fields[i + 1])
            i += 2
    return out


def _commits(repo: Repo, base: str, head: str, paths: Iterable[str]) -> dict[str, list[str]]:
    paths = [p for p in paths if codeprint.inside_name(p)]
    if not paths:
        return {}
    done = runner.run(["-c", "core.quotePath=false", "log", "--format=%x01%h %s", "--name-only",
                       f"{base}..{head}", "--", *paths], repo.root)
    out: dict[str, list[str]] = {}
    current = ""
    for line in done.stdout.splitlines() if done.ok else ():
        if line.startswith("\x01"):
            current = line[1:]
        elif line:
            out.setdefault(line, []).append(current)
    return out


class CodeChecks:
    """Memories and the code they describe, as `Memgit.code` gives them."""

    def __init__(self, ws: Workspace) -> None:
        self.workspace = ws

    def doubts(self, rev_range: str) -> Doubts:
        """The memories whose code `rev_range` (`A..B`, `A...B`) changes, renames or deletes."""
        return run(self.workspace, rev_range)

    def verify(self, ref: str, *, commit: bool = True) -> Memory:
        """Record that a memory holds for its code as it is now (its fingerprints again), as a commit."""
        return codecheck.verify(self.workspace, ref, commit)


def run(ws: Workspace, rev_range: str) -> Doubts:
    """`check` on the store's memories (what `memgit doubts` runs)."""
    ws.require_store()
    if not rev_range.strip():
        raise MemgitError("give a revision range, such as origin/main...HEAD")
    repo = ws.writer.repo()
    return check(repo, [(m, ws.rel_path(m)) for m in lookup.current(ws)], rev_range)


def check(repo: Repo, memories: Sequence[tuple[Memory, str]], rev_range: str) -> Doubts:
    """The memories (each with its path from the root) whose code `rev_range` changes."""
    base, maybe_head = revisions(repo, rev_range)
    head = maybe_head or "HEAD"
    files = file_changes(repo, base, head)
    touched = [(m, p, [a for a in against.code_anchors(m) if a.partition("::")[0] in files])
               for m, p in memories]
    touched = [(m, p, anchors) for m, p, anchors in touched if anchors]
    if not touched:
        return Doubts(base, head)
    wanted = {a.partition("::")[0] for _, _, anchors in touched for a in anchors}
    news = {files[p].new for p in wanted if files[p].new}
    blobs = codeprint.read_blobs(repo.root, [*(f"{base}:{p}" for p in wanted),
                                             *(f"{head}:{p}" for p in news if p)])
    commits = _commits(repo, base, head, wanted | {p for p in news if p})
    moved_to = _Movers(repo, base, head, files)
    # Memory files new in the range (not a rename of one that was there before).
    written = {p for p, f in files.items() if f.status == "A"} - {f.new for f in files.values() if f.status == "R"}
    out = []
    for memory, path, anchors in touched:
        changes = []
        by_symbol = against.names_symbols(memory)
        for anchor in anchors:
            if by_symbol and "::" not in anchor and files[anchor].status == "M":
                continue  # its symbols say whether what the memory is about changed
            change = _anchor_change(anchor, files, blobs, base, head, moved_to)
            if change is not None:
                file = anchor.partition("::")[0]
                shas = commits.get(files[file].new or file, []) or commits.get(file, [])
                changes.append(AnchorChange(change[0], change[1], change[2], tuple(shas)))
        if changes:
            resolved = _resolved(memory, changes, blobs, head)
            if resolved and path in written:
                continue  # written in the range against the range's own code: nothing to doubt
            out.append(Doubtful(memory, path, tuple(changes), resolved))
    out.sort(key=lambda d: (not d.memory.pinned, d.memory.id))
    return Doubts(base, head, tuple(out))


def _anchor_change(anchor: str, files: dict[str, _FileChange], blobs: dict[str, bytes | None], base: str,
                   head: str, movers: _Movers) -> tuple[str, str, str | None] | None:
    path, sep, symbol = anchor.partition("::")
    fc = files[path]
    old = blobs.get(f"{base}:{path}")
    new = blobs.get(f"{head}:{fc.new}") if fc.new else None
    if not (sep and symbol):
        if fc.status == "D" or new is None:
            return anchor, "deleted", None
        return (anchor, "renamed", fc.new) if fc.status == "R" else (anchor, "changed", None)
    if old is None:
        return None  # the file was added: the memory named it before it existed here
    before = codeprint.symbol_print(path, old, symbol)
    if before == codeprint.GONE:
        return None  # not there before the range: nothing the memory said of it changed here
    after = codeprint.symbol_print(fc.new, new, symbol) if new is not None and fc.new else codeprint.GONE
    moved = f"{fc.new}::{symbol}" if fc.status == "R" else None
    if after == codeprint.GONE:
        if new is not None and fc.new:
            renamed = codeprint.renamed_in(path, old, new, symbol)
            if renamed:
                return anchor, "renamed", f"{fc.new}::{renamed}"
        elsewhere = movers.find(path, old, symbol, before)
        return (anchor, "moved", elsewhere) if elsewhere else (anchor, "deleted", None)
    if before == after and before is not None:
        return (anchor, "renamed", moved) if moved else None
    return anchor, "changed", moved


class _Movers:
    """Where a definition gone from its file went: another file of the range defining it alike."""

    def __init__(self, repo: Repo, base: str, head: str, files: dict[str, _FileChange]) -> None:
        self.repo, self.head = repo, head
        self.candidates = [fc.new for fc in files.values() if fc.new and fc.status in ("A", "M", "R")]
        self._blobs: dict[str, bytes | None] | None = None
        self._bodies: dict[tuple[str, str], str] = {}

    def _body(self, path: str, name: str, node: Any) -> str:
        key = (path, name)
        if key not in self._bodies:
            self._bodies[key] = codeprint.python_print(node, named=False)
        return self._bodies[key]

    def find(self, path: str, old: bytes, symbol: str, before: str | None) -> str | None:
        if not codeprint.is_python(path):
            return None
        if self._blobs is None:
            python = [p for p in self.candidates if codeprint.is_python(p)][:200]
            self._blobs = codeprint.read_blobs(self.repo.root, (f"{self.head}:{p}" for p in python))
        last = symbol.replace("::", ".").split(".")[-1]
        defs = codeprint.python_defs(old)
        node = codeprint.find_python(defs, symbol) if defs else None
        body = codeprint.python_print(node, named=False) if node is not None else None
        for spec, data in self._blobs.items():
            other = spec.split(":", 1)[1]
            if data is None or other == path:
                continue
            there = codeprint.python_defs(data) or {}
            for name, n in there.items():
                if name.rsplit(".", 1)[-1] == last and (before is None or self._body(other, name, n) == body):
                    return f"{other}::{name}"
        return None


def _resolved(memory: Memory, changes: Sequence[AnchorChange], blobs: dict[str, bytes | None],
              head: str) -> bool:
    """Whether the memory records its code as `head` has it (it was verified or edited since)."""
    record = against.recorded(memory) or {}
    for c in changes:
        if c.change != "changed" or c.anchor not in record:
            return False
        path, sep, symbol = c.anchor.partition("::")
        data = blobs.get(f"{head}:{path}")
        if data is None:
            return False
        now = codeprint.symbol_print(path, data, symbol) if sep else codeprint.blob_id(data)
        if now is None or now != record[c.anchor]:
            return False
    return True
