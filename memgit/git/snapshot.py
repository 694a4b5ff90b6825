"""The memory folder as a commit holds it: a revision named by a user checked and resolved,
the files of a folder in that commit's tree (`git ls-tree`), and their bytes (`git cat-file
--batch`, through `memgit.git.staging.read_blobs`). Nothing is checked out: git's objects are
the truth, so what is read cannot drift from the commit.

A revision comes from a user or an agent (`recall --at REV`): one that looks like an option
(`--output=x`) is refused before git sees it, and one git cannot resolve to a commit gets an
error that says what to name instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from memgit.errors import MemgitError
from memgit.git import runner
from memgit.git.repo import Repo

#: Longest revision name taken (git's own names are far shorter; a pasted log is not one).
MAX_REV_CHARS = 256
#: Git's tree modes of the files a checkout writes as plain files (not links nor submodules).
FILE_MODES = ("100644", "100755")


@dataclass(frozen=True)
class Entry:
    """One file of a tree: its path from the repository root, mode, blob id and size in bytes."""

    path: str
    mode: str
    blob: str
    size: int

    @property
    def regular(self) -> bool:
        """A plain file (a symbolic link or a submodule is never a memory)."""
        return self.mode in FILE_MODES


def resolve(repo: Repo, rev: str) -> str:
    """The commit `rev` names (a sha, tag, branch, `HEAD~3`…), as its full object id.

    Raises MemgitError for a name that looks like an option, holds control characters or is
    not a commit of this repository."""
    name = rev.strip() if isinstance(rev, str) else ""
    if not name:
        raise MemgitError("the revision is empty: name a commit, tag or branch (e.g. --at v1.2 or --at HEAD~5)")
    if name.startswith("-") or len(name) > MAX_REV_CHARS or any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise MemgitError(f"{_shown(name)} is not a revision: name a commit, tag or branch "
                          "(e.g. --at v1.2 or --at HEAD~5)")
    done = runner.run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}"], repo.root,
                      timeout=30)
    oid = done.stdout.strip()
    if not done.ok or not oid:
        raise MemgitError(f"unknown revision {_shown(name)}: no commit, tag or branch of this repository has that "
                          "name ('git log --oneline' and 'git tag' list them; fetch first for a remote one)")
    return oid


def entries(repo: Repo, commit: str, folder: str, *, sizes: bool = False) -> list[Entry] | None:
    """The files under `folder` (a path from the root, "" for all) in `commit`'s tree, at any
    depth, with their sizes when `sizes` (-1 otherwise); None when the commit has no such folder.
    `commit` must be an object id (`resolve`): it is given to git as is."""
    args = ["ls-tree", "-r", "-z", "--full-tree", *(["-l"] if sizes else []), commit]
    folder = folder.strip("/")
    done = runner.run([*args, "--", folder] if folder else args, repo.root, timeout=120)
    if not done.ok:
        raise MemgitError(f"git cannot read the tree of {commit[:12]} ({done.stderr.strip() or 'ls-tree failed'})")
    found: list[Entry] = []
    for record in done.stdout.split("\0"):
        head, tab, path = record.partition("\t")
        parts = head.split()
        if not tab or len(parts) < 3 or parts[1] != "blob":
            continue
        size = int(parts[3]) if sizes and len(parts) > 3 and parts[3].isdigit() else -1
        found.append(Entry(path, parts[0], parts[2], size))
    return found if found or not folder else _folder_or_none(repo, commit, folder)


def blobs(repo: Repo, commit: str, folder: str) -> dict[str, str]:
    """The blob id of every plain file under `folder` in `commit`'s tree, by path from the root
    ({} when there is none): `entries` without sizes, parsed the fast way for a recall that
    must stay cheap at 10k files."""
    done = runner.run(["ls-tree", "-r", "-z", "--full-tree", commit, "--", folder.strip("/")], repo.root,
                      timeout=120)
    if not done.ok:
        raise MemgitError(f"git cannot read the tree of {commit[:12]} ({done.stderr.strip() or 'ls-tree failed'})")
    out: dict[str, str] = {}
    for record in done.stdout.split("\0"):
        tab = record.find("\t")
        # "<mode> blob <oid>\t<path>": a plain file's mode is one of FILE_MODES, six digits
        if tab > 12 and record[:6] in FILE_MODES and record[6:12] == " blob ":
            out[record[tab + 1:]] = record[12:tab]
    return out


def _folder_or_none(repo: Repo, commit: str, folder: str) -> list[Entry] | None:
    """[] when `folder` is a tree of `commit` with no files in it, else None."""
    done = runner.run(["cat-file", "-t", f"{commit}:{folder}"], repo.root, timeout=30)
    return [] if done.ok and done.stdout.strip() == "tree" else None


def _shown(name: str) -> str:
    """A revision name for a message: quoted, cut, control characters escaped."""
    return repr(name[:80] + ("…" if len(name) > 80 else ""))
