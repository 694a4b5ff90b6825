"""What the default branch holds of the memory folder: the memories a person has reviewed.

A memory is reviewed when the default branch has it as it is here: someone merged it. One
that only the current branch has (or no commit yet) is not, whoever wrote it. The default
branch is, the first that exists: the branch the clone's `memgit.review.branch` names (the
user's machine only: a committed setting could vouch for its own branch), origin's HEAD,
origin's `main` or `master`, then a local `main` or `master`.

Cheap enough for every recall: one `git for-each-ref` finds the tip; the folder's blob ids at
that tip (one `git ls-tree`) are kept per process by the tip's object id, so a long-lived
server lists them again only when the branch moves. A file is compared by its blob id, which
is hashed here from its bytes (no git process per memory).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from memgit.git import runner, snapshot
from memgit.git.repo import Repo

#: Where git keeps the default branch, best first, when the clone names none.
CANDIDATES = ("refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/remotes/origin/master",
              "refs/heads/main", "refs/heads/master")
_PREFIXES = ("refs/remotes/", "refs/heads/")


@dataclass(frozen=True)
class Mainline:
    """The default branch: its name as git shows it (`origin/main`), its tip, and the blob id
    of every plain file under the memory folder there, by path from the repository root."""

    branch: str
    tip: str
    blobs: Mapping[str, str]


_cache: dict[tuple[str, str, str], Mainline] = {}
_lock = threading.Lock()
_KEEP = 8


def mainline(repo: Repo, folder: str, configured: str = "") -> Mainline | None:
    """The default branch and its memory files (`folder`: from the root); None when there is
    none (a new repository, no `main` nor `master`) or git cannot say."""
    refs = _refs(configured)
    if not refs:
        return None
    listed = runner.run(["for-each-ref", "--format=%(objectname) %(refname) %(symref)", *refs], repo.root,
                        timeout=30)
    found: dict[str, tuple[str, str]] = {}
    for row in listed.stdout.splitlines() if listed.ok else ():
        oid, _, rest = row.partition(" ")
        name, _, target = rest.partition(" ")
        found[name] = (oid, target or name)
    ref = next((r for r in refs if r in found), None)
    if ref is None:
        return None
    tip, target = found[ref]
    key = (str(repo.root), folder, tip)
    with _lock:
        known = _cache.get(key)
    if known is not None:
        return known
    listing = snapshot.entries(repo, tip, folder) or []
    line = Mainline(_display(target), tip, {e.path: e.blob for e in listing if e.regular})
    with _lock:
        if len(_cache) >= _KEEP:
            _cache.pop(next(iter(_cache)))
        _cache[key] = line
    return line


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
