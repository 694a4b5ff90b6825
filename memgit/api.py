"""The front door: `memgit.open(path)` returns a `Memgit` whose methods are the verbs.

The CLI, and later the hooks and the MCP server, only call these methods.
"""

from __future__ import annotations

import builtins  # `Memgit.list` shadows the builtin inside the class
import os
import sys
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from memgit import config as config_mod
from memgit import gitrepo
from memgit.history import Change, changes_of, version_at
from memgit import memory as fmt
from memgit.errors import MemgitError
from memgit.memory import Memory, Problem
from memgit.session import MEMORY_DIR, Session, index_path
from memgit.store import Store

if TYPE_CHECKING:
    from memgit.index import Index, SyncReport
    from memgit.transfer import ImportReport
    from memgit.recall import Hit

Warn = Callable[[str], None]


def _stderr(message: str) -> None:
    print(f"memgit: {message}", file=sys.stderr)


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class Remembered:
    """What `remember` did: `created` is False when `duplicate_of` already held the text."""

    memory: Memory
    created: bool
    commit: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def duplicate_of(self) -> str | None:
        return None if self.created else self.memory.id


def open(path: str | os.PathLike[str] = ".", *, memory_dir: str | os.PathLike[str] | None = None,
         warn: Warn | None = None, warm: bool = False) -> "Memgit":
    """Open the memory store of the repository containing `path`.

    `memory_dir` uses another folder as the memory folder: reads work on any folder, inside a
    git repository or not; writes need the folder to be inside a git repository. `warm` lets
    recall use (and start) a background process that keeps the embedding model loaded between
    short-lived calls, as the CLI does (`[index] warm = false` turns it off); a long-lived
    process does not need it.
    """
    start = Path(path).resolve()
    if not start.exists():
        raise MemgitError(f"{start} does not exist")
    if memory_dir is not None:
        if not str(memory_dir).strip():
            raise MemgitError("--memory-dir needs a folder")
        folder = Path(memory_dir)
        folder = (start / folder if not folder.is_absolute() else folder).resolve()
        repo = gitrepo.find(folder)
    else:
        repo = gitrepo.require(start)
        folder = repo.root / MEMORY_DIR
    return Memgit(folder, repo, warn or _stderr, warm=warm)


