"""Where a recalled memory stands: whether a person merged it into the default branch.

`mark` sets each project hit's `Review` (`memgit.recall.hit`) by comparing its file with the
default branch's copy (`memgit.git.reviewed`): byte-identical there is "reviewed", another
version there is "changed", none there is "unreviewed" — a memory that exists only on this
branch, or in no commit yet. Who wrote it is the memory's `source` (user, static, inferred:
an agent's); `Hit.to_dict` carries both, and injection marks what was not reviewed
(`memgit.recall.inject.trust_note`). It costs one git process per call (two the first time
in a process), and a read of each hit's file; it never fails a recall.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from memgit.errors import MemgitError
from memgit.git import reviewed
from memgit.index.workspace import Workspace
from memgit.memory.format import MAX_FILE_BYTES
from memgit.recall.hit import Hit, Review

PROJECT = "project"
#: Bytes read at a time from a hit's file (most memories are one read).
CHUNK = 1 << 16


def mark(ws: Workspace, hits: Sequence[Hit], blobs: Mapping[str, str] | None = None) -> list[Hit]:
    """`hits` with `review` set on each project hit that has none yet. Each file is compared as
    the work tree holds it, or, given `blobs` (path from the root -> blob id: hits read from a
    commit, `recall --at`), as that blob. Unchanged when there is no default branch or git
    cannot say."""
    todo = [hit for hit in hits if hit.scope == PROJECT and hit.review is None]
    if not todo or ws.repo is None:
        return list(hits)
    try:
        line = reviewed.mainline(ws.repo, ws.path_prefix().rstrip("/"), ws.config.review_branch)
    except MemgitError as exc:  # git missing or hanging: recall goes on without the marks
        ws.warn(f"cannot tell which memories were reviewed ({exc})")
        return list(hits)
    if line is None:
        return list(hits)
    out: list[Hit] = []
    root = str(ws.repo.root)
    for hit in hits:
        if hit.scope != PROJECT or hit.review is not None:
            out.append(hit)
            continue
        theirs = line.blobs.get(hit.path)
        if theirs is None:
            state = "unreviewed"
        elif blobs is not None:
            state = "reviewed" if blobs.get(hit.path) == theirs else "changed"
        else:
            data = _read(os.path.join(root, hit.path))
            state = "reviewed" if data is not None and reviewed.same_blob(data, theirs) else "changed"
        out.append(replace(hit, review=Review(state, line.branch)))
    return out


def _read(path: Path | str) -> bytes | None:
    """A memory file's bytes (at most `MAX_FILE_BYTES` + 1), never through a symbolic link;
    None when it cannot be opened. Read in chunks of `CHUNK`: one read of the whole limit
    allocated a megabyte for a file of a few hundred bytes (~40 us a hit, every recall)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        chunks, left = [], MAX_FILE_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
