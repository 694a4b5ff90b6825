"""The folder of memory files: finding, reading and writing them safely.

The store never rewrites a file it was not asked to change, never follows a symlink out of
the folder, and writes atomically (temp file + `os.replace`) so a crash leaves either the old
or the new file, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from memgit import memory as fmt
from memgit.errors import MemgitError
from memgit.memory import Memory, Problem


@dataclass(frozen=True)
class FileStat:
    """What the index needs to notice a change without reading the file."""

    rel: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Loaded:
    """Every usable memory in the folder, and every problem met on the way."""

    memories: list[Memory]
    problems: list[Problem]


class Store:
    """Memory files under one folder (normally `<repo>/.memory`)."""

    def __init__(self, root: Path, kinds: tuple[str, ...] = fmt.KINDS) -> None:
        self.root = root
        self.kinds = kinds
        self._real_root = os.path.realpath(root)

    # -- finding -------------------------------------------------------------------------

    def iter_files(self) -> Iterator[FileStat]:
        """Every `*.md` under the folder, skipping hidden folders and symlinks."""
        root = str(self.root)
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if not name.endswith(".md") or name.startswith("."):
                    continue
                full = os.path.join(dirpath, name)
                try:
                    # A symlink is never a memory: one pointing outside could leak a file into
                    # the store, one pointing inside would be the same memory twice.
                    if os.path.islink(full):
                        continue
                    st = os.stat(full)
                except OSError:
                    continue
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                yield FileStat(rel, st.st_size, st.st_mtime_ns)

    def _inside(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real == self._real_root or real.startswith(self._real_root + os.sep)

    def path_of(self, rel: str) -> Path:
        """The file for a path relative to the folder; hostile paths are refused."""
        if not rel or rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in rel.split("/")):
            raise MemgitError(f"refusing memory path {rel!r}: it must stay inside {self.root}")
        full = self.root / rel
        if not self._inside(str(full.parent)):
            raise MemgitError(f"refusing memory path {rel!r}: it leads outside {self.root}")
        return full

    # -- reading -------------------------------------------------------------------------

    def read(self, rel: str) -> tuple[Memory | None, list[Problem]]:
        path = self.path_of(rel)
        try:
            with open(path, "rb") as handle:
                data = handle.read(fmt.MAX_FILE_BYTES + 1)
        except OSError as exc:
            return None, [Problem(rel, 0, f"cannot read: {exc.strerror}")]
        memory, problems = fmt.check(data, rel, self.kinds)
        return (memory if not problems else None), problems

    def load(self) -> Loaded:
        """All memories; a bad file or a duplicate id is a problem, never an exception."""
        memories: list[Memory] = []
        problems: list[Problem] = []
        seen: dict[str, str] = {}
        for stat in self.iter_files():
            memory, found = self.read(stat.rel)
            problems.extend(found)
            if memory is None:
                continue
            if memory.id in seen:
                problems.append(
                    Problem(stat.rel, 0, f"duplicate id {memory.id!r} (also in {seen[memory.id]}); give one a new id")
                )
                continue
            seen[memory.id] = stat.rel
            memories.append(memory)
        return Loaded(memories, problems)

    # -- writing -------------------------------------------------------------------------

    def new_path(self, memory: Memory, taken: set[str] | frozenset[str] = frozenset()) -> str:
        """A file name for a new memory that no existing file (nor one in `taken`) uses."""
        name = fmt.file_name(memory)
        rel = name
        counter = 2
        while rel in taken or (self.root / rel).exists():
            rel = f"{name[:-3]}-{counter}.md"
            counter += 1
        return rel

    def write(self, memory: Memory) -> Path:
        """Write `memory` to `memory.path` atomically; returns the file's path."""
        return self.write_text(memory.path, fmt.dump(memory))

    def write_text(self, rel: str, text: str) -> Path:
        path = self.path_of(rel)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".md", dir=path.parent)
        except OSError as exc:
            raise MemgitError(f"cannot write {path} ({exc.strerror or exc}); check permissions and disk space") from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException as exc:
            if os.path.exists(tmp):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise MemgitError(
                    f"cannot write {path} ({exc.strerror or exc}); check permissions and disk space"
                ) from None
            raise
        return path

    def delete(self, rel: str) -> Path:
        path = self.path_of(rel)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise MemgitError(f"cannot delete {path} ({exc.strerror or exc})") from None
        return path
