"""Upkeep: running reflect on a store and landing what it proposes as commits.

`memgit.reflect.reflect` decides; this module gathers what it reads (memories from the index,
file texts, vectors, the local usage logs, git's renames) and lands the proposals:
in the working tree as one commit (or one per proposal) through the change-set writer, so
a killed `--apply` is finished by the next memgit write; or on a new branch built with git
plumbing, leaving the current branch, the working tree and the index alone.
"""

from __future__ import annotations

import array
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memgit.errors import MemgitError
from memgit.git import branches
from memgit.git import repo as gitrepo
from memgit.index.workspace import Workspace
from memgit.memory import lenient
from memgit.memory.format import Memory
from memgit.recall import learned, lookup
from memgit.recall import usage as usage_mod
from memgit.recall.usage import parse_time
from memgit.reflect import decisions
from memgit.reflect.duplicates import Detector
from memgit.reflect.proposals import Progress
from memgit.reflect.reflect import Inputs, Proposal, Reflection, propose, steps

#: Reflect embeds up to this many memories without a vector before comparing (~35 ms each
#: with MiniLM, so at most ~10 s once); past that it leaves them to the background job and
#: compares those by their words meanwhile.
EMBED_INLINE_MAX = 300


@dataclass(frozen=True)
class Outcome:
    """What `Memgit.reflect` found and, when asked to apply, the commits it made."""

    reflection: Reflection
    commits: tuple[str, ...] = ()
    branch: str | None = None


def gather(ws: Workspace, now: datetime, *, anchors: bool = True, embed: bool = True) -> Inputs:
    """Everything reflect reads, from the index (kept in step first) and the git dir; with
    `embed`, what is pending embedded first (reflect proposes changes from it; `stats` only
    counts, and does not make a person wait for a model)."""
    ws.require_store()
    index = ws.index
    unembedded = _embed(ws) if embed else None
    if not embed:
        index.sync(embed="auto")
    memories = [m for m, _ in index.all_memories()]

    def read_index() -> tuple[list[str], dict[str, list[float]]]:
        conn = index.conn
        problems = [
            str(problem) if str(problem).startswith(rel) else f"{rel}: {problem}"
            for rel, problem in conn.execute(
                "SELECT rel, problem FROM files WHERE problem IS NOT NULL ORDER BY rel"
            )
        ]
        vectors = {
            mid: array.array("f", blob).tolist()
            for mid, blob in conn.execute(
                "SELECT m.id, v.embedding FROM memories m JOIN vectors v ON v.doc = m.doc "
                "WHERE m.vec_sha IS NOT NULL"
            )
        }
        return problems, vectors

    problems, vectors = index.db.guard(read_index)
    repo = ws.repo
    store = ws.store

    def read(rel: str) -> str:
        data = store.path_of(rel).read_bytes()
        return data.decode("utf-8")

    return Inputs(
        memories=memories,
        read=read,
        config=ws.config,
        now=now,
        problems=problems,
        vectors=vectors,
        usage=usage_mod.load(repo.git_dir if repo is not None else None),
        root=repo.root if repo is not None and anchors else None,
        renames=gitrepo.renames(repo) if repo is not None and anchors else (),
        churn=gitrepo.churn(repo, _oldest(memories)) if repo is not None and anchors else (),
        prefix=ws.path_prefix(),
        reverted=[(r.a, r.b, r.merged_in, r.reverted_by) for r in decisions.reverted_merges(repo)],
        unembedded=unembedded,
    )


