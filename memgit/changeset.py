"""Change sets: several memory-file writes and deletes that land together, or not at all.

Every memgit write is a change set: the files it writes or deletes, and one commit (or one
staged change) holding exactly them. Before any file is touched, the whole change — each
path's new text, or its deletion, and a digest of what was there before — is saved to a
journal in the git dir (local, never committed). If the command dies half-way (a kill, a
crash, a full disk), the next memgit write finds the journal and finishes the job: it writes
what is missing and commits, so a teammate never pulls half an import. A file someone changed
by hand in between (neither its old nor its new content) is left as it is and reported.

This module does no git: `finish` takes the commit function from its caller.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from memgit.errors import MemgitError, NotStaged
from memgit.store import Store

JOURNAL_NAME = "changeset.json"
Commit = Callable[[Sequence[Path], str, bool], "str | None"]


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


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


@dataclass
class ChangeSet:
    """The files one memgit command changes, and the message of its commit."""

    store: Store
    message: str
    commit: bool = True
    ops: dict[str, Op] = field(default_factory=dict)

    def write(self, rel: str, text: str) -> None:
        """Set the file at `rel` (relative to the memory folder) to `text`."""
        self._add(rel, text)

    def delete(self, rel: str) -> None:
        self._add(rel, None)

    def _add(self, rel: str, text: str | None) -> None:
        path = self.store.path_of(rel)  # refuses paths outside the folder before anything is saved
        previous = self.ops.get(rel)
        before = previous.before if previous is not None else digest(_read(path))
        self.ops[rel] = Op(rel, text, before)

    def __bool__(self) -> bool:
        return bool(self.ops)

    def __len__(self) -> int:
        return len(self.ops)

    # -- landing ---------------------------------------------------------------------------

    def land(self, journal: Path, commit: Commit) -> str | None:
        """Journal, write every file, commit them as one; returns the commit's sha.

        If the commit is refused (a hook, no git identity), the files stay written and staged
        and the error says so; the journal is dropped, since the user now decides.
        """
        if not self.ops:
            return None
        self._save(journal)
        paths = self._write_all()
        return _commit_then_drop(journal, commit, paths, self.message, self.commit)

    def _save(self, journal: Path) -> None:
        data = {
            "memory_dir": str(self.store.root),
            # Also from the journal's folder, so that a repository moved (or renamed) after a
            # kill still finishes the change in its own memory folder, not at the old path.
            "memory_dir_from_journal": os.path.relpath(self.store.root, journal.parent),
            "message": self.message,
            "commit": self.commit,
            "ops": [{"rel": op.rel, "text": op.text, "before": op.before} for op in self.ops.values()],
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
        return f"{self.change.message!r} ({len(self.change)} file(s))"


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
        for item in data["ops"]:
            op = Op(str(item["rel"]), item["text"], item["before"])
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
    return _commit_then_drop(found.journal, commit, paths, found.change.message, found.change.commit), left


def _commit_then_drop(journal: Path, commit: Commit, paths: Sequence[Path], message: str, really: bool) -> str | None:
    """Commit `paths`, then drop the journal: once the change is (at least) staged, git holds
    it. If git could not even stage it (a stale index.lock), the journal stays, so the next
    memgit write finishes the change once the cause is fixed."""
    try:
        sha = commit(paths, message, really)
    except NotStaged as exc:
        raise NotStaged(f"{exc}\nThe memory files are written but not committed; once that is fixed, the next "
                        "memgit write (or 'memgit lint --fix') commits them.") from None
    except BaseException:
        journal.unlink(missing_ok=True)
        raise
    journal.unlink(missing_ok=True)
    return sha


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise MemgitError(f"cannot write {path} ({exc.strerror or exc}); check permissions and disk space") from None
