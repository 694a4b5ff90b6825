"""Change sets: several memory-file writes and deletes that land together, or not at all.

Every memgit write is a change set: the files it writes or deletes, and one commit (or one
staged change) holding exactly them. Before any file is touched, the whole change — each
path's new text, or its deletion, and a digest of what was there before — is saved to a
journal in the git dir (local, never committed). If the command dies half-way (a kill, a
crash, a full disk) or git refuses the commit (a hook), the journal stays: the next memgit write
(or `memgit finish`) writes what is missing and commits, so a teammate never pulls half an
import, and `memgit abandon` puts every file back as it was (the journal keeps the old text). A
file someone changed by hand in between (neither its old nor its new content) is left as it is
and reported.

This module does no git: `finish` takes the commit function from its caller, `abandon` a
function giving a file's committed bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from memgit.errors import MemgitError
from memgit.git import localstate
from memgit.store.folder import Store

#: Index entries (`mode sha stage`, None: not in the index) by path from the repository root.
IndexEntries = dict[str, "str | None"]
#: Commit (or stage) these paths with this message; the index entries are what to put back on failure.
Commit = Callable[[Sequence[Path], str, bool, "IndexEntries | None"], "str | None"]
#: Where a change stays when it cannot be committed, and the two ways out.
WAYS_OUT = "run 'memgit finish' to commit it once the cause is fixed, or 'memgit abandon' to undo it"


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def blob_id(data: bytes) -> str:
    """The id git gives a file with these bytes (SHA-1 object format), without running git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise MemgitError(f"{path} is a folder where a memory file should be; move it away") from None


@dataclass(frozen=True)
class Op:
    """One path's change: `text` is its new content, None to delete it."""

    rel: str
    text: str | None
    before: str | None  # sha256 of the bytes there before; None when there was no file
    old: str | None = None  # the text there before (when it was UTF-8): what `abandon` puts back


@dataclass
class ChangeSet:
    """The files one memgit command changes, and the message of its commit."""

    store: Store
    message: str
    commit: bool = True
    ops: dict[str, Op] = field(default_factory=dict)
    #: git's index entries of the paths before the change (set by the writer before landing).
    index: IndexEntries | None = None
    #: The branch the change was made on (None: detached HEAD, or a journal from an older memgit).
    branch: str | None = None

    def write(self, rel: str, text: str) -> None:
        """Set the file at `rel` (relative to the memory folder) to `text`."""
        self._add(rel, text)

    def delete(self, rel: str) -> None:
        self._add(rel, None)

    def _add(self, rel: str, text: str | None) -> None:
        path = self.store.path_of(rel)  # refuses paths outside the folder before anything is saved
        previous = self.ops.get(rel)
        if previous is not None:
            self.ops[rel] = Op(rel, text, previous.before, previous.old)
            return
        data = _read(path)
        try:
            old = None if data is None else data.decode("utf-8")
        except UnicodeDecodeError:
            old = None  # not text: abandon falls back to the committed version
        self.ops[rel] = Op(rel, text, digest(data), old)

    def __bool__(self) -> bool:
        return bool(self.ops)

    def __len__(self) -> int:
        return len(self.ops)

    # -- landing ---------------------------------------------------------------------------

    def land(self, journal: Path, commit: Commit) -> str | None:
        """Journal, write every file, commit them as one; returns the commit's sha.

        If the commit is refused (a hook, no git identity) or anything fails, the files stay
        written, git's index is as it was, and the journal stays for `memgit finish` or
        `memgit abandon`; the error says so.
        """
        if not self.ops:
            return None
        self._save(journal)
        try:
            paths = self._write_all()
        except MemgitError as exc:  # a file memgit may not write: the journal stays, and the error says so
            raise type(exc)(f"{exc}.\nThe change is kept in memgit's journal: {WAYS_OUT}.") from None
        return _commit_then_drop(journal, commit, paths, self)

    def _save(self, journal: Path) -> None:
        data = {
            "memory_dir": str(self.store.root),
            # Also from the journal's folder, so that a repository moved (or renamed) after a
            # kill still finishes the change in its own memory folder, not at the old path.
            "memory_dir_from_journal": os.path.relpath(self.store.root, journal.parent),
            "message": self.message,
            "commit": self.commit,
            "index": self.index,
            "branch": self.branch,
            "ops": [{"rel": op.rel, "text": op.text, "before": op.before, "old": op.old} for op in self.ops.values()],
        }
        _write_atomic(journal, json.dumps(data, ensure_ascii=False).encode("utf-8"))

    def _write_all(self, skip: Callable[[Op, bytes | None], bool] | None = None) -> list[Path]:
        paths = []
        for op in self.ops.values():
            path = self.store.path_of(op.rel)
            if skip is not None and skip(op, _read(path)):
                continue
            if op.text is None:
                self.store.delete(op.rel)
            else:
                self.store.write_text(op.rel, op.text)
            paths.append(path)
        return paths