def _embed(ws: Workspace) -> str | None:
    """Bring the index in step and embed what is pending, so that fresh memories are compared
    by meaning too and the result does not depend on whose clone runs reflect: all of them
    when there are at most `EMBED_INLINE_MAX`, else the background job's share so far.
    Returns what the notes say of memories still without a vector."""
    index = ws.index
    index.sync(embed="none")
    if not index.vectors_on:
        return None  # no vectors at all (embedder = "none", no sqlite-vec): words for everyone
    pending = index.db.guard(index.vectors.pending)
    if pending == 0:
        return None
    if pending <= EMBED_INLINE_MAX:
        index.sync(embed="all")
        return ("have no meaning vector (the embedder failed; see `memgit status`); "
                "they were compared by words only")
    index.sync(embed="auto")  # starts the background job
    return (f"have no meaning vector yet ({pending} were pending, more than reflect embeds itself, "
            f"{EMBED_INLINE_MAX}: the background job or `memgit reindex` embeds them); "
            "they were compared by words only")


def reflect(
    ws: Workspace,
    *,
    only: Sequence[str] = (),
    exclude: Sequence[str] = (),
    apply: bool = False,
    split: bool = False,
    branch: str | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
) -> Outcome:
    """Propose (and with `apply` or `branch`, commit) reflect's changes; see `Memgit.reflect`.
    `progress` is told each stage as it starts: reading the store, then each step of reflect."""
    now = now or usage_mod.utc_now()
    excluded = _resolve(ws, exclude)

    def run() -> Reflection:
        total = steps(only) + 1
        if progress is not None:
            progress("reading the store", 0, total)
        inputs = gather(ws, now, anchors=_wants_anchors(only))
        told = None if progress is None else (lambda stage, done, _: progress(stage, done + 1, total))
        return propose(inputs, only=only, exclude=excluded, progress=told)

    if not apply and branch is None:
        return Outcome(run())
    repo = ws.writer.repo()
    # Under the write lock, which first finishes a change a killed command left behind
    # (so its files do not count as uncommitted work).
    with ws.writer.writing():
        _refuse_dirty(ws, repo)
        reflection = run()
        commits = _commits(reflection, split)
        if branch is not None:
            shas = (
                branches.commit_on_branch(
                    repo,
                    branch,
                    [
                        (
                            message,
                            {
                                _repo_path(ws, repo, rel): None if text is None else text.encode("utf-8")
                                for rel, text in files.items()
                            },
                        )
                        for message, files in commits
                    ],
                )
                if commits
                else []
            )
            return Outcome(reflection, tuple(shas), branch)
        shas = []
        for message, files in commits:
            change = ws.writer.change(message)
            for rel, text in files.items():
                if text is None:
                    change.delete(rel)
                else:
                    lenient.parse(text, rel, ws.config.kinds)  # what memgit writes must read back
                    change.write(rel, text)
            sha = ws.writer.land(change)
            if sha:
                shas.append(sha)
    return Outcome(reflection, tuple(shas))


def _wants_anchors(only: Sequence[str]) -> bool:
    return not only or "stale" in only


def _resolve(ws: Workspace, refs: Sequence[str]) -> list[str]:
    """Excluded memories by id or unique prefix (an unknown one is an error, not ignored)."""
    return [lookup.get(ws, ref).id for ref in refs if ref.strip()]


def _refuse_dirty(ws: Workspace, repo: gitrepo.Repo) -> None:
    dirty = gitrepo.dirty(repo, ws.memory_dir)
    if dirty:
        shown = ", ".join(dirty[:3]) + (f" and {len(dirty) - 3} more" if len(dirty) > 3 else "")
        raise MemgitError(
            f"the memory folder has uncommitted changes ({shown}); reflect applies its proposals "
            "as commits of its own, so commit or stash those first (git commit / git stash), "
            "then run it again; nothing was changed"
        )


def _repo_path(ws: Workspace, repo: gitrepo.Repo, rel: str) -> str:
    return Path(os.path.relpath(ws.memory_dir / rel, repo.root)).as_posix()


def _commits(reflection: Reflection, split: bool) -> list[tuple[str, dict[str, str | None]]]:
    actionable = reflection.actionable
    if not actionable:
        return []
    if split:
        return [
            (
                f"memory: reflect: {p.kind} {p.what}"[:200] + "\n\n" + _describe([p]) + _trailers([p]),
                {c.path: c.text for c in p.changes},
            )
            for p in actionable
        ]
    return [
        (f"memory: reflect ({len(actionable)} change(s))\n\n" + _describe(actionable) + _trailers(actionable),
         reflection.changes)
    ]


