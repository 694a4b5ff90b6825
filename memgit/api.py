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
from memgit.errors import MemgitError
from memgit.git import repo as gitrepo
from memgit.index.workspace import Workspace
from memgit.memory import format as memfmt
from memgit.memory import lenient, patch
from memgit.memory.format import Memory, Problem
from memgit.memory.trust import sort as sort_supersedes
from memgit.recall import lookup
from memgit.store.folder import Store, refuse_outside
from memgit.store.history import Change, changes_of, path_in_history
from memgit.store.writer import Settled, Writer, check_fields

if TYPE_CHECKING:
    from memgit.agents.rulesfile import FileResult
    from memgit.capture.capture import CaptureProposal
    from memgit.git.memdiff import MemoryChange, Review
    from memgit.index.index import Index, SyncReport
    from memgit.recall.hit import Hit, Hits
    from memgit.recall.inject import Injection
    from memgit.reflect.doubts import CodeChecks
    from memgit.reflect.proposals import Progress
    from memgit.reflect.upkeep import Outcome
    from memgit.store.transfer import ImportReport

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
         warn: Warn | None = None, warm: bool = False, lock_timeout: float | None = None) -> "Memgit":
    """Open the memory store of the repository containing `path`.

    `memory_dir` uses another folder as the memory folder: reads work on any folder, inside a
    git repository or not; writes need the folder to be inside a git repository. `warm` lets
    recall use (and start) a background process that keeps the embedding model loaded between
    short-lived calls, as the CLI does (`[index] warm = false` turns it off); a long-lived
    process does not need it. `lock_timeout` is how long a write waits for another writer
    (default: $MEMGIT_LOCK_TIMEOUT, else 60 seconds).
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
        folder = repo.root / config_mod.MEMORY_DIR
    return Memgit(folder, repo, warn or _stderr, warm=warm, lock_timeout=lock_timeout)


def open_user(*, create: bool = False, warn: Warn | None = None, warm: bool = False) -> "Memgit":
    """The user's own store (`memgit.store.userstore`): personal memories, recalled in every
    project, never committed to one. `create` makes it (a repository, `.memory/`, a first commit)."""
    from memgit.store import userstore  # only this verb needs it: a cold recall stays light

    return open(userstore.prepare() if create else userstore.require().root, warn=warn, warm=warm)


class Memgit:
    """A memory store: a folder of memory files, usually `.memory/` in a git repository.

    The front door: each verb checks its arguments and delegates to the workflow that does
    it, on the `Workspace` (`memgit.index.workspace`) the store is opened as."""

    def __init__(self, memory_dir: Path, repo: gitrepo.Repo | None, warn: Warn, *, warm: bool = False,
                 lock_timeout: float | None = None) -> None:
        self.memory_dir = memory_dir
        self.warm = warm
        self.repo = repo
        self.warn = warn
        self.workspace = Workspace(memory_dir, repo, warn, warm=warm, lock_timeout=lock_timeout)
        self.workspace.writer.derived = self._rules_blocks

    # -- plumbing ------------------------------------------------------------------------

    def _rules_blocks(self) -> list[Path]:
        from memgit.agents import rulesfile  # only a commit needs it: a cold recall stays light
        return rulesfile.for_commit(self.workspace)

    def close(self) -> None:
        """Close the index; the store stays usable (the next call opens it again)."""
        self.workspace.close()

    def __enter__(self) -> "Memgit":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def config(self) -> config_mod.Config:
        """The settings, read again when `.memory/config.toml` changes."""
        return self.workspace.config

    @property
    def store(self) -> Store:
        return self.workspace.store

    @property
    def writer(self) -> Writer:
        """Every write goes through it: lock, finish interrupted work, change set, commit."""
        return self.workspace.writer

    def rel_path(self, memory: Memory) -> str:
        """A memory's path relative to the repository root (or to the memory folder)."""
        return self.workspace.rel_path(memory)

    # -- verbs ---------------------------------------------------------------------------

    def init(self, *, commit: bool = True) -> bool:
        """Create the memory folder and its config. Returns False if it already existed."""
        repo = self.writer.repo()
        config_path = self.memory_dir / config_mod.CONFIG_NAME
        if self.memory_dir.exists() and not self.memory_dir.is_dir():
            raise MemgitError(f"{self.memory_dir} exists and is not a folder; move it away and run 'memgit init'")
        refuse_outside(self.memory_dir, repo.root)
        with self.writer.writing():
            created = not config_path.exists()
            if created:
                self.memory_dir.mkdir(parents=True, exist_ok=True)
                Store(self.memory_dir).write_text(config_mod.CONFIG_NAME, config_mod.DEFAULT_TOML)
            from memgit.git import mergesetup  # only this verb needs it: a cold recall stays light

            attributes = mergesetup.write_attributes(repo, self.memory_dir)
            mergesetup.configure(repo)
            # Also commits a config an earlier, interrupted init left uncommitted.
            self.writer.commit([config_path, *([attributes] if attributes else [])], "memory: init", commit)
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
        trust: str | None = None,
    ) -> Remembered:
        """Write a new memory and commit it; the same text twice is not duplicated. See `memgit.memory.trust`
        for what `supersedes` may hide, judged by `trust` (default: `source`)."""
        self.workspace.require_store()
        text = memfmt.clean_body(text.removeprefix("\ufeff").replace("\r\n", "\n"))
        if not text and not title:
            raise MemgitError("nothing to remember: give the text as an argument, with --file, or on stdin")
        reason = memfmt.bad_text(f"{title or ''}{text}")
        if reason:
            raise MemgitError(f"the text {reason}; nothing was saved")
        title, body = memfmt.split_title(text, title)
        if not allow_secret:
            _refuse_secrets(Memory("-", title, body, entity=entity, task_id=task_id, tags=tuple(tags),
                                   files=tuple(files), symbols=tuple(symbols)))
        budget = self.config.memory_token_budget
        tokens = memfmt.count_tokens(body)
        if tokens > budget and not force:
            raise MemgitError(
                f"the body is about {tokens} tokens, {tokens - budget} over the budget of {budget}: "
                "shorten it, split it into several memories, or use --force"
            )
        check_fields(self.config.kinds, source=source, kind=kind, task_id=task_id, confidence=confidence)
        with self.writer.writing() as repo:
            same, taken = lookup.same_text(index := self.workspace.synced(), self.workspace.load, title, body)
            supersedes, held = sort_supersedes(supersedes, trust or source, index, self.workspace.load)
            if same:
                # If an earlier attempt wrote it but its commit failed (a hook, no git
                # identity), this run finishes the job.
                existing = same[0]
                path = self.memory_dir / existing.path
                sha = None
                if not gitrepo.committed(repo, path):  # never touch a committed file's edits
                    sha = self.writer.commit([path], f'memory: add "{_short(existing.title)}"', commit)
                return Remembered(existing, created=False, commit=sha)
            stamp = now()
            memory = Memory(
                id=memfmt.new_id(taken),
                title=title,
                body=body,
                kind=kind,
                entity=entity,
                confidence=memfmt.DEFAULT_CONFIDENCE[source] if confidence is None else confidence,
                source=source,
                task_id=task_id or None,
                created=stamp,
                updated=stamp,
                tags=tuple(tags),
                files=tuple(files),
                symbols=tuple(symbols),
                supersedes=supersedes, extra=held,
            )
            (memory,), sha = self.writer.add([memory], f'memory: add "{_short(title)}"', commit)
        return Remembered(memory, created=True, commit=sha)

    def get(self, ref: str, *, memories: Sequence[Memory] | None = None) -> Memory:
        """A memory by id, unique id prefix, or exact title."""
        return lookup.get(self.workspace, ref, memories=memories)

    def list(
        self,
        *,
        kind: str | None = None,
        entity: str | None = None,
        task_id: str | None = None,
        source: str | None = None,
        status: str | None = "active",
    ) -> builtins.list[Memory]:
        """Memories matching every filter given, newest first. `status=None` means any."""
        return lookup.select(self.workspace, kind=kind, entity=entity, task_id=task_id, source=source,
                             status=status)

    def update(self, ref: str, *, commit: bool = True, allow_secret: bool = False, **changes: Any) -> Memory:
        """Change front-matter fields or the body of a memory, as one commit."""
        self.workspace.require_store()
        unknown = set(changes) - set(memfmt.FIELDS) - {"body"} - {"id"}
        if unknown or "id" in changes:
            raise MemgitError(f"cannot change {', '.join(sorted(unknown | ({'id'} & set(changes))))}")
        with self.writer.writing():
            memory = self.get(ref)
            for name in memfmt.LIST_FIELDS:
                if name in changes:
                    changes[name] = tuple(changes[name])
            if "title" in changes:
                changes["title"] = " ".join(str(changes["title"]).split())
                if not changes["title"]:
                    raise MemgitError("the title cannot be empty")
            check_fields(self.config.kinds, **changes)
            updated = replace(memory, **changes, updated=now())
            return self._replace(memory, updated, f'memory: edit "{_short(updated.title)}"', commit, allow_secret)

    def edit_text(
        self, ref: str, text: str, *, commit: bool = True, allow_secret: bool = False, base: Memory | None = None
    ) -> Memory | None:
        """Replace a memory's file with edited text (what `memgit edit` does after $EDITOR).

        Returns None when the text is unchanged. The id must stay the same. `base` is the
        memory the text was edited from: if the memory changed since, nothing is written.
        """
        self.workspace.require_store()
        with self.writer.writing():
            memory = self.get(ref)
            if base is not None and memory != base:
                raise MemgitError(f"{memory.id} changed while you were editing it; nothing was written")
            edited = lenient.parse(text, memory.path, self.config.kinds)
            if edited.id != memory.id:
                raise MemgitError(f"the id changed ({memory.id} → {edited.id}); ids are stable, keep {memory.id}")
            if edited == memory:
                return None
            edited = replace(edited, updated=now())
            return self._replace(memory, edited, f'memory: edit "{_short(edited.title)}"', commit, allow_secret)

    def _replace(self, old: Memory, new: Memory, message: str, commit: bool, allow_secret: bool) -> Memory:
        if not allow_secret:
            _refuse_secrets(new)
        new = self.writer.checked(self.writer.stamped(new, old))  # valid, recording the code it is about now
        change = self.writer.change(message, commit)
        change.write(new.path, patch.edited(self.store, old, new))  # only the lines of the fields that changed
        self.writer.land(change)
        return new

    def forget(self, ref: str, *, hard: bool = False, commit: bool = True, force: bool = False) -> Memory:
        """Archive a memory (reversible), or with `hard` delete its file (refused when it has
        changes not committed, unless `force`). Both are commits."""
        self.workspace.require_store()
        with self.writer.writing():
            memory = self.get(ref)
            if hard:
                self.writer.delete(memory, f'memory: forget "{_short(memory.title)}" (deleted)', commit, force)
                return memory
            if not memory.active:
                raise MemgitError(f"{memory.id} is already archived; 'memgit forget --hard' deletes it")
            archived = replace(memory, status="archived", updated=now())
            change = self.writer.change(f'memory: forget "{_short(memory.title)}"', commit)
            change.write(archived.path, patch.edited(self.store, memory, archived))
            self.writer.land(change)
            return archived

    def history(self, ref: str) -> builtins.list[Change]:
        """The memory's commits, newest first, with the front-matter fields each changed."""
        self.workspace.require_store()
        repo = self.writer.repo()
        return changes_of(repo, path_in_history(repo, self.memory_dir, ref, lambda: self.get(ref)), self.config.kinds)

    def rollback(self, ref: str, to: str, *, commit: bool = True, force: bool = False) -> Memory | None:
        """Restore a memory to its content at revision `to`, as a new commit.

        Returns None when the memory is already exactly as it was at `to`. Refused when its
        file has changes not committed, unless `force`."""
        self.workspace.require_store()
        from memgit.store.history import rollback  # only this verb needs it: a cold recall stays light

        with self.writer.writing():
            memories = self.store.load().memories
            if not force:
                self.writer.keep_uncommitted(lambda: self.get(ref, memories=memories).path, "rolling it back")
            return rollback(self.writer, self.store, ref, to, commit=commit,
                            current=lambda: self.get(ref, memories=memories))

    def finish(self) -> Settled | None:
        """Commit the change a memgit command left unfinished (None: there is none)."""
        return self.writer.finish()

    def abandon(self) -> Settled | None:
        """Undo the change a memgit command left unfinished (None: there is none)."""
        return self.writer.abandon()

    def diff(self, rev_range: str | None = None) -> "builtins.list[MemoryChange]":
        """Memory-level changes of a revision range (`main...HEAD`, `A..B`, `A`; none: HEAD to
        the work tree), for a pull-request review. See `memgit.git.memdiff`."""
        return self.review(rev_range).memories

    def review(self, rev_range: str | None = None) -> "Review":
        """Everything a revision range changes under the memory folder: its memory changes and
        every other file (`config.toml` setting by setting). See `memgit.git.memdiff`."""
        self.workspace.require_store()
        from memgit.git.memdiff import review  # only this verb needs it: a cold recall stays light
        repo = self.repo or self.writer.repo()
        return review(repo, self.memory_dir, self.config.kinds, rev_range, lambda: self.store.load().memories)

    @property
    def code(self) -> "CodeChecks":
        """Memories and their code: `.doubts(rev_range)`, `.verify(ref)` (`memgit.reflect.doubts`)."""
        from memgit.reflect.doubts import CodeChecks  # only these verbs need it: a cold recall stays light
        return CodeChecks(self.workspace)

    def lint(self, *, fix: bool = False, commit: bool = True) -> builtins.list[Problem]:
        """Every problem in every memory file. With `fix`, write path-derived ids into files."""
        if not self.memory_dir.is_dir():
            self.workspace.require_store()
        from memgit.store import lint  # only this verb needs it: a cold recall stays light
        from memgit.agents.rulesfile import problems  # only this verb needs it: a cold recall stays light
        return lint.lint(self.store, self.writer, fix=fix, commit=commit) + problems(self.workspace)

    def export(self, *, include_archived: bool = True) -> Iterator[dict[str, Any]]:
        """Every memory as a JSON-ready dict (the import format)."""
        self.workspace.require_store()
        for memory in sorted(self.workspace.load(), key=lambda m: m.id):
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
        self.workspace.require_store()
        with self.writer.writing():
            existing = lookup.current(self.workspace)
            from memgit.store import transfer  # only this verb needs it: a cold recall stays light

            memories, report = transfer.plan_import(
                lines,
                existing,
                kinds=self.config.kinds,
                token_budget=self.config.memory_token_budget,
                allow_secret=allow_secret,
                progress=progress,
            )
            report.commit = transfer.land(self.writer, self.store, existing, memories, report, commit)
        if memories:
            self.index.embed_pending(progress=embed_progress)
        return report

    def capture(self, transcript: str | os.PathLike[str], *, llm_cmd: str | None = None,
                format: str | None = None) -> "CaptureProposal":
        """Memories a session transcript suggests (a `CaptureProposal`); writes nothing. `format`
        (a reader's name: claude, codex, specstory, aider…) overrides what its start looks like."""
        from memgit.capture.capture import propose  # only this verb needs it: a cold recall stays light
        return propose(self.workspace, Path(transcript), llm_cmd=llm_cmd, format=format)

    def show_capture(self, proposal: "CaptureProposal") -> str:
        """A capture proposal as a diff of the memory files, then a Markdown summary."""
        from memgit.capture import captures  # only this verb needs it: a cold recall stays light
        return captures.render(self.workspace, proposal)

    def apply_capture(self, proposal: "CaptureProposal", *, branch: str | None = None) -> dict[str, Any]:
        """Write a capture proposal's memories: staged, or committed on the new branch `branch`."""
        from memgit.capture import captures  # only this verb needs it: a cold recall stays light
        return captures.apply(self.workspace, proposal, branch=branch)

    def pending_captures(self) -> builtins.list[dict[str, Any]]:
        """The capture proposals the session-end hook left, newest first."""
        from memgit.capture import captures  # only this verb needs it: a cold recall stays light
        return captures.pending(self.workspace)

    def pending_capture(self, ref: str) -> "CaptureProposal":
        """A pending capture proposal by id (or unique id prefix), planned again against the store."""
        from memgit.capture import captures  # only this verb needs it: a cold recall stays light

        return captures.load_pending(self.workspace, ref)

    def apply_pending_capture(self, ref: str, *, branch: str | None = None) -> dict[str, Any]:
        """Apply a pending capture proposal (by id or unique prefix) as `apply_capture` does
        (`branch=""`: `memory/capture-<id>`) and set it aside; applying it again is an error
        that says so."""
        from memgit.capture import captures  # only this verb needs it: a cold recall stays light

        return captures.apply_pending(self.workspace, ref, branch=branch)

    def drop_capture(self, ref: str) -> str:
        """Set a pending capture proposal aside without applying it; its id."""
        from memgit.capture import captures  # only this verb needs it: a cold recall stays light

        return captures.drop_pending(self.workspace, ref)

    # -- recall: the index hangs here -----------------------------------------------------

    def index_path(self) -> Path:
        """Where this folder's index lives: in the git dir, or the user's cache outside git."""
        return self.workspace.index_path()

    @property
    def index(self) -> "Index":
        """The SQLite index, opened (and migrated) on first use."""
        return self.workspace.index

    def recall(
        self, query: str, k: int | None = None, *, task_id: str | None = None,
        kinds: Sequence[str] | None = None, min_score: float | None = None, budget_tokens: int | None = None,
        include_archived: bool = False, record: bool = True, session: str | None = None,
        at: str | None = None, deep: bool = False,
    ) -> "Hits":
        """The memories that best answer `query`, best first (`Hits.how`: how they were ranked).

        `min_score=0` turns the relevance floor off; `budget_tokens=None` means no budget;
        `session` leaves out what memgit gave that agent session; `at`: as of a commit (asof);
        `deep` follows links.
        """
        from memgit.recall import ask  # only this verb needs it: a cold recall stays light

        return ask.recall(self.workspace, query, k, task_id=task_id, kinds=kinds, min_score=min_score,
                          budget_tokens=budget_tokens, include_archived=include_archived,
                          known=self._known(session), record=record, at=at, deep=deep)

    def inject(
        self,
        query: str,
        *,
        task_id: str | None = None,
        kinds: Sequence[str] | None = None,
        k: int | None = None,
        budget: int | None = None,
        min_score: float | None = None,
        record: bool = True,
        at: str | None = None,
        deep: bool = False,
    ) -> "Injection":
        """What an agent is given for `query`: the `[inject]` policy (k, budget, tokens per
        memory, floor) applied to recall. `Injection.text` is the Markdown; `reason` says
        why it is empty."""
        from memgit.recall import ask  # only this verb needs it: a cold recall stays light

        return ask.inject(self.workspace, query, task_id=task_id, kinds=kinds, k=k, budget=budget,
                          min_score=min_score, record=record, at=at, deep=deep)

    def fit(self, hits: Sequence["Hit"], budget: int) -> "Injection":
        """The best of `hits` that fit in `budget` tokens, and why none did (no header)."""
        from memgit.recall.inject import fit  # only this verb needs it: a cold recall stays light

        return fit(hits, budget)

    def _known(self, session: str | None) -> builtins.list[str]:
        from memgit.agents import known  # only this verb needs it: a cold recall stays light

        state = known.load(self.repo.git_dir, session) if session and self.repo is not None else None
        return state.known if state is not None else []

    # -- agent sessions: see memgit.checkpoint and memgit.briefing --------------------------

    def checkpoint(self, *, intent: str | None = None, task_id: str | None = None, session: str | None = None,
                   commit: bool = False) -> Memory:
        """Save the current task's state as a checkpoint memory (staged unless `commit`)."""
        from memgit.agents import checkpoint  # only this verb needs it: a cold recall stays light

        return checkpoint.save(self.workspace, intent=intent, task=task_id, session=session, commit=commit)

    def resume(self, *, task_id: str | None = None, budget: int | None = None,
               session: str | None = None) -> "Injection":
        """What an agent reads to pick a task back up: its latest checkpoint, then relevant memories."""
        from memgit.agents import briefing  # only this verb needs it: a cold recall stays light

        return briefing.resume(self.workspace, task=task_id, budget=budget, known=self._known(session))

    def sync(self) -> None:
        """Bring the index in step with the files and embed what is new (what git's post-*
        hooks run). One process embeds per index: while embedding, this holds the lock the
        background job (`memgit.embedjob`) holds, and when a job already runs it leaves the
        embedding to it."""
        from memgit.index import embedjob  # only this verb needs it: a cold recall stays light

        index = self.index
        if index.db_path is None or index.in_memory:
            index.embed_pending()
            return
        with embedjob.hold(index.db_path) as mine:
            index.sync(embed="all" if mine else "none")

    def hook_event(self, agent: str, event: str, session_id: str, payload: dict[str, Any]) -> str:
        """What an agent's hook `event` gives the session `session_id` ("" for nothing); see
        `memgit.agents.hookevents` (and `memgit.hookrun`, which fails open around it)."""
        from memgit.agents import hookevents  # only this verb needs it: a cold recall stays light

        return hookevents.handle(self.workspace, agent, event, session_id, payload)

    def reindex(self, *, progress: Callable[[int, int], None] | None = None) -> "SyncReport":
        """Rebuild the index from the files, embedding every memory (resumable)."""
        index = self.index
        if index.in_memory:
            raise MemgitError(f"the index cannot be written ({index.memory_reason}); fix that and run this again")
        return index.rebuild(progress=progress)

    def reflect(self, *, only: Sequence[str] = (), exclude: Sequence[str] = (), apply: bool = False,
                split: bool = False, branch: str | None = None, now: datetime | None = None,
                progress: "Progress | None" = None) -> "Outcome":
        """Proposals that keep memory healthy (merge duplicates, archive superseded and stale
        memories, fix renamed anchors, pin what is used), each with its reason and evidence.

        Changes nothing unless `apply` (one commit; `split`: one per proposal) or `branch`
        (commits on a new branch from HEAD; the working tree is left alone). `only` and
        `exclude` narrow it to kinds of proposal (`memgit.reflect.reflect.CATEGORIES`) and memories.
        `progress(stage, done, total)` is told each stage as it starts (for a progress bar)."""
        from memgit.reflect import upkeep  # only this verb needs it: a cold recall stays light

        return upkeep.reflect(self.workspace, only=only, exclude=exclude, apply=apply, split=split, branch=branch,
                              now=now, progress=progress)

    def feedback(self, ref: str, verdict: str, *, session: str | None = None) -> dict[str, Any]:
        """Record that a recalled memory was used, ignored or wrong (local, never committed)."""
        from memgit.reflect import upkeep  # only this verb needs it: a cold recall stays light

        return upkeep.feedback(self.workspace, ref, verdict, session)

    def pair_feedback(self, a: str, b: str, *, duplicate: bool) -> tuple[Memory, ...]:
        """Two memories are different (`distinct` in both) or, with `duplicate`, one (merged): a commit."""
        from memgit.reflect import decisions  # only this verb needs it: a cold recall stays light

        if duplicate:
            return decisions.mark_duplicate(self.workspace, a, b)
        return decisions.mark_distinct(self.workspace, a, b)

    def stats(self, *, since: str | None = None) -> dict[str, Any]:
        """Hit rate, freshness, repeat-explanation rate and counts by kind, source and status."""
        from memgit.reflect import upkeep  # only this verb needs it: a cold recall stays light

        return upkeep.stats(self.workspace, since)

    def rules(self, action: str = "write", *, targets: Sequence[str] = (), force: bool = False) -> "builtins.list[FileResult]":
        """The memgit block in agents' rules files (AGENTS.md…): `action` write, check, remove or
        refresh (only files that have one); see `memgit.agents.rulesfile`."""
        from memgit.agents import rulesfile  # only this verb needs it: a cold recall stays light

        return rulesfile.run(self.workspace, action, targets, force=force)

    def status(self) -> dict[str, Any]:
        """Index path, counts, embedder, which channels are on, staleness."""
        self.workspace.require_store()
        info: dict[str, Any] = {"memory_dir": str(self.memory_dir)}
        report = self.index.sync(embed="none")  # the counts below describe the files as they are
        info.update(self.index.status())
        info["changed_since_last_call"] = report.touched
        if self.repo is not None:
            indexed = {m.path for m, _ in self.index.all_memories()}
            info["untracked_files"] = sum(1 for rel in gitrepo.untracked(self.repo, self.memory_dir) if rel in indexed)
            interrupted = self.writer.interrupted()
            info["interrupted_change"] = interrupted.summary if interrupted else None
            from memgit.git.mergesetup import state  # only this verb needs it: a cold recall stays light

            info["merge_driver"] = state(self.repo, self.memory_dir)
        from memgit.recall.scopes import describe  # only this verb needs it: a cold recall stays light

        info["user_store"] = describe(self.workspace)
        from memgit.agents.rulesfile import summary  # only this verb needs it: a cold recall stays light

        info["rules_files"] = summary(self.workspace)
        if info.get("last_sync"):
            info["last_sync"] = datetime.fromtimestamp(info["last_sync"], timezone.utc).isoformat(timespec="seconds")
        return info


def _short(title: str, limit: int = 60) -> str:
    return title if len(title) <= limit else title[: limit - 1] + "…"


def _refuse_secrets(memory: Memory) -> None:
    from memgit.memory.credentials import refuse_secrets  # write paths only: recall need not pay for it

    refuse_secrets(memory)
