"""What the default branch holds of the memory folder: the memories a person has reviewed.

A memory is reviewed when the default branch has it as it is here: someone merged it. One
that only the current branch has (or no commit yet) is not, whoever wrote it. The default
branch is, the first that exists: the branch the clone's `memgit.review.branch` names (the
user's machine only: a committed setting could vouch for its own branch), origin's HEAD,
origin's `main` or `master`, then a local `main` or `master`.

Cheap enough for every recall: one `git for-each-ref` finds the tip, and is not run again
while the files git keeps those refs in (loose refs, `packed-refs`, reftable's list) keep
their stat; the folder's blob ids at that tip (one `git ls-tree`) are kept per process by the
tip's object id. So a CLI call pays two git processes, and a long-lived server none until a
branch moves. A file is compared by its blob id, hashed here from its bytes (no git process
per memory).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from memgit.git import localstate, repostate, runner, snapshot
from memgit.git.repo import Repo

#: Where git keeps the default branch, best first, when the clone names none.
CANDIDATES = repostate.BRANCH_REFS
_PREFIXES = ("refs/remotes/", "refs/heads/")


@dataclass(frozen=True)
class Mainline:
    """The default branch: its name as git shows it (`origin/main`), its tip, and the blob id
    of every plain file under the memory folder there, by path from the repository root."""

    branch: str
    tip: str
    blobs: Mapping[str, str]


_cache: dict[tuple[str, str, str], Mainline] = {}
_tips: dict[tuple[str, tuple[str, ...]], tuple[tuple[tuple[int, int, int] | None, ...], tuple[str, str] | None]] = {}
_lock = threading.Lock()
_KEEP = 8


def mainline(repo: Repo, folder: str, configured: str = "") -> Mainline | None:
    """The default branch and its memory files (`folder`: from the root); None when there is
    none (a new repository, no `main` nor `master`) or git cannot say."""
    refs = _refs(configured)
    tipped = _tip(repo, refs) if refs else None
    if tipped is None:
        return None
    tip, target = tipped
    key = (str(repo.root), folder, tip)
    with _lock:
        known = _cache.get(key)
    if known is not None:
        return known
    line = Mainline(_display(target), tip, _blobs(repo, tip, folder))
    with _lock:
        if len(_cache) >= _KEEP:
            _cache.pop(next(iter(_cache)))
        _cache[key] = line
    return line


def _blobs(repo: Repo, tip: str, folder: str) -> Mapping[str, str]:
    """`snapshot.blobs` at `tip`, kept in the clone's local state so that each new process
    (every hook is one) reads a file instead of running `git ls-tree` until the branch moves."""
    path = localstate.mainline(repo.git_dir)
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept.get("tip") == tip and kept.get("folder") == folder and isinstance(kept.get("blobs"), dict):
            return {str(k): str(v) for k, v in kept["blobs"].items()}
    except (OSError, ValueError, AttributeError):
        pass
    blobs = snapshot.blobs(repo, tip, folder)
    try:
        localstate.replace(path, json.dumps({"tip": tip, "folder": folder, "blobs": dict(blobs)}))
    except OSError:
        pass  # a read-only git dir: ask git again next time
    return blobs


def _tip(repo: Repo, refs: tuple[str, ...]) -> tuple[str, str] | None:
    """(tip, the ref it is at) of the first of `refs` that exists; the last answer again
    while the files git keeps those refs in have not changed."""
    key = (str(repo.root), refs)
    with _lock:
        last = _tips.get(key)
    stamp = _stamp(repo, refs, last[1][1] if last and last[1] else None)
    if last is not None and last[0] == stamp:
        return last[1]
    found: dict[str, tuple[str, str]] = {}
    if last is None and refs == CANDIDATES and repostate.holding():
        # A hook (`repostate.held`) asked git already, or asks once for both. Outside one the
        # answer `branch_refs` keeps may be older than a fetch (an MCP server's): asked again.
        found = repostate.branch_refs(repo.root)
    else:
        listed = runner.run(["for-each-ref", "--format=%(objectname) %(refname) %(symref)", *refs], repo.root,
                            timeout=30)
        if not listed.ok:
            return None
        for row in listed.stdout.splitlines():
            oid, _, rest = row.partition(" ")
            name, _, target = rest.partition(" ")
            found[name] = (oid, target or name)
    ref = next((r for r in refs if r in found), None)
    answer = found[ref] if ref is not None else None
    if answer is not None and (last is None or last[1] is None or last[1][1] != answer[1]):
        stamp = _stamp(repo, refs, answer[1])  # a symbolic ref's target is watched too
    with _lock:
        _tips[key] = (stamp, answer)
    return answer


def _stamp(repo: Repo, refs: tuple[str, ...], target: str | None) -> tuple[tuple[int, int, int] | None, ...]:
    """The stat of every file that holds `refs` (and `target`) in this repository's common git dir."""
    common = repo.git_dir
    pointer = common / "commondir"  # a linked worktree keeps its refs in the main git dir
    try:
        if pointer.is_file():
            common = (common / pointer.read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return (None,)
    names = [*refs, *([target] if target else []), "packed-refs", "reftable/tables.list"]
    out: list[tuple[int, int, int] | None] = []
    for name in names:
        try:
            st = os.stat(common / name)
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


def _refs(configured: str) -> tuple[str, ...]:
    """The refs to look for, best first: the configured branch's, else `CANDIDATES`."""
    name = configured.strip()
    if not name:
        return CANDIDATES
    if name.startswith(("-", "/")) or ".." in name or any(ch.isspace() or ord(ch) < 32 for ch in name):
        return ()  # not a branch name git allows: nothing counts as reviewed rather than a guess
    if name.startswith("refs/"):
        return (name,)
    return (f"refs/remotes/origin/{name}", f"refs/heads/{name}", f"refs/remotes/{name}")


def _display(ref: str) -> str:
    for prefix in _PREFIXES:
        if ref.startswith(prefix):
            return ref[len(prefix):]
    return ref


def blob_id(data: bytes, like: str) -> str:
    """Git's object id of a blob holding `data`, in the hash of the repository whose ids look
    like `like` (SHA-1, or SHA-256 for a 64-digit id)."""
    digest = hashlib.sha256() if len(like) == 64 else hashlib.sha1()
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def same_blob(data: bytes, blob: str) -> bool:
    """Whether `data` (a file of the work tree) is what git stores as `blob`: byte for byte,
    or once line ends are normalised (a checkout with `core.autocrlf` writes CRLF)."""
    if blob_id(data, blob) == blob:
        return True
    return b"\r\n" in data and blob_id(data.replace(b"\r\n", b"\n"), blob) == blob