@dataclass(frozen=True)
class Pending:
    """An interrupted change set found in the journal."""

    change: ChangeSet
    journal: Path

    @property
    def summary(self) -> str:
        """One short line: the commit's subject, how many files, the first few of them."""
        subject = (self.change.message.splitlines() or [""])[0]
        subject = subject if len(subject) <= 72 else subject[:71] + "…"
        rels = sorted(self.change.ops)
        shown = ", ".join(rels[:3]) + (f" and {len(rels) - 3} more" if len(rels) > 3 else "")
        return f"{subject!r} ({len(rels)} file(s): {shown})"


def pending(journal: Path, kinds: tuple[str, ...], *, clean: bool = True) -> Pending | None:
    """The interrupted change set in `journal`, if there is one that can be read.

    With `clean` (under the write lock), an unreadable journal is removed.
    """
    try:
        data = json.loads(journal.read_bytes())
        relative = data.get("memory_dir_from_journal")
        root = Path(os.path.normpath(journal.parent / relative)) if relative else Path(data["memory_dir"])
        if not root.is_dir():
            raise ValueError(f"{root} is gone")  # nothing of it can be finished here
        change = ChangeSet(Store(root, kinds), str(data["message"]), bool(data["commit"]))
        index = data.get("index")
        change.index = {str(k): None if v is None else str(v) for k, v in index.items()} if index else None
        change.branch = data["branch"] if isinstance(data.get("branch"), str) else None
        for item in data["ops"]:
            op = Op(str(item["rel"]), item["text"], item["before"], item.get("old"))
            change.store.path_of(op.rel)
            change.ops[op.rel] = op
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, MemgitError):
        # Only a half-written journal can be unreadable (it is replaced atomically), and then
        # no memory file was touched yet: there is nothing to finish.
        if clean:
            journal.unlink(missing_ok=True)
        return None
    return Pending(change, journal)


def finish(found: Pending, commit: Commit) -> tuple[str | None, list[str]]:
    """Complete an interrupted change set; returns its commit and the paths left alone.

    A path whose content is neither what was there before nor the new text was changed by
    someone since the interruption: it is not overwritten.
    """
    left: list[str] = []

    def skip(op: Op, current: bytes | None) -> bool:
        new = None if op.text is None else digest(op.text.encode("utf-8"))
        now = digest(current)
        if now == new:
            return False  # already written: still part of the commit
        if now == op.before:
            return False
        left.append(op.rel)
        return True

    paths = found.change._write_all(skip)
    if not paths:
        found.journal.unlink(missing_ok=True)
        return None, left
    return _commit_then_drop(found.journal, commit, paths, found.change), left


def abandon(found: Pending, committed: Callable[[str], bytes | None]) -> tuple[list[str], list[str]]:
    """Put every file of an interrupted change set back as it was before it; returns the paths
    put back and the paths left alone (changed by hand since, or whose old content is known
    neither from the journal nor from `committed(rel)`). Drops the journal. The caller puts
    git's index back."""
    restored: list[str] = []
    left: list[str] = []
    for op in found.change.ops.values():
        path = found.change.store.path_of(op.rel)
        now = digest(_read(path))
        if now == op.before:
            continue  # never written, or written back already
        if now != digest(None if op.text is None else op.text.encode("utf-8")):
            left.append(op.rel)  # neither old nor new: someone's edit since
            continue
        old = None if op.old is None else op.old.encode("utf-8")
        if op.before is not None and digest(old) != op.before:
            old = committed(op.rel)
            if digest(old) != op.before:
                left.append(op.rel)
                continue
        if old is None:
            found.change.store.delete(op.rel)
        else:
            _write_atomic(path, old)
        restored.append(op.rel)
    found.journal.unlink(missing_ok=True)
    return restored, left


def _commit_then_drop(journal: Path, commit: Commit, paths: Sequence[Path], change: ChangeSet) -> str | None:
    """Commit `paths`, then drop the journal. Whatever fails (git cannot stage, a hook refuses,
    an interruption), the journal stays and git's index is put back as it was, so the change
    is never half in git: `memgit finish` or the next memgit write commits it, `memgit
    abandon` undoes it."""
    try:
        sha = commit(paths, change.message, change.commit, change.index)
    except MemgitError as exc:
        raise type(exc)(f"{exc}.\nThe change is kept in memgit's journal: {WAYS_OUT}.") from None
    journal.unlink(missing_ok=True)
    return sha


def _write_atomic(path: Path, data: bytes) -> None:
    try:
        localstate.replace(path, data, durable=True)
    except OSError as exc:
        raise MemgitError(f"cannot write {path} ({exc.strerror or exc}); check permissions and disk space") from None
