"""Recall as of a revision: the memories a commit holds, searched as if it were checked out.

`recall --at REV` (and the MCP `recall` tool's `at`) answers from the memory folder as the
commit REV has it — what a reviewer of an old change or an agent on a release branch needs.
It reads git's objects (`memgit.git.snapshot`: one `ls-tree`, one `cat-file --batch`), never a
second index kept on disk that could drift: the commit's memory files are written to a
temporary folder, indexed into a throwaway in-memory index, and the folder is removed. Most
files of a commit are byte for byte the work tree's: their rows are copied from the work
tree's index where its content hash (sha1 of the bytes) confirms them (`memgit.index.seed`),
and only the others are parsed and indexed (2-3× faster for a commit near the work tree;
docs/benchmarks.md). The index answers with the keyword and anchor channels, not vectors
(embedding a whole old store would take minutes). A commit never changes, so a process keeps its last `KEEP` such indexes
by commit: an MCP server asked about one release again pays once.

A commit's tree is as untrusted as a work tree: only plain files with a memory's name outside
hidden folders are read (no symbolic link, no submodule), each of at most 1 MB, at most
`MAX_FILES` files and `MAX_BYTES` in all; each file is read liberally as the work tree's are
(`memgit.memory.lenient`), so a bad front-matter costs that memory nothing it can keep.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import MemgitError
from memgit.git import snapshot, staging
from memgit.git.snapshot import Entry
from memgit.index import seed
from memgit.index import sqlite as sq
from memgit.index.changes import Stat
from memgit.index.index import Index
from memgit.index.workspace import Workspace
from memgit.memory.format import MAX_FILE_BYTES, is_memory_file
from memgit.recall import provenance
from memgit.recall import recall as recall_mod
from memgit.recall.hit import Hit
from memgit.store.folder import Store

Warn = Callable[[str], None]

#: At most this many memory files are read from one commit…
MAX_FILES = 100_000
#: …and at most this many bytes in all.
MAX_BYTES = 256 * 1024 * 1024
#: Indexes of past commits kept per process.
KEEP = 2
#: The time the commit's files are dated in the temporary folder (2000-01-01): a fixed one,
#: far from now, so that the stat copied with a reused row is what the index's sync sees.
WRITTEN_NS = 946_684_800 * 1_000_000_000


@dataclass(frozen=True)
class Past:
    """The memory folder of one commit, indexed: `blobs` has the blob id of each file read,
    by path from the repository root; `reused` is how many of them the work tree's index
    already held byte for byte (their rows were copied, not parsed again)."""

    commit: str
    index: Index
    blobs: Mapping[str, str]
    reused: int = 0


_kept: OrderedDict[tuple[str, str, str, tuple[str, ...]], Past] = OrderedDict()
_lock = threading.Lock()


def recall(ws: Workspace, rev: str, query: str, k: int | None = None, *, task_id: str | None = None,
           kinds: Sequence[str] | None = None, min_score: float | None = None,
           budget_tokens: int | None = None, include_archived: bool = False,
           known: Collection[str] = ()) -> list[Hit]:
    """The memories of commit `rev` that best answer `query`, best first, as
    `memgit.recall.ask.recall` finds them in the work tree's (without the user store, and not
    logged: the ids may be gone since); each marked reviewed or not (`memgit.recall.provenance`)."""
    past = at(ws, rev)
    config = ws.config
    k = config.recall_k if k is None else k
    skip = set(known)
    hits = recall_mod.recall(past.index, query, k=k + len(skip), task_id=task_id, kinds=kinds,
                             min_score=min_score, budget_tokens=budget_tokens, include_archived=include_archived,
                             config=config, path_prefix=ws.path_prefix(), sync=False)
    return provenance.mark(ws, [hit for hit in hits if hit.id not in skip][:k], past.blobs)


def at(ws: Workspace, rev: str) -> Past:
    """The memory folder of the commit `rev` names, indexed (kept per process by commit)."""
    repo = ws.repo
    if repo is None:
        raise MemgitError("--at reads the memories of a commit, and this memory folder is not in a git repository")
    prefix = ws.path_prefix()
    if prefix.startswith("../"):
        raise MemgitError(f"--at reads the repository's own memory folder; {ws.memory_dir} is outside {repo.root}")
    commit = snapshot.resolve(repo, rev)
    kinds = ws.config.kinds
    key = (str(repo.root), prefix, commit, kinds)
    with _lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    listing = snapshot.entries(repo, commit, prefix, sizes=True)
    if listing is None:
        raise MemgitError(f"{rev} ({commit[:12]}) has no {prefix or 'memory folder'}: memgit was not set up in "
                          "that commit; name a later one")

    def warn(message: str) -> None:
        ws.warn(f"at {rev}: {message}")

    chosen = _chosen(listing, prefix, warn)
    with tempfile.TemporaryDirectory(prefix="memgit-at-") as tmp:
        folder = Path(tmp) / "memory"
        folder.mkdir()
        blobs = staging.read_blobs(repo, [entry.blob for entry in chosen]) if chosen else {}
        written: dict[str, str] = {}
        stats: dict[str, seed.Copied] = {}
        made: set[Path] = {folder}
        for entry in chosen:
            data = blobs.get(entry.blob)
            rel = entry.path[len(prefix):]
            st = None if data is None else _write(folder, rel, data, warn, made)
            if st is not None and data is not None:
                written[entry.path] = entry.blob
                stats[rel] = seed.Copied(hashlib.sha1(data).hexdigest(), st)
        del blobs
        index = Index(None, Store(folder, kinds), "none", warn=warn)
        reused = _reuse(ws, index, stats)
        index.sync(embed="none", full=True)
    past = Past(commit, index, written, reused)
    with _lock:
        _kept[key] = past
        while len(_kept) > KEEP:
            _kept.popitem(last=False)  # not closed: another thread may still be searching it
    return past


def _chosen(listing: Sequence[Entry], prefix: str, warn: Warn) -> list[Entry]:
    """The entries read as memories: plain files with a memory's name outside hidden folders
    (as `Store.iter_files` finds them), within the limits; each left out for its size said."""
    out: list[Entry] = []
    total = 0
    for entry in listing:
        rel = entry.path[len(prefix):] if entry.path.startswith(prefix) else ""
        parts = rel.split("/")
        if (not rel or not entry.regular or not is_memory_file(parts[-1])
                or any(part in ("", ".", "..") or part.startswith(".") for part in parts)):
            continue
        if entry.size > MAX_FILE_BYTES:
            warn(f"skipping {rel}: file is over 1 MB; memory files are limited to 1 MB")
            continue
        if len(out) >= MAX_FILES or total + max(entry.size, 0) > MAX_BYTES:
            warn(f"read the first {len(out)} memory files only ({total // 1_000_000} MB): "
                 "the commit holds more than memgit reads from one")
            break
        total += max(entry.size, 0)
        out.append(entry)
    return out


def _reuse(ws: Workspace, index: Index, files: Mapping[str, seed.Copied]) -> int:
    """Copy into `index` the work tree index's rows of the files the commit holds byte for
    byte as the work tree's index last read them (`memgit.index.seed`): only the others are
    parsed and indexed. Without a usable work tree index, everything is. How many were copied."""
    if not files:
        return 0
    try:
        return seed.copy(ws.index, index, files)
    except (MemgitError, OSError, sq.driver().Error) as exc:
        ws.warn(f"--at indexes every memory of the commit: the work tree's index cannot be read ({exc})")
        return 0


def _write(folder: Path, rel: str, data: bytes, warn: Warn, made: set[Path]) -> Stat | None:
    """Write one file of the commit under `folder` (new files only, never through a link),
    dated `WRITTEN_NS` (never "racy" for the index's change detection); its stat, or None,
    said, when this file system cannot hold it (a name too long, two names that differ
    only in case). `made`: the folders made so far (made once each)."""
    path = folder / rel
    try:
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.utime(handle.fileno(), ns=(WRITTEN_NS, WRITTEN_NS))
            st = os.fstat(handle.fileno())
    except OSError as exc:
        warn(f"skipping {rel}: cannot hold it in a temporary folder ({exc.strerror or exc})")
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino
