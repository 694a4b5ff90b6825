"""The folder of memory files: finding, reading and writing them safely.

The store never rewrites a file it was not asked to change, never follows a symlink out of
the folder, and writes atomically (temp file + `os.replace`) so a crash leaves either the old
or the new file, never half of one.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from memgit.errors import MemgitError
from memgit.memory import format as fmt
from memgit.memory import lenient
from memgit.memory.format import Memory, Problem


@dataclass(frozen=True)
class OwnWrite:
    """One file this process wrote or deleted in a memory folder, and the mtime of the file's
    folder just before and just after: the index's change check uses them to take memgit's
    own writes from the folder's mtime without listing it again
    (`memgit.index.changes`)."""

    rel: str
    before: int
    after: int


_own_lock = threading.Lock()
_own: dict[str, list[OwnWrite]] = {}  # realpath of a memory folder -> its own writes, in order


def take_own_writes(root: Path | str) -> list[OwnWrite]:
    """This process's writes in the memory folder `root` since the last call, in order."""
    if not _own:
        return []
    with _own_lock:
        return _own.pop(os.path.realpath(root), [])


def _note(root: Path, rel: str, before: int | None, after: int | None) -> None:
    if before is None or after is None:
        return
    with _own_lock:
        _own.setdefault(os.path.realpath(root), []).append(OwnWrite(rel, before, after))


def _mtime(folder: Path) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


@dataclass(frozen=True)
class FileStat:
    """What the index needs to notice a change without reading the file."""

    rel: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Loaded:
    """Every usable memory in the folder, and every problem met on the way.

    `skipped` are the problems of files that are no memory at all (no text could be read);
    every other problem leaves its memory usable, for `memgit lint` to report. `copies` are
    the files that declare another file's id, read under their path id.
    """

    memories: list[Memory]
    problems: list[Problem]
    skipped: list[Problem] = field(default_factory=list)
    copies: set[str] = field(default_factory=set)


class Store:
    """Memory files under one folder (normally `<repo>/.memory`)."""

    def __init__(self, root: Path, kinds: tuple[str, ...] = fmt.KINDS,
                 first_added: Callable[[Sequence[Path]], Mapping[Path, int]] | None = None,
                 boundary: Path | None = None) -> None:
        self.root = root
        self.kinds = kinds
        self.first_added = first_added  # git: the order in which files were first committed
        self._real_root = os.path.realpath(root)
        # The work tree the folder belongs to: a `.memory` that is a symlink out of it is
        # refused, or a checkout could feed any folder on the machine to an agent.
        self._escape = outside_message(root, boundary) if boundary is not None else None

    def check_inside(self) -> None:
        """Raise MemgitError when the folder itself leads outside its work tree (a symlink)."""
        if self._escape:
            raise MemgitError(self._escape)

    # -- finding -------------------------------------------------------------------------

    def iter_files(self) -> Iterator[FileStat]:
        """Every memory file (`memory.is_memory_file`) under the folder, skipping hidden
        folders and symlinks."""
        self.check_inside()
        root = str(self.root)
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if not fmt.is_memory_file(name):
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

    def look_alikes(self) -> Iterator[Problem]:
        """Files that are not read as memories but have front-matter, as if meant to be one
        (`notes.txt`, `README.md`): `memgit lint` says why they are not. Others stay quiet."""
        root = str(self.root)
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                if name.startswith(".") or fmt.is_memory_file(name) or os.path.islink(full):
                    continue
                try:
                    with open(full, "rb") as handle:
                        head = handle.read(4)
                except OSError:
                    continue
                if head.removeprefix(b"\xef\xbb\xbf").startswith(b"---"):
                    rel = os.path.relpath(full, root).replace(os.sep, "/")
                    readme = name.lower().startswith("readme.")
                    yield Problem(rel, 0, "a README is documentation for people, never a memory; rename it to "
                                          "make it one" if readme else
                                          "has front-matter but is not read as a memory: memory files end in "
                                          ".md or .markdown")

    def _inside(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real == self._real_root or real.startswith(self._real_root + os.sep)

    def path_of(self, rel: str) -> Path:
        """The file for a path relative to the folder; hostile paths are refused."""
        if not rel or rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in rel.split("/")):
            raise MemgitError(f"refusing memory path {rel!r}: it must stay inside {self.root}")
        self.check_inside()
        full = self.root / rel
        if not self._inside(str(full.parent)) or (os.path.islink(full) and not self._inside(str(full))):
            raise MemgitError(f"refusing memory path {rel!r}: it leads outside {self.root}")
        return full

    # -- reading -------------------------------------------------------------------------

    def read(self, rel: str) -> tuple[Memory | None, list[Problem]]:
        """A file's memory, read liberally (None only when no text can be read), and its problems."""
        path = self.path_of(rel)
        try:
            with open(path, "rb") as handle:
                data = handle.read(fmt.MAX_FILE_BYTES + 1)
        except OSError as exc:
            return None, [Problem(rel, 0, f"cannot read: {exc.strerror}")]
        return lenient.check(data, rel, self.kinds)

    def load(self) -> Loaded:
        """All memories; a bad file is a problem, never an exception.

        Files that declare the same id (a copied file) are all memories: the original
        (`Store.original`) keeps the id, each copy is read under its path id and
        reported. The index does the same.
        """
        memories: list[Memory] = []
        problems: list[Problem] = []
        skipped: list[Problem] = []
        by_id: dict[str, list[Memory]] = {}
        copies: set[str] = set()
        taken: set[str] = set()  # ids given to copies
        for stat in self.iter_files():
            memory, found = self.read(stat.rel)
            problems.extend(found)
            if memory is None:
                skipped.extend(found)
                continue
            by_id.setdefault(memory.id, []).append(memory)
        for memory_id, group in by_id.items():
            if len(group) > 1:
                first = self.original([m.path for m in group], memory_id)
                group.sort(key=lambda m: (m.path != first, m.path))
            memories.append(group[0])
            for copy in group[1:]:
                copy_id = copy_id_for(copy.path, lambda candidate: candidate in by_id or candidate in taken)
                if copy_id is None:
                    skipped.append(Problem(copy.path, 0, f"duplicate id {memory_id!r} (also in {group[0].path}); "
                                                         "give this copy its own id"))
                    problems.append(skipped[-1])
                    continue
                taken.add(copy_id)
                declared = memory_id != fmt.path_id(copy.path)
                problems.append(Problem(copy.path, 0, duplicate_message(memory_id, group[0].path, copy_id, declared)))
                memories.append(replace(copy, id=copy_id))
                copies.add(copy.path)
        memories.sort(key=lambda m: m.path)
        problems.extend(self.look_alikes())
        return Loaded(memories, problems, skipped, copies)

    def original(self, rels: Sequence[str], memory_id: str) -> str:
        """Of files that declare the same id, the original; the others are copies of it.

        The file named for the id (`memory.original_first`); else the one git committed
        first; else the first path. A file git never committed is the newest.
        """
        ranked = sorted(rels, key=lambda rel: fmt.original_first(rel, memory_id))
        named = [rel for rel in ranked if not fmt.original_first(rel, memory_id)[0]]
        if len(named) == 1 or self.first_added is None:
            return ranked[0]
        pool = named or ranked
        times = self.first_added([self.root / rel for rel in pool])
        return min(pool, key=lambda rel: (times.get(self.root / rel, float("inf")), rel))

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
        import tempfile  # only a write needs it: a hook that recalls starts faster

        path = self.path_of(rel)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            before = _mtime(path.parent)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".md", dir=path.parent)
        except OSError as exc:
            raise MemgitError(f"cannot write {path} ({exc.strerror or exc}); check permissions and disk space") from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
            _note(self.root, rel, before, _mtime(path.parent))
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
            before = _mtime(path.parent)
            path.unlink(missing_ok=True)
            _note(self.root, rel, before, _mtime(path.parent))
        except OSError as exc:
            raise MemgitError(f"cannot delete {path} ({exc.strerror or exc})") from None
        return path


def outside_message(folder: Path, work_tree: Path) -> str | None:
    """Why memgit does not read `folder` (a symlink out of `work_tree`), or None when it is inside."""
    real, tree = os.path.realpath(folder), os.path.realpath(work_tree)
    if real == tree or real.startswith(tree.rstrip(os.sep) + os.sep):
        return None
    return (f"{folder} leads outside the repository (to {real}): memgit does not read memories from "
            f"outside {tree}; make it a folder inside the repository")


def refuse_outside(folder: Path, work_tree: Path | None) -> None:
    """Raise MemgitError when `folder` leads outside `work_tree` (see `outside_message`);
    a folder outside any repository (`--memory-dir`) has no work tree to leave."""
    message = outside_message(folder, work_tree) if work_tree is not None else None
    if message:
        raise MemgitError(message)


def copy_id_for(rel: str, taken: Callable[[str], bool]) -> str | None:
    """The id a copy (`Store.load`) is read under: its path id, else that id with a hash of
    its path (when the path id is the contested one, or another file's); None if both are taken."""
    for candidate in (fmt.path_id(rel), fmt.hashed_path_id(rel)):
        if not taken(candidate):
            return candidate
    return None


def duplicate_message(memory_id: str, original: str, copy_id: str, declared: bool = True) -> str:
    """What lint says about a copied file, or one whose path id another file has (see `Store.load`)."""
    if not declared:
        return (f"duplicate id {memory_id!r}: its path gives the id of {original}, so it is read as {copy_id!r}; "
                "give it its own id ('memgit lint --fix' writes that one)")
    return (f"duplicate id {memory_id!r} (the original is {original}): this copy is read as {copy_id!r}; "
            "give it its own id ('memgit lint --fix' writes that one)")
