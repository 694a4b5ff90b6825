"""The repository's current state, as an agent's session sees it: branch, HEAD, the default
branch, and the files and functions changed since a commit.

Functions come from `git diff` hunks: in a Python file, each changed line is mapped to the
innermost `def` or `class` around it (read with `ast` from the file as it is now); in other
languages, to the hunk header git prints after `@@` (its guess at the enclosing function).

Inside `held()` (one agent hook event: nothing in it moves HEAD), HEAD and the branch are
asked of git once, together, and remembered: a hook pays ~5 ms per git process.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from memgit.config import MEMORY_DIR
from memgit.errors import MemgitError
from memgit.git import gitfiles, runner

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


def git(root: Path, *args: str) -> str:
    """stdout of a git command, "" when it fails (the state is best effort)."""
    try:
        done = runner.run(args, root, timeout=10)
    except MemgitError:  # no git, or a git that hangs: no state rather than no session
        return ""
    return done.stdout if done.returncode == 0 else ""


_HELD: dict[Path, tuple[str | None, str | None]] | None = None  # root -> (HEAD, branch) in `held()`


@contextmanager
def held() -> Iterator[None]:
    """Remember HEAD and the branch for the block (for a short process that does not move HEAD)."""
    global _HELD
    outer, _HELD = _HELD, {} if _HELD is None else dict(_HELD)  # what a block inside holds stays in it
    try:
        yield
    finally:
        _HELD = outer


def hold(root: Path, head: str | None, branch: str | None) -> None:
    """Inside `held()`: take HEAD and the branch of `root` to be these (as they were when a hook
    handed its event off, `memgit.hookrun`), whatever they are now."""
    if _HELD is None:
        raise RuntimeError("repostate.hold outside repostate.held()")
    _HELD[root] = (head, branch)


def holding() -> bool:
    """Whether this is inside `held()`: a short process, whose answers of git are still true."""
    return _HELD is not None


def _both(root: Path) -> tuple[str | None, str | None] | None:
    """(HEAD, branch) in one git call when held; None otherwise (or on an unborn branch)."""
    if _HELD is None:
        return None
    if root not in _HELD:
        known = gitfiles.locate(root)
        both = gitfiles.head_and_branch(known[1]) if known is not None and known[0] == root else None
        if both is not None:
            _HELD[root] = both
            return both
        lines = git(root, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD").split()
        if len(lines) != 2:
            return None  # unborn: the two questions are asked apart
        name = lines[1].removeprefix("refs/heads/") if lines[1].startswith("refs/heads/") else None
        _HELD[root] = (lines[0], name)
    return _HELD[root]


def head(root: Path) -> str | None:
    both = _both(root)
    if both is not None:
        return both[0]
    return git(root, "rev-parse", "-q", "--verify", "HEAD").strip() or None


def branch(root: Path) -> str | None:
    """The current branch, None when HEAD is detached."""
    both = _both(root)
    if both is not None:
        return both[1]
    return git(root, "symbolic-ref", "--short", "-q", "HEAD").strip() or None


#: Where git keeps the default branch, best first (`memgit.git.reviewed` reads them too).
BRANCH_REFS = ("refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/remotes/origin/master",
               "refs/heads/main", "refs/heads/master")


@functools.lru_cache(maxsize=16)
def branch_refs(root: Path) -> dict[str, tuple[str, str]]:
    """{ref: (its tip, the ref it points at)} for each of `BRANCH_REFS` that exists: one git
    call a process, shared by the default branch's name and what it holds of memory."""
    if _HELD is not None:  # a hook: from git's files when their layout is the plain one
        known = gitfiles.locate(root)
        listed = gitfiles.listed(known[1], BRANCH_REFS) if known is not None and known[0] == root else None
        if listed is not None:
            return listed
    found: dict[str, tuple[str, str]] = {}
    for row in git(root, "for-each-ref", "--format=%(objectname) %(refname) %(symref)", *BRANCH_REFS).splitlines():
        oid, _, rest = row.partition(" ")
        name, _, target = rest.partition(" ")
        if name:
            found[name] = (oid, target or name)
    return found


def default_branch(root: Path) -> str:
    """origin's HEAD branch if known, else `main` or `master` if one exists, else `main`."""
    refs = branch_refs(root)
    remote = refs.get("refs/remotes/origin/HEAD", ("", ""))[1]
    if remote.startswith("refs/remotes/origin/"):
        return remote.removeprefix("refs/remotes/origin/")
    for name in ("main", "master"):
        if f"refs/heads/{name}" in refs:
            return name
    return "main"


def default_base(root: Path) -> str | None:
    """The commit HEAD left the default branch at (`git merge-base`), None when none is known.
    The branch's name is the remote's to choose (`--is-ancestor` is a valid one): never an option."""
    return git(root, "merge-base", "--end-of-options", "HEAD", default_branch(root)).strip() or None


@dataclass(frozen=True)
class Changed:
    """One changed file and the functions (or hunk headers) its changes fall in."""

    path: str
    functions: tuple[str, ...] = ()


def changed_since(root: Path, base: str | None) -> list[Changed]:
    """Files changed in the work tree since commit `base` (HEAD if None), new untracked files
    included, memory files left out; each with the functions its changes touch."""
    args = ["diff", "-U0", "--no-color", "--no-ext-diff", base or "HEAD", "--"]
    diff = git(root, *args) if (base or head(root)) else ""
    ranges: dict[str, list[tuple[int, int, str]]] = {}
    current: str | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            current = name[2:] if name.startswith("b/") else None
            if current is not None:
                ranges.setdefault(current, [])
        elif line.startswith("diff --git "):
            current = None
            match = re.match(r"diff --git a/(.+) b/(.+)$", line)
            if match:  # a deletion has no +++ b/ line: keep the path anyway
                ranges.setdefault(match.group(2), [])
        elif current is not None:
            match = _HUNK.match(line)
            if match:
                start, count = int(match.group(1)), int(match.group(2) or 1)
                ranges[current].append((start, start + max(count, 1) - 1, match.group(3).strip()))
    for name in git(root, "ls-files", "-o", "--exclude-standard").splitlines():
        ranges.setdefault(name, [(1, 10**9, "")])
    out = []
    for path, hunks in ranges.items():
        if path == MEMORY_DIR or path.startswith(MEMORY_DIR + "/"):
            continue
        out.append(Changed(path, tuple(_functions(root / path, hunks))))
    return sorted(out, key=lambda c: c.path)


def _functions(path: Path, hunks: Sequence[tuple[int, int, str]]) -> list[str]:
    names: dict[str, None] = {}
    if path.suffix == ".py":
        spans = _python_spans(path)
        if spans is not None:
            for first, last, _ in hunks:
                inner = [s for s in spans if s[0] <= last and s[1] >= first]
                # The innermost definitions a hunk overlaps (a method, not its class too).
                for span in inner:
                    if not any(o is not span and span[0] <= o[0] and o[1] <= span[1] for o in inner):
                        names[span[2]] = None
            return list(names)[:20]
    for _, _, header in hunks:
        match = re.search(r"([A-Za-z_][\w.:$]*)\s*\(", header) or re.search(
            r"([A-Za-z_]\w*)\s*[{:]?\s*$", header
        )
        if match:
            names[match.group(1)] = None
    return list(names)[:20]


def _python_spans(path: Path) -> list[tuple[int, int, str]] | None:
    """(first line, last line, qualified name) of every def and class in a Python file."""
    try:
        if path.stat().st_size > 2_000_000:
            return None
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    spans: list[tuple[int, int, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                spans.append((first, child.end_lineno or child.lineno, name))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return spans