def _trailers(proposals: Sequence[Proposal]) -> str:
    """A `Memgit-Merged: KEPT REMOVED` line per merge (all of them, however many the message
    describes), so that a revert of the commit can be read as "these are different"."""
    merged = [p.ids for p in proposals if p.kind == "merge" and len(p.ids) == 2]
    return "".join(f"\n{decisions.TRAILER}: {a} {b}" for a, b in merged) + ("\n" if merged else "")


#: A commit message describes this many proposals, then counts the rest: a message of every
#: one of a few hundred proposals is unreadable in `git log` (and once broke git's argv).
MESSAGE_PROPOSALS = 20
MESSAGE_EVIDENCE = 3


def _describe(proposals: Sequence[Proposal]) -> str:
    lines = []
    for p in proposals[:MESSAGE_PROPOSALS]:
        lines.append(f"- {p.kind} {', '.join(p.ids)}: {p.what}")
        lines.append(f"  why: {p.reason}")
        lines.extend(f"  evidence: {item}" for item in p.evidence[:MESSAGE_EVIDENCE])
        if len(p.evidence) > MESSAGE_EVIDENCE:
            lines.append(f"  evidence: … and {len(p.evidence) - MESSAGE_EVIDENCE} more")
    if len(proposals) > MESSAGE_PROPOSALS:
        lines.append(f"… and {len(proposals) - MESSAGE_PROPOSALS} more (the diff shows each change)")
    return "\n".join(lines) + "\n"


def feedback(ws: Workspace, ref: str, verdict: str, session: str | None = None) -> dict[str, Any]:
    """Record that a memory was used, ignored or wrong (local, never committed)."""
    memory = lookup.get(ws, ref)
    repo = ws.repo
    if repo is None:
        raise MemgitError("feedback is kept in the git dir; this memory folder is not in a git repository")
    record = usage_mod.record_feedback(repo.git_dir, memory.id, verdict, session=session)
    try:  # what the verdicts teach the channel weights (memgit.recall.learned)
        learned.update(repo.git_dir)
    except OSError as exc:
        ws.warn(f"could not update the learned recall weights ({exc.strerror or exc}); the verdict is kept")
    return record


def stats(ws: Workspace, since: str | None = None, now: datetime | None = None) -> dict[str, Any]:
    """Hit rate, freshness, repeat-explanation rate and counts (see docs/reflect.md)."""
    now = now or usage_mod.utc_now()
    start = usage_mod.parse_since(since, now)
    inputs = gather(ws, now, anchors=False, embed=False)

    active = [m for m in inputs.memories if m.active]
    new_ids = [m.id for m in active if start is None or (usage_mod.parse_time(m.created) or now) >= start]
    repeats: list[tuple[str, str]] = []
    if new_ids:
        detector = Detector(active, inputs.vectors)
        by_id = {m.id: m for m in active}
        for pair in detector.duplicates():
            a, b = by_id[pair.a], by_id[pair.b]
            newer = a if (a.created or "") >= (b.created or "") else b
            if newer.id in new_ids:
                repeats.append((newer.id, b.id if newer is a else a.id))
    info = usage_mod.stats(inputs.memories, inputs.usage, since=start, now=now, repeats=repeats)
    info["learned_weights"] = learned.summary(ws.repo.git_dir if ws.repo is not None else None)
    return info


def _oldest(memories: Sequence[Memory]) -> str | None:
    """The oldest time a memory with a path anchor was written: older commits cannot matter."""
    times = [t for m in memories if m.active and (m.files or "/" in m.entity)
             for t in [parse_time(m.updated or m.created)] if t is not None]
    return min(times).isoformat() if times else None
