"""Stale anchors: a memory's files and `path::symbol` anchors checked against the code.

A memory that points at code the project no longer has misleads an agent more than no
memory at all. For each path a memory names (its `files`, its `entity`, and
`path::symbol` items of `symbols`):

- the path exists in the working tree: fine; for a `path::symbol`, the symbol must still
  be defined there (Python through `ast`: classes, functions and methods, `Class.method`
  spelled out; other languages by a word search for the symbol's last part);
- the path is gone but git's rename detection saw it renamed since the memory was last
  updated: the new path is proposed (followed through several renames);
- otherwise (deleted, or a symbol no longer defined): the memory is flagged for review;
- the path exists but commits since the memory was written changed a large share of its
  lines (`churned`): the memory is flagged for review, with those commits as evidence.

Only anchors that look like repository paths are checked (a topic entity such as
"release process" is not a file).
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

from memgit.memory.against import looks_like_path
from memgit.memory.format import Memory


@dataclass(frozen=True)
class Finding:
    """One stale anchor of a memory: `new` is the renamed path, or None when it is gone."""

    memory_id: str
    anchor: str
    path: str
    new: str | None
    why: str


def split_anchor(anchor: str) -> tuple[str, str | None]:
    path, sep, symbol = anchor.partition("::")
    return path.strip(), (symbol.strip() or None) if sep else None


class Checker:
    """Checks anchors against one work tree; `renames` are `(old, new)` oldest first."""

    def __init__(self, root: Path, renames: Sequence[tuple[str, str]] = ()) -> None:
        self.root = root
        self.renames = list(renames)

    def renamed(self, path: str) -> str | None:
        """Where `path` went through the renames, if it ends at a file that exists."""
        current, seen = path, {path}
        for old, new in self.renames:
            if old == current:
                current = new
                if current in seen:
                    break
                seen.add(current)
        return current if current != path and (self.root / current).is_file() else None

    def exists(self, path: str) -> bool:
        """Whether `path` is in the work tree (a path climbing out of it never is)."""
        norm = os.path.normpath(path)
        if os.path.isabs(norm) or norm == ".." or norm.startswith(".." + os.sep):
            return False
        return os.path.exists(os.path.join(self.root, norm))

    def defines(self, path: str, symbol: str) -> bool:
        return symbol_defined(self.root / path, symbol)

    def check(self, memory: Memory) -> list[Finding]:
        anchors = [f for f in memory.files]
        if memory.entity:
            anchors.append(memory.entity)
        anchors.extend(s for s in memory.symbols if "::" in s)
        out: list[Finding] = []
        done: set[str] = set()
        for anchor in anchors:
            path, symbol = split_anchor(anchor)
            if anchor in done or not looks_like_path(path):
                continue
            done.add(anchor)
            if self.exists(path):
                if symbol and (self.root / path).is_file() and not self.defines(path, symbol):
                    out.append(
                        Finding(memory.id, anchor, path, None, f"`{symbol}` is no longer defined in `{path}`")
                    )
                continue
            new = self.renamed(path)
            if new is not None:
                if symbol and not self.defines(new, symbol):
                    out.append(
                        Finding(
                            memory.id,
                            anchor,
                            path,
                            new,
                            f"`{path}` was renamed to `{new}`, which no longer defines `{symbol}`",
                        )
                    )
                else:
                    out.append(
                        Finding(memory.id, anchor, path, new, f"`{path}` was renamed to `{new}` (git)")
                    )
            else:
                out.append(Finding(memory.id, anchor, path, None, f"`{path}` no longer exists"))
        return out


def symbol_defined(file: Path, symbol: str) -> bool:
    """Whether `symbol` (`name`, `Class.method`) is defined in `file`."""
    try:
        stat = file.stat()
    except OSError:
        return False
    names = _python_names(str(file), stat.st_mtime_ns, stat.st_size) if file.suffix == ".py" else None
    if names is not None:
        if symbol in names:
            return True
        return "." not in symbol and any(name.rsplit(".", 1)[-1] == symbol for name in names)
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    last = symbol.replace("::", ".").split(".")[-1]
    return re.search(rf"(?<![\w$]){re.escape(last)}(?![\w$])", text) is not None


@lru_cache(maxsize=256)
def _python_names(path: str, mtime_ns: int, size: int) -> frozenset[str] | None:
    """Every class, function and method a Python file defines, dotted from the top level,
    plus names assigned at module level. None when the file does not parse."""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (SyntaxError, ValueError, OSError):
        return None
    names: set[str] = set()

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                names.add(name)
                walk(child, name + ".")
            elif isinstance(child, (ast.Assign, ast.AnnAssign)) and not prefix:
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
            elif isinstance(child, (ast.If, ast.Try, ast.With)):
                walk(child, prefix)  # definitions under `if TYPE_CHECKING:` and the like

    walk(tree, "")
    return frozenset(names)


def churned(memory: Memory, root: Path, history: Sequence[tuple[str, str, Mapping[str, int]]],
            since: datetime | None, min_lines: int, min_share: float) -> list[str]:
    """Why the code `memory` names has likely moved on since it was written: for each of its
    existing path anchors, the lines added + deleted by commits after `since` (`history` as
    `gitrepo.churn` gives it, paths from the repository root), when they reach `min_lines`
    and `min_share` of the file's length now. One line of evidence per such file."""
    if since is None:
        return []
    paths = dict.fromkeys(split_anchor(a)[0] for a in (*memory.files, memory.entity, *memory.symbols) if a)
    out = []
    for path in paths:
        if not looks_like_path(path) or not (root / path).is_file():
            continue
        commits = [(sha, n[path]) for sha, when, n in history
                   if path in n and (_when(when) or since) > since]
        changed = sum(n for _, n in commits)
        try:
            length = max(1, (root / path).read_bytes().count(b"\n"))
        except OSError:
            continue
        if commits and changed >= min_lines and changed >= min_share * length:
            shas = ", ".join(sha for sha, _ in commits[:5]) + (", …" if len(commits) > 5 else "")
            out.append(f"`{path}`: {changed} lines changed in {len(commits)} commit(s) since the memory "
                       f"was written ({shas}), against {length} lines now")
    return out


def _when(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None
