"""The one way memgit changes memory files: lock, finish, write a change set, commit.

Every write verb goes through a `Writer`: it refuses early when there is nowhere to commit,
takes the repository's write lock (with a timeout), first finishes whatever change set a
killed command left half-written, then lands the new change set as one commit (or one
staged change). `finish` and `abandon` settle an unfinished change on request, and
`commit_refusal` is what git's pre-commit hook says while one has files staged.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Sequence

from memgit.errors import MemgitError
from memgit.git import codeprint, localstate, repostate
from memgit.git import repo as gitrepo
from memgit.git.hooks import refresh
from memgit.git.mergesetup import ensure
from memgit.memory import format as fmt
from memgit.memory import against, lenient
from memgit.memory.format import Memory
from memgit.store import changeset
from memgit.store.folder import Store

Warn = Callable[[str], None]


class Writer:
    """Writes for one memory folder in one repository (None: reads only)."""

    def __init__(self, memory_dir: Path, repo: gitrepo.Repo | None, store: Callable[[], Store], warn: Warn,
                 *, lock_timeout: float | None = None) -> None:
        self.memory_dir = memory_dir
        self._repo = repo
        self._store = store
        self.warn = warn
        #: How long to wait for another writer's lock (None: $MEMGIT_LOCK_TIMEOUT, else 60 s).
        self.lock_timeout = lock_timeout
        #: Files derived from the memories (the rules files' memgit blocks), brought up to date
        #: just before each commit; it returns those it changed, and they go in the same commit.
        self.derived: Callable[[], list[Path]] | None = None
        #: Called once a change set has landed (the index takes memgit's own writes then, while
        #: it can tell them from anyone else's: see `memgit.index.changes`); never fails a write.
        self.landed: Callable[[], None] | None = None
        self._prints: codeprint.Prints | None = None  # the work tree's code fingerprints, cached by stat

    @property
    def repository(self) -> gitrepo.Repo | None:
        """The repository, or None for a folder outside git (reads only)."""
        return self._repo

    def repo(self) -> gitrepo.Repo:
        """The repository to commit in; refuses before anything is written when it can't."""
        if self._repo is None:
            raise MemgitError(
                f"{self.memory_dir} is not inside a git repository: changes are commits, "
                "so run 'git init' first (reads work anywhere)"
            )
        real = Path(os.path.realpath(self.memory_dir))
        if real != self._repo.root and self._repo.root not in real.parents:
            raise MemgitError(
                f"{self.memory_dir} leads outside the repository ({real}); memgit only writes "
                "memories it can commit in the repository"
            )
        busy = gitrepo.busy(self._repo)
        if busy:
            raise MemgitError(busy)
        return self._repo

    def commit(self, paths: Sequence[Path], message: str, commit: bool,
               index_before: changeset.IndexEntries | None = None) -> str | None:
        """Commit (or with `commit=False` stage) exactly `paths`, and the derived files they
        changed (`derived`)."""
        repo = self.repo()
        extra = self._derived(paths)
        if extra and index_before is not None:
            index_before = {**index_before, **gitrepo.index_entries(repo, [os.path.relpath(p, repo.root)
                                                                            for p in extra])}
        sha = gitrepo.commit(repo, [*paths, *extra], message, stage_only=not commit,
                             index_before=index_before)
        if sha and gitrepo.detached(repo):
            self.warn(f"HEAD is detached: commit {sha[:10]} is on no branch (git switch -c NAME keeps it)")
        return sha

    def _derived(self, paths: Sequence[Path]) -> list[Path]:
        """The derived files brought up to date for a commit of `paths`; never fails the commit."""
        if self.derived is None or not paths:
            return []
        try:
            return [p for p in self.derived() if p not in paths]
        except Exception as exc:  # noqa: BLE001 - a derived file is never worth a memory commit
            self.warn(f"the rules files' memgit block was not brought up to date ({exc}); "
                      "run 'memgit rules'")
            return []

    @contextmanager
    def writing(self) -> Iterator[gitrepo.Repo]:
        """The write lock, once whatever an interrupted memgit write left behind is finished."""
        repo = self.repo()
        with gitrepo.write_lock(repo, self.lock_timeout):
            self.recover(here_only=True)
            ensure(repo)  # a fresh clone names the merge driver in .gitattributes but lacks it
            refresh(repo)  # git hooks an older memgit wrote, which ran Python unisolated
            yield repo

    def journal(self) -> Path:
        repo = self._repo if self._repo is not None else self.repo()  # raises: no repository to write in
        return localstate.journal(repo.git_dir)

    def interrupted(self) -> changeset.Pending | None:
        """The change set a killed command left unfinished, if any (read only)."""
        if self._repo is None or gitrepo.writing_now(self._repo):
            return None  # no repository; or a write is running (it holds the lock), not interrupted
        found = changeset.pending(self.journal(), self._store().kinds, clean=False)
        return None if found is None or self._landed(found) else found

    def _landed(self, found: changeset.Pending) -> bool:
        """Whether HEAD already holds the change: git committed it, and memgit was stopped before
        it dropped the journal. Nothing is unfinished then, and nothing is left to undo."""
        if not found.change.commit or self._repo is None:
            return False
        repo, store = self._repo, found.change.store
        paths = {Path(os.path.relpath(store.path_of(rel), repo.root)).as_posix(): op
                 for rel, op in found.change.ops.items()}
        head = gitrepo.head_entries(repo, list(paths))
        for path, op in paths.items():
            blob = None if op.text is None else changeset.blob_id(op.text.encode("utf-8"))
            entry = head.get(path)
            if (entry.split()[1] if entry else None) != blob:
                return False
        return True

    def recover(self, *, here_only: bool = False) -> Settled | None:
        """Finish a change set a killed command (or a refused commit) left unfinished (under the
        write lock). With `here_only` (any other write), one made on another branch is refused:
        it would land on this branch unasked."""
        found = self._found()
        if found is None:
            return None
        made_on = found.change.branch
        elsewhere = made_on is not None and made_on != repostate.branch(self.repo().root)
        if here_only and elsewhere and not self._landed(found):
            raise MemgitError(f"a memgit change made on branch {made_on!r} did not finish, {found.summary}; "
                              f"switch back to {made_on} and run 'memgit finish' to commit it there, 'memgit "
                              "finish' here to commit it on this branch, or 'memgit abandon' to undo it")
        try:
            sha, left = changeset.finish(found, self.commit)
        except MemgitError as exc:
            raise type(exc)(f"memgit could not finish an interrupted change {found.summary}: {exc}") from None
        done = f"committed {sha[:10]}" if sha else "nothing left to commit"
        self.warn(f"finished an interrupted change {found.summary}: {done}")
        for rel in left:
            self.warn(f"left {rel} as it is: it was changed by hand after the interruption")
        return Settled(found.summary, sha, (), tuple(left))

    def _found(self) -> changeset.Pending | None:
        """The unfinished change set (under the write lock), its leftover temporary files removed."""
        journal = self.journal()
        for tmp in journal.parent.glob(f".{journal.name}.*.tmp"):
            tmp.unlink(missing_ok=True)  # a journal that was never complete: nothing was touched
        found = changeset.pending(journal, self._store().kinds)
        if found is None:
            return None
        for folder in {found.change.store.path_of(rel).parent for rel in found.change.ops}:
            for tmp in folder.glob(".tmp-*.md"):
                tmp.unlink(missing_ok=True)  # half-written files of the interrupted command
        return found

    def finish(self) -> Settled | None:
        """Complete the unfinished change set now (`memgit finish`); None when there is none."""
        repo = self.repo()
        with gitrepo.write_lock(repo, self.lock_timeout):
            return self.recover()

    def abandon(self) -> Settled | None:
        """Undo the unfinished change set (`memgit abandon`): each file back to its content
        before the change (or removed, when it was new), and git's index entries of those
        paths as they were; files changed by hand since are left alone. None when there is none
        (or when HEAD already holds it)."""
        repo = self.repo()
        with gitrepo.write_lock(repo, self.lock_timeout):
            found = self._found()
            if found is None:
                return None
            if self._landed(found):
                found.journal.unlink(missing_ok=True)
                self.warn(f"{found.summary} was already committed (HEAD) before memgit was stopped: nothing "
                          "to abandon; 'git revert' undoes that commit")
                return None
            store = found.change.store

            def from_root(rel: str) -> str:
                return Path(os.path.relpath(store.path_of(rel), repo.root)).as_posix()

            def committed(rel: str) -> bytes | None:
                return gitrepo.show(repo, "HEAD", from_root(rel))

            restored, left = changeset.abandon(found, committed)
            # The index as it was before the change (a journal without that record, from an
            # older memgit: HEAD's entries, nothing staged), but for files left alone.
            kept = [from_root(rel) for rel in found.change.ops if rel not in left]
            before = found.change.index if found.change.index is not None else gitrepo.head_entries(repo, kept)
            gitrepo.restore_index(repo, {path: before.get(path) for path in kept})
            # The blocks the change brought up to date, put back in step (and unstaged, when a
            # killed commit had staged them and they are HEAD's again).
            back = [os.path.relpath(p, repo.root) for p in self._derived([self._store().root])]
            head = gitrepo.head_entries(repo, back)
            unstage: dict[str, str | None] = {
                rel: entry for rel, entry in head.items()
                if entry and gitrepo.show(repo, "HEAD", rel) == (repo.root / rel).read_bytes()}
            if unstage:
                gitrepo.restore_index(repo, unstage)
            for rel in left:
                self.warn(f"left {rel} as it is: it was changed by hand after the interruption")
            return Settled(found.summary, None, tuple(restored), tuple(left))

    def delete(self, memory: Memory, message: str, commit: bool, force: bool) -> None:
        """Delete a memory's file as one commit (`forget --hard`; call inside `writing()`).
        Refused when the file has changes not committed, unless `force`."""
        if not force:
            self.keep_uncommitted(lambda: memory.path, "deleting it")
        repo, store = self.repo(), self._store()
        path = store.path_of(memory.path)
        if not gitrepo.committed(repo, path):
            staged = gitrepo.tracked(repo, path)  # added with --no-commit: unstage it too
            store.delete(memory.path)
            if staged:
                gitrepo.commit(repo, [path], "", stage_only=True)
            self.warn(f"{memory.id} was never committed: its file is deleted, and git cannot bring it back")
            return
        change = self.change(message, commit)
        change.delete(memory.path)
        self.land(change)

    def keep_uncommitted(self, rel: Callable[[], str], verb: str, *, forced: bool = True,
                         new_too: bool = False) -> None:
        """Refuse to `verb` a memory (its file is `rel()`) whose file has changes git does not
        hold (staged or not), as `git rm` does: they would be lost without a trace. `forced`:
        the command has a --force that drops them (say so). `new_too`: a file never committed
        is refused as well (its change set could not commit deleting it)."""
        repo = self.repo()
        try:
            path = self._store().path_of(rel())
        except MemgitError:
            return  # no such memory now (deleted): no file whose changes could be lost
        if (new_too or gitrepo.committed(repo, path)) and gitrepo.dirty(repo, path):
            shown = os.path.relpath(path, repo.root)
            raise MemgitError(
                f"{shown} has changes that are not committed, and {verb} would lose them: commit them "
                f"first to keep them in history (git commit {shown})"
                + (", or use --force to drop them" if forced else "")
            )

    def change(self, message: str, commit: bool = True) -> changeset.ChangeSet:
        return changeset.ChangeSet(self._store(), message, commit)

    def land(self, change: changeset.ChangeSet) -> str | None:
        """Write and commit a change set as one (call inside `writing()`)."""
        if change and self._repo is not None:
            root = self._repo.root
            change.index = gitrepo.index_entries(
                self._repo, [os.path.relpath(change.store.path_of(rel), root) for rel in change.ops])
            change.branch = repostate.branch(root)
        sha = change.land(self.journal(), self.commit)
        if self.landed is not None and change:
            try:
                self.landed()
            except Exception as exc:  # noqa: BLE001 - the files and the commit are done; the index catches up
                self.warn(f"the index did not take this change yet ({exc}); the next command does")
        return sha

    def add(self, memories: Sequence[Memory], message: str,
            commit: bool = True) -> tuple[list[Memory], str | None]:
        """Write new memories as one change and land it (call inside `writing()`): each
        without a path gets a file name no other file takes. Returns them with their paths,
        and the commit (None when only staged)."""
        store = self._store()
        taken: set[str] = set()
        placed = []
        for memory in memories:
            rel = memory.path or store.new_path(memory, taken)
            taken.add(rel)
            placed.append(self.stamped(memory if memory.path == rel else replace(memory, path=rel),
                                       save=False))
        if self._prints is not None:
            self._prints.save()  # once for the whole change (an import writes thousands)
        change = self.change(message, commit)
        for memory in placed:
            change.write(memory.path, self.text_of(memory))
        return placed, self.land(change)

    def stamped(self, new: Memory, old: Memory | None = None, *, again: bool = False,
                save: bool = True) -> Memory:
        """`new` recording the code its anchors point at in the work tree now (see
        `memgit.memory.against`); `again` records it even when an edit would keep the old record."""
        if self._repo is None:
            return new
        if self._prints is None:
            self._prints = codeprint.Prints(self._repo.root, self._repo.git_dir)
        self._prints.look_again()  # a checkout since the last write may have made a folder a link
        stamped = against.stamp(new, None if again else old, self._prints.of)
        if save:
            self._prints.save()
        return stamped

    def checked(self, memory: Memory) -> Memory:
        """`memory`, once `text_of` has checked that memgit can write it."""
        self.text_of(memory)
        return memory

    def text_of(self, memory: Memory) -> str:
        """The file text memgit writes for `memory`, checked to read back exactly."""
        text = fmt.dump(memory)
        lenient.parse(text, memory.path, self._store().kinds)
        return text


