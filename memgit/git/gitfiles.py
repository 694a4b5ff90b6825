"""The repository's place and its refs read from the files git keeps them in, without a `git`
process: for an agent's hook, which pays ~5 ms per process it starts.

Only the plain, common layouts are read: a work tree with a `.git` folder (or a linked
worktree's `.git` file naming its git dir), loose refs and `packed-refs`. Whatever else
could make git's own answer differ returns None, and the caller asks git as before:

- a `GIT_*` variable that changes where git looks (`GIT_DIR`, `GIT_WORK_TREE`,
  `GIT_CEILING_DIRECTORIES`…);
- a folder on the way up that looks like a git dir itself (a `HEAD` file: git would take it
  as one, and memgit refuses it with a message), a start inside a git dir, a file-system
  boundary (git stops there);
- a git dir or work tree owned by another user (git's `safe.directory`);
- a config that moves the work tree, makes the repository bare, includes other files, keeps
  per-worktree config or refs in another format (`core.worktree`, `core.bare`, `[include]`,
  `extensions.worktreeConfig`, `extensions.refStorage`);
- a ref that is not a plain object id or a symbolic ref to one, or is a symbolic link (git
  takes a HEAD linked to `refs/heads/x` as that branch; a link may lead out of the git dir).

Nothing here reads outside the work tree and the git dir git itself would use: a `.git` file
cannot be committed, so it is the clone's own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: Variables that change which repository git finds, or where.
_DISCOVERY_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
                        "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE",
                        "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_REF_STORAGE")
_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
#: Config that makes git's answer something else than this module's reading of the files.
_UNUSUAL_CONFIG = re.compile(r"worktree|\bbare\s*(?:=\s*(?:true|yes|on|1)\b|$)|\[\s*include|refstorage",
                             re.IGNORECASE | re.MULTILINE)


def is_oid(text: str) -> bool:
    """Whether `text` is a full object id (SHA-1 or SHA-256), as git writes one."""
    return _OID.fullmatch(text) is not None


def _mine(st: os.stat_result) -> bool:
    return not hasattr(os, "getuid") or st.st_uid == os.getuid()


def locate(start: Path) -> tuple[Path, Path] | None:
    """(work tree root, absolute git dir) of the repository containing `start`, read from the
    files; None when git should be asked (see the module's docstring)."""
    if any(name in os.environ for name in _DISCOVERY_VARIABLES):
        return None
    try:
        probe = Path(os.path.realpath(start))
        if not probe.is_dir():
            probe = probe.parent
        device = probe.stat().st_dev
        for folder in (probe, *probe.parents):
            if folder.name == ".git" or os.path.lexists(folder / "HEAD"):
                return None  # inside a git dir, or a folder git would take as one
            st = folder.stat()
            if st.st_dev != device:
                return None  # git stops at a file-system boundary
            dot = folder / ".git"
            if os.path.lexists(dot):
                return _checked(folder, dot, st)
    except (OSError, ValueError):
        return None
    return None


def _checked(root: Path, dot: Path, root_st: os.stat_result) -> tuple[Path, Path] | None:
    if not _mine(root_st) or dot.is_symlink():
        return None
    if dot.is_dir():
        git_dir = dot
    elif dot.is_file():
        text = dot.read_text(encoding="utf-8", errors="strict")
        if not text.startswith("gitdir: ") or text.count("\n") > 1:
            return None
        git_dir = Path(os.path.realpath(root / text[len("gitdir: "):].strip()))
    else:
        return None
    git_st = git_dir.stat()
    if not _mine(git_st) or not (git_dir / "HEAD").is_file():
        return None
    common = common_dir(git_dir)
    if common is None or not (common / "objects").is_dir() or not (common / "refs").is_dir():
        return None
    for config in {common / "config", git_dir / "config"}:
        try:
            text = config.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            continue
        if _UNUSUAL_CONFIG.search(text):
            return None
    return root, git_dir


def common_dir(git_dir: Path) -> Path | None:
    """The git dir refs live in: a linked worktree's main git dir, else `git_dir` itself."""
    pointer = git_dir / "commondir"
    try:
        text = pointer.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return git_dir
    except (OSError, ValueError):
        return None
    return Path(os.path.realpath(git_dir / text)) if text else None


def _packed(common: Path) -> dict[str, str] | None:
    try:
        text = (common / "packed-refs").read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return None
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in "#^":
            continue
        oid, _, name = line.partition(" ")
        if not _OID.fullmatch(oid):
            return None
        found[name] = oid
    return found


class Refs:
    """The refs of one git dir, read on demand; `None` from a method means "ask git"."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.common = common_dir(git_dir)
        self._packed: dict[str, str] | None | bool = False

    def _raw(self, name: str) -> str | None:
        """A ref's file's content ("" when there is none); None when it cannot be read."""
        if self.common is None or "\\" in name or ".." in name or not name.startswith(("HEAD", "refs/")):
            return None
        # Per-worktree refs live in the worktree's git dir, the rest in the common one.
        base = self.git_dir if name == "HEAD" or name.startswith(("refs/worktree/", "refs/bisect/")) else self.common
        if os.path.islink(base / name):
            return None  # a symbolic link git reads its own way (a HEAD linked to its branch)
        try:
            return (base / name).read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            if name == "HEAD":
                return None
        except (OSError, ValueError):
            return None
        if self._packed is False:
            self._packed = _packed(self.common)
        if self._packed is None or isinstance(self._packed, bool):
            return None
        return self._packed.get(name, "")

    def resolve(self, name: str) -> tuple[str | None, str] | None:
        """(object id or None when the ref does not exist, the ref it ends at); one level of
        symbolic ref is followed. None: ask git."""
        raw = self._raw(name)
        if raw is None:
            return None
        if raw.startswith("ref: "):
            target = raw[5:].strip()
            inner = self._raw(target)
            if inner is None or inner.startswith("ref: ") or (inner and not _OID.fullmatch(inner)):
                return None
            return (inner or None), target
        if raw and not _OID.fullmatch(raw):
            return None
        return (raw or None), name


def head_and_branch(git_dir: Path) -> tuple[str | None, str | None] | None:
    """(HEAD's commit, the current branch) from the files; None: ask git."""
    found = Refs(git_dir).resolve("HEAD")
    if found is None:
        return None
    oid, target = found
    if target == "HEAD":
        return (oid, None) if oid else None  # detached
    return oid, target.removeprefix("refs/heads/") if target.startswith("refs/heads/") else None


def listed(git_dir: Path, names: tuple[str, ...]) -> dict[str, tuple[str, str]] | None:
    """{ref: (its tip, the ref it points at)} for each of `names` that exists, as
    `git for-each-ref --format='%(objectname) %(refname) %(symref)'` gives the exact names
    (not the refs below them); None: ask git."""
    refs = Refs(git_dir)
    out: dict[str, tuple[str, str]] = {}
    for name in names:
        found = refs.resolve(name)
        if found is None:
            return None
        oid, target = found
        if oid is None:
            if target != name:
                return None  # a dangling symbolic ref: git's own word on it
            continue
        out[name] = (oid, target)
    return out