class Memgit:
    """A memory store: a folder of memory files, usually `.memory/` in a git repository."""

    def __init__(self, memory_dir: Path, repo: gitrepo.Repo | None, warn: Warn, *, warm: bool = False) -> None:
        self.memory_dir = memory_dir
        self.warm = warm
        self.repo = repo
        self.warn = warn
        self._session = Session(memory_dir, repo, warn, warm=warm)

    # -- plumbing ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the index; the store stays usable (the next call opens it again)."""
        self._session.close()

    def __enter__(self) -> "Memgit":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def config(self) -> config_mod.Config:
        """The settings, read again when `.memory/config.toml` changes."""
        return self._session.config

    @property
    def store(self) -> Store:
        return Store(self.memory_dir, self.config.kinds)

    def _require_store(self) -> None:
        if not self.memory_dir.is_dir():
            if self.repo is not None and self.memory_dir == self.repo.root / MEMORY_DIR:
                raise MemgitError(f"no {MEMORY_DIR}/ in {self.repo.root}; run 'memgit init' first")
            state = "is not a folder" if self.memory_dir.exists() else "does not exist"
            raise MemgitError(f"memory folder {self.memory_dir} {state}")

    def _require_repo(self) -> gitrepo.Repo:
        """The repository to commit in; refuses before anything is written when it can't."""
        if self.repo is None:
            raise MemgitError(
                f"{self.memory_dir} is not inside a git repository: changes are commits, "
                "so run 'git init' first (reads work anywhere)"
            )
        real = Path(os.path.realpath(self.memory_dir))
        if real != self.repo.root and self.repo.root not in real.parents:
            raise MemgitError(
                f"{self.memory_dir} leads outside the repository ({real}); memgit only writes "
                "memories it can commit in the repository"
            )
        busy = gitrepo.busy(self.repo)
        if busy:
            raise MemgitError(busy)
        return self.repo

    def _commit(self, paths: Sequence[Path], message: str, commit: bool) -> str | None:
        repo = self._require_repo()
        sha = gitrepo.commit(repo, paths, message, stage_only=not commit)
        if sha and gitrepo.detached(repo):
            self.warn(f"HEAD is detached: commit {sha[:10]} is on no branch (git switch -c NAME keeps it)")
        return sha

    def _load(self) -> list[Memory]:
        loaded = self.store.load()
        for problem in loaded.problems:
            self.warn(f"skipping {problem} (see 'memgit lint')")
        return loaded.memories

    def rel_path(self, memory: Memory) -> str:
        """A memory's path relative to the repository root (or to the memory folder)."""
        base = self.repo.root if self.repo is not None else self.memory_dir
        return Path(os.path.relpath(self.memory_dir / memory.path, base)).as_posix()

    # -- verbs ---------------------------------------------------------------------------

    def init(self, *, commit: bool = True) -> bool:
        """Create the memory folder and its config. Returns False if it already existed."""
        repo = self._require_repo()
        config_path = self.memory_dir / config_mod.CONFIG_NAME
        if self.memory_dir.exists() and not self.memory_dir.is_dir():
            raise MemgitError(f"{self.memory_dir} exists and is not a folder; move it away and run 'memgit init'")
        with gitrepo.write_lock(repo):
            created = not config_path.exists()
            if created:
                self.memory_dir.mkdir(parents=True, exist_ok=True)
                Store(self.memory_dir).write_text(config_mod.CONFIG_NAME, config_mod.DEFAULT_TOML)
            # Also commits a config an earlier, interrupted init left uncommitted.
            self._commit([config_path], "memory: init", commit)
        return created

    def remember(
        self,
        text: str,
        *,
        title: str | None = None,
        kind: str = "fact",
        entity: str = "",
        source: str = "user",
        confidence: float | None = None,
        task_id: str | None = None,
        tags: Sequence[str] = (),
        files: Sequence[str] = (),
        symbols: Sequence[str] = (),
        supersedes: Sequence[str] = (),
        force: bool = False,
        allow_secret: bool = False,
        commit: bool = True,
    ) -> Remembered:
        """Write a new memory and commit it; the same text twice is not duplicated."""
        self._require_store()
        text = text.removeprefix("\ufeff").replace("\r\n", "\n").strip()
        if not text and not title:
            raise MemgitError("nothing to remember: give the text as an argument, with --file, or on stdin")
        reason = fmt.bad_text(f"{title or ''}{text}")
        if reason:
            raise MemgitError(f"the text {reason}; nothing was saved")
        title, body = fmt.split_title(text, title)
        if not allow_secret:
            _refuse_secrets(f"{title}\n{body}")
        budget = self.config.memory_token_budget
        tokens = fmt.count_tokens(body)
        if tokens > budget and not force:
            raise MemgitError(
                f"the body is about {tokens} tokens, {tokens - budget} over the budget of {budget}: "
                "shorten it, split it into several memories, or use --force"
            )
        if source not in fmt.SOURCES:
            raise MemgitError(f"unknown source {source!r}; use one of {', '.join(fmt.SOURCES)}")
        if kind not in self.config.kinds:
            raise MemgitError(f"unknown kind {kind!r}; use one of {', '.join(self.config.kinds)}")
        if confidence is None:
            confidence = fmt.DEFAULT_CONFIDENCE[source]
        if not 0.0 <= confidence <= 1.0:
            raise MemgitError(f"confidence {confidence} is outside 0..1")
        if task_id is not None and "\n" in task_id:
            raise MemgitError("task id must be one line")
        repo = self._require_repo()
        with gitrepo.write_lock(repo):
            memories = self._current()
            key = fmt.normalized_text(title, body)
            for existing in memories:
                if existing.active and fmt.normalized_text(existing.title, existing.body) == key:
                    # If an earlier attempt wrote it but its commit failed (a hook, no git
                    # identity), this run finishes the job.
                    path = self.memory_dir / existing.path
                    sha = None
                    if not gitrepo.committed(repo, path):  # never touch a committed file's edits
                        sha = self._commit([path], f'memory: add "{_short(existing.title)}"', commit)
                    return Remembered(existing, created=False, commit=sha)
            stamp = now()
            memory = Memory(
                id=fmt.new_id({m.id for m in memories}),
                title=title,
                body=body,
                kind=kind,
                entity=entity,
                confidence=confidence,
                source=source,
                task_id=task_id or None,
                created=stamp,
                updated=stamp,
                tags=tuple(tags),
                files=tuple(files),
                symbols=tuple(symbols),
                supersedes=tuple(supersedes),
            )
            memory = replace(memory, path=self.store.new_path(memory))
            fmt.parse(fmt.dump(memory), memory.path, self.config.kinds)  # what we write must read back
            path = self.store.write(memory)
            sha = self._commit([path], f'memory: add "{_short(title)}"', commit)
        return Remembered(memory, created=True, commit=sha)

    def get(self, ref: str, *, memories: Sequence[Memory] | None = None) -> Memory:
        """A memory by id, unique id prefix, or exact title."""
        self._require_store()
        ref = ref.strip() if isinstance(ref, str) else ""
        if not ref:
            raise MemgitError("give a memory id, id prefix or title")
        if memories is None:
            found = self._lookup(ref)
            if found is not None:
                return found
        pool = list(memories) if memories is not None else self._load()
        for memory in pool:
            if memory.id == ref:
                return memory
        prefixed = [m for m in pool if m.id.startswith(ref)]
        if len(prefixed) == 1:
            return prefixed[0]
        titled = [m for m in pool if m.title == ref] or [m for m in pool if m.title.casefold() == ref.casefold()]
        if len(titled) == 1:
            return titled[0]
        candidates = prefixed or titled
        if candidates:
            listing = ", ".join(m.id for m in candidates[:8])
            raise MemgitError(f"{ref!r} matches {len(candidates)} memories ({listing}); give more of the id")
        raise MemgitError(f"no memory {ref!r}; see 'memgit list'")

    def _lookup(self, ref: str) -> Memory | None:
        """`get` through the index: one file read instead of all. None means "ask the files"
        (no usable index, nothing found, or an ambiguous reference to explain)."""
        try:
            index = self.index
            if index.in_memory:
                return None  # it parsed every file already; the scan costs no more
            index.sync(embed="none")
        except MemgitError:
            return None
        for how in ("id", "prefix", "title", "title_nocase"):
            rows = index.lookup(ref, how)
            if len(rows) > 1:
                return None
            if rows:
                memory, _ = self.store.read(rows[0][1])
                return memory if memory is not None and memory.id == rows[0][0] else None
        return None

    def list(
        self,
        *,
        kind: str | None = None,
        entity: str | None = None,
        task_id: str | None = None,
        source: str | None = None,
        status: str | None = "active",
    ) -> list[Memory]:
        """Memories matching every filter given, newest first. `status=None` means any."""
        self._require_store()
        if kind is not None and kind not in self.config.kinds:
            raise MemgitError(f"unknown kind {kind!r}; use one of {', '.join(self.config.kinds)}")
        pool = self._indexed()
        if pool is None:
            pool = [(m, self._mtime(m)) for m in self._load()]
        out = [
            (m, mtime)
            for m, mtime in pool
            if (kind is None or m.kind == kind)
            and (entity is None or m.entity.startswith(entity))
            and (task_id is None or m.task_id == task_id)
            and (source is None or m.source == source)
            and (status is None or m.status == status)
        ]
        # Timestamps have whole seconds; the file's mtime orders memories written in one second.
        out.sort(key=lambda pair: (pair[0].updated or pair[0].created or "", pair[1], pair[0].id), reverse=True)
        return [m for m, _ in out]

    def _current(self) -> builtins.list[Memory]:
        """Every memory, from the index when there is one (one sync instead of parsing all)."""
        indexed = self._indexed()
        return [m for m, _ in indexed] if indexed is not None else self._load()

    def _indexed(self) -> builtins.list[tuple[Memory, int]] | None:
        """Every memory with its mtime from the index (kept in step first), or None without one."""
        try:
            index = self.index
            if index.in_memory:
                return None
            index.sync(embed="none")
            return index.all_memories()
        except MemgitError:
            return None

    def _mtime(self, memory: Memory) -> int:
        try:
            return os.stat(self.memory_dir / memory.path).st_mtime_ns
        except OSError:
            return 0

    def update(self, ref: str, *, commit: bool = True, allow_secret: bool = False, **changes: Any) -> Memory:
        """Change front-matter fields or the body of a memory, as one commit."""
        self._require_store()
        unknown = set(changes) - set(fmt.FIELDS) - {"body"} - {"id"}
        if unknown or "id" in changes:
            raise MemgitError(f"cannot change {', '.join(sorted(unknown | ({'id'} & set(changes))))}")
        repo = self._require_repo()
        with gitrepo.write_lock(repo):
            memory = self.get(ref)
            for name in fmt.LIST_FIELDS:
                if name in changes:
                    changes[name] = tuple(changes[name])
            if "title" in changes:
                changes["title"] = " ".join(str(changes["title"]).split())
                if not changes["title"]:
                    raise MemgitError("the title cannot be empty")
            if changes.get("task_id") is not None and "\n" in str(changes["task_id"]):
                raise MemgitError("task id must be one line")
            if "source" in changes and changes["source"] not in fmt.SOURCES:
                raise MemgitError(f"unknown source {changes['source']!r}; use one of {', '.join(fmt.SOURCES)}")
            if "kind" in changes and changes["kind"] not in self.config.kinds:
                raise MemgitError(f"unknown kind {changes['kind']!r}; use one of {', '.join(self.config.kinds)}")
            updated = replace(memory, **changes, updated=now())
            return self._replace(memory, updated, f'memory: edit "{_short(updated.title)}"', commit, allow_secret)

    def edit_text(
        self, ref: str, text: str, *, commit: bool = True, allow_secret: bool = False, base: Memory | None = None
    ) -> Memory | None:
        """Replace a memory's file with edited text (what `memgit edit` does after $EDITOR).

        Returns None when the text is unchanged. The id must stay the same. `base` is the
        memory the text was edited from: if the memory changed since, nothing is written.
        """
        self._require_store()
        repo = self._require_repo()
        with gitrepo.write_lock(repo):
            memory = self.get(ref)
            if base is not None and memory != base:
                raise MemgitError(f"{memory.id} changed while you were editing it; nothing was written")
            edited = fmt.parse(text, memory.path, self.config.kinds)
            if edited.id != memory.id:
                raise MemgitError(f"the id changed ({memory.id} → {edited.id}); ids are stable, keep {memory.id}")
            if edited == memory:
                return None
            edited = replace(edited, updated=now())
            return self._replace(memory, edited, f'memory: edit "{_short(edited.title)}"', commit, allow_secret)

    def _replace(self, old: Memory, new: Memory, message: str, commit: bool, allow_secret: bool) -> Memory:
        if not allow_secret:
            _refuse_secrets(f"{new.title}\n{new.body}")
        fmt.parse(fmt.dump(new), new.path, self.config.kinds)
        path = self.store.write(new)
        self._commit([path], message, commit)
        return new

    def forget(self, ref: str, *, hard: bool = False, commit: bool = True) -> Memory:
        """Archive a memory (reversible), or with `hard` delete its file. Both are commits."""
        self._require_store()
        repo = self._require_repo()
        with gitrepo.write_lock(repo):
            memory = self.get(ref)
            if hard:
                known = gitrepo.tracked(repo, self.memory_dir / memory.path)
                path = self.store.delete(memory.path)
                if known:
                    self._commit([path], f'memory: forget "{_short(memory.title)}" (deleted)', commit)
                else:
                    self.warn(f"{memory.id} was never committed: its file is deleted, and git cannot bring it back")
                return memory
            if not memory.active:
                raise MemgitError(f"{memory.id} is already archived; 'memgit forget --hard' deletes it")
            archived = replace(memory, status="archived", updated=now())
            path = self.store.write(archived)
            self._commit([path], f'memory: forget "{_short(memory.title)}"', commit)
            return archived

    def history(self, ref: str) -> builtins.list[Change]:
        """The memory's commits, newest first, with the front-matter fields each changed."""
        self._require_store()
        repo = self._require_repo()
        return changes_of(repo, self._path_in_history(repo, ref), self.config.kinds)

    def rollback(self, ref: str, to: str, *, commit: bool = True) -> Memory | None:
        """Restore a memory to its content at revision `to`, as a new commit.

        Returns None when the memory is already exactly as it was at `to`.
        """
        self._require_store()
        repo = self._require_repo()
        with gitrepo.write_lock(repo):
            sha = gitrepo.resolve(repo, to)
            under = os.path.relpath(self.memory_dir, repo.root)
            try:
                current: Memory | None = self.get(ref, memories=self.store.load().memories)
            except MemgitError:
                current = None  # deleted (forget --hard)? Look for it at `to`.
                if not fmt.ID_RE.match(ref.strip()):
                    raise
            memory_id = current.id if current else ref.strip()
            version = version_at(repo, sha, memory_id, under, current.path if current else None)
            if version is None:
                raise MemgitError(f"{memory_id} did not exist at {to}; see 'memgit history {memory_id}'")
            data, found = version
            rel = current.path if current else Path(os.path.relpath(repo.root / found, self.memory_dir)).as_posix()
            old = fmt.parse(data, rel, self.config.kinds)
            if old.id != memory_id:
                raise MemgitError(f"at {to} that file held {old.id}, not {memory_id}")
            target = self.store.path_of(rel)
            if current is None and target.exists():
                rel = self.store.new_path(old)
                target = self.store.path_of(rel)
            if target.exists() and target.read_bytes() == data:
                return None
            path = self.store.write_text(rel, data.decode("utf-8"))
            verb = "roll back" if current else "restore"
            self._commit([path], f'memory: {verb} "{_short(old.title)}" to {sha[:10]}', commit)
            return replace(old, path=rel)

    def _path_in_history(self, repo: gitrepo.Repo, ref: str) -> Path:
        """The file of a memory, or of a deleted one (by its id) as it was last committed."""
        try:
            return self.memory_dir / self.get(ref).path
        except MemgitError:
            if not fmt.ID_RE.match(ref.strip()):
                raise
            under = os.path.relpath(self.memory_dir, repo.root)
            path = gitrepo.deleted_path(repo, ref.strip(), under)
            if path is None:
                raise
            return repo.root / path

    def lint(self, *, fix: bool = False, commit: bool = True) -> builtins.list[Problem]:
        """Every problem in every memory file. With `fix`, write path-derived ids into files."""
        if not self.memory_dir.is_dir():
            self._require_store()
        store = self.store
        loaded = store.load()
        problems = list(loaded.problems)
        to_fix: list[str] = []
        for memory in loaded.memories:
            if not fmt.declares_id(store.path_of(memory.path).read_bytes()):
                to_fix.append(memory.path)
            for secret in _find_secrets(f"{memory.title}\n{memory.body}"):
                problems.append(Problem(memory.path, 0, f"looks like a secret: {secret.pattern} ({secret.excerpt})"))
        problems.sort(key=lambda p: (p.path, p.line))
        if fix and to_fix:
            repo = self._require_repo()
            with gitrepo.write_lock(repo):
                paths = [
                    store.write_text(rel, fmt.insert_id(store.path_of(rel).read_bytes().decode("utf-8"), fmt.path_id(rel)))
                    for rel in to_fix
                ]
                self._commit(paths, f"memory: write ids into {len(paths)} hand-written file(s)", commit)
        return problems

    def export(self, *, include_archived: bool = True) -> Iterator[dict[str, Any]]:
        """Every memory as a JSON-ready dict (the import format)."""
        self._require_store()
        for memory in sorted(self._load(), key=lambda m: m.id):
            if include_archived or memory.active:
                data = memory.to_dict()
                data.pop("path")
                yield data

    def import_jsonl(
        self,
        lines: Iterable[str | bytes],
        *,
        allow_secret: bool = False,
        commit: bool = True,
        progress: Callable[[int], None] | None = None,
        embed_progress: Callable[[int, int], None] | None = None,
    ) -> "ImportReport":
        """Import memories from JSON Lines in one commit; bad lines are reported and skipped.
        Then embed them (`embed_progress(done, total)`; an interrupted run is resumed later)."""
        self._require_store()
        repo = self._require_repo()
        with gitrepo.write_lock(repo):
            existing = self._current()
            from memgit import transfer

            memories, report = transfer.plan_import(
                lines,
                existing,
                kinds=self.config.kinds,
                token_budget=self.config.memory_token_budget,
                allow_secret=allow_secret,
                progress=progress,
            )
            store = self.store
            written = []
            for memory in memories:
                written.append(store.write(replace(memory, path=store.new_path(memory))))
            if written:
                report.commit = self._commit(written, f"memory: import {len(written)} memories", commit)
        if written:
            self.index.embed_pending(progress=embed_progress)
        return report

    # -- recall: the index hangs here -----------------------------------------------------

    def index_path(self) -> Path:
        """Where this folder's index lives: in the git dir, or the user's cache outside git."""
        return index_path(self.memory_dir, self.repo)

    @property
    def index(self) -> "Index":
        """The SQLite index, opened (and migrated) on first use."""
        self._require_store()
        return self._session.index()

    def recall(
        self,
        query: str,
        k: int | None = None,
        *,
        task_id: str | None = None,
        kinds: Sequence[str] | None = None,
        min_score: float | None = None,
        budget_tokens: int | None = None,
        include_archived: bool = False,
        record: bool = True,
    ) -> builtins.list["Hit"]:
        """The memories that best answer `query`, best first.

        `min_score=0` turns the relevance floor off; `budget_tokens=None` means no budget.
        """
        from memgit import recall as recall_mod

        hits = recall_mod.recall(
            self.index,
            query,
            k=self.config.recall_k if k is None else k,
            task_id=task_id,
            kinds=kinds,
            min_score=min_score,
            budget_tokens=budget_tokens,
            include_archived=include_archived,
            config=self.config,
            path_prefix=self._path_prefix(),
        )
        if record and self.repo is not None:
            recall_mod.record_recall(
                self.repo.git_dir / "memgit" / "recalls.jsonl", query, [h.id for h in hits], warn=self.warn
            )
        return hits

    def _path_prefix(self) -> str:
        base = self.repo.root if self.repo is not None else self.memory_dir
        prefix = Path(os.path.relpath(self.memory_dir, base)).as_posix()
        return "" if prefix == "." else prefix + "/"

    def reindex(self, *, progress: Callable[[int, int], None] | None = None) -> "SyncReport":
        """Rebuild the index from the files, embedding every memory (resumable)."""
        index = self.index
        if index.in_memory:
            raise MemgitError(f"the index cannot be written ({index.memory_reason}); fix that and run this again")
        return index.rebuild(progress=progress)

    def status(self) -> dict[str, Any]:
        """Index path, counts, embedder, which channels are on, staleness."""
        self._require_store()
        info: dict[str, Any] = {"memory_dir": str(self.memory_dir)}
        report = self.index.sync(embed="none")  # the counts below describe the files as they are
        info.update(self.index.status())
        info["changed_since_last_call"] = report.touched
        if info.get("last_sync"):
            info["last_sync"] = datetime.fromtimestamp(info["last_sync"], timezone.utc).isoformat(timespec="seconds")
        return info


def _short(title: str, limit: int = 60) -> str:
    return title if len(title) <= limit else title[: limit - 1] + "…"


def _find_secrets(text: str) -> list[Any]:
    from memgit.credentials import find_secrets  # write paths only: recall need not pay for it

    return find_secrets(text)


def _refuse_secrets(text: str) -> None:
    found = _find_secrets(text)
    if found:
        first = found[0]
        raise MemgitError(
            f"this looks like a secret ({first.pattern}, line {first.line}: {first.excerpt}); "
            "memories are pushed to remotes, so it was not saved. Remove it, or use --allow-secret"
        )