@dataclass(frozen=True)
class Settled:
    """An unfinished change finished (`sha`: its commit, if one was needed) or abandoned
    (`restored`: the files put back); `left`: files changed by hand since, left alone."""

    summary: str
    sha: str | None
    restored: tuple[str, ...]
    left: tuple[str, ...]


def commit_refusal(repo: gitrepo.Repo) -> str | None:
    """Why a user's `git commit` must wait (git's pre-commit hook), or None: the commit would
    take files staged by a memgit change that did not finish (a killed import). Its other
    files would be missing, and the change would ride along with unrelated work unseen."""
    journal = localstate.journal(repo.git_dir)
    if not journal.exists() or gitrepo.writing_now(repo):
        return None  # nothing unfinished; or memgit is committing it right now (its own commit)
    found = changeset.pending(journal, fmt.KINDS, clean=False)
    if found is None:
        return None
    rels = [os.path.relpath(found.change.store.path_of(rel), repo.root) for rel in found.change.ops]
    staged = gitrepo.staged_changes(repo, rels)
    if not staged:
        return None
    shown = ", ".join(staged[:3]) + (f" and {len(staged) - 3} more" if len(staged) > 3 else "")
    return (f"memgit: commit refused: {len(staged)} staged file(s) ({shown}) belong to a memgit change that did not "
            f"finish, {found.summary}.\nmemgit: run 'memgit finish' to commit it on its own (then commit again), "
            "or 'memgit abandon' to undo it; 'git commit --no-verify' commits anyway")


def check_fields(kinds: Sequence[str], **fields: object) -> None:
    """memgit's own writes are strict: refuse a value the format does not allow."""
    source, kind = fields.get("source"), fields.get("kind")
    if source is not None and source not in fmt.SOURCES:
        raise MemgitError(f"unknown source {source!r}; use one of {', '.join(fmt.SOURCES)}")
    if kind is not None and kind not in kinds:
        raise MemgitError(f"unknown kind {kind!r}; use one of {', '.join(kinds)}")
    task_id = fields.get("task_id")
    if task_id is not None and "\n" in str(task_id):
        raise MemgitError("task id must be one line")
    confidence = fields.get("confidence")
    if isinstance(confidence, (int, float)) and not 0.0 <= confidence <= 1.0:
        raise MemgitError(f"confidence {confidence} is outside 0..1")
