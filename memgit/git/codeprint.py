"""Fingerprints of code: what a memory's anchor pointed at, as short ids a person can read in
a pull request, from the work tree or from any revision.

- A file: its git blob id (what `git hash-object` prints), cut to `SHORT` hex digits.
- A `path::symbol` in Python: a hash of the definition's syntax tree (`ast.dump` without line
  numbers), prefixed `py:` — the same wherever the definition sits in its file and however it is
  spaced; comments do not count, a docstring does.
- A `path::symbol` in another language: `tx:` and a hash of the definition block a regular
  expression finds (the line that defines the name, then its braces or its indented block), each
  line stripped; None ("unknown") when no such line is found.

Work-tree fingerprints are cached by each file's inode, mtime, ctime and size (`Prints`; the
ctime, as git's index keeps it, because a tool can put a file's old mtime back), so a recall
that checks its hits' anchors reads and parses a file only after it changed. Paths that climb
out of the work tree or into git's directory (`.git`), absolute paths and files over `MAX_BYTES`
are never read.
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgit.git import localstate, runner

SHORT = 12
MAX_BYTES = 2_000_000
#: What a fingerprint memgit writes looks like (a bogus one in a file is read as "doubtful").
PRINT_RE = re.compile(r"(?:py:|tx:)?[0-9a-f]{7,40}\Z")
GONE = "-"


def blob_id(data: bytes) -> str:
    """git's blob id of `data` (short)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:SHORT]


def _short_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:SHORT]


def is_python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


# -- a symbol's definition ---------------------------------------------------------------


@functools.lru_cache(maxsize=128)
def python_defs(data: bytes) -> dict[str, ast.AST] | None:
    """Every class and function of a Python file by dotted name (`Class.method`); None when it
    does not parse. Cached by content: many anchors point into the same few files (callers
    must not change what it returns)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out: dict[str, ast.AST] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                out.setdefault(name, child)
                walk(child, name + ".")
            elif isinstance(child, (ast.If, ast.Try, ast.With)):
                walk(child, prefix)

    walk(tree, "")
    return out


def find_python(defs: Mapping[str, ast.AST], symbol: str) -> ast.AST | None:
    """The definition `symbol` names: its dotted name, else the one definition whose last part
    it is (`login` for `Auth.login`)."""
    symbol = symbol.replace("::", ".")
    if symbol in defs:
        return defs[symbol]
    if "." in symbol:
        return None
    found = [node for name, node in defs.items() if name.rsplit(".", 1)[-1] == symbol]
    return found[0] if len(found) == 1 else None


def python_print(node: ast.AST, *, named: bool = True) -> str:
    """The fingerprint of a definition; with `named=False`, of its body alone (a renamed
    function keeps it)."""
    if not named and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        node = copy.copy(node)  # shallow: only the name is replaced
        node.name = "_"
    return "py:" + _short_hash(_dump(node))


def _dump(node: ast.AST) -> str:
    """`ast.dump` of `node` (line numbers left out); for a tree `ast.parse` takes but `ast.dump`
    cannot recurse through (a chain of a thousand `+`), the same fields flattened by `ast.walk`,
    which does not recurse."""
    try:
        return ast.dump(node, include_attributes=False)
    except RecursionError:
        parts = []
        for child in ast.walk(node):
            parts.append(type(child).__name__)
            for name, value in ast.iter_fields(child):
                items = value if isinstance(value, list) else [value]
                parts.append(f"{name}:{len(items)}:" + ",".join(
                    type(item).__name__ if isinstance(item, ast.AST) else repr(item) for item in items))
        return "deep:" + "\n".join(parts)


_OPENER = (r"(?:def|function|func|fn|class|struct|enum|interface|trait|type|impl|module|object|"
           r"const|let|var|val|sub|macro|proc|record)")


def text_block(text: str, symbol: str) -> str | None:
    """The definition block of `symbol` in a file of another language, each line stripped and
    blank lines dropped; None when no line defines it."""
    name = re.escape(symbol.replace("::", ".").split(".")[-1])
    if not name:
        return None
    lines = text.splitlines()
    defines = re.compile(
        rf"^\s*(?:[\w@]+\s+)*?{_OPENER}\s+(?:\([^)]*\)\s*)?{name}(?![\w$])"  # def/func (r *T) name
        rf"|^\s*(?:[\w:<>,*&\[\]]+\s+)+[*&]*{name}\s*\([^;]*$"  # C-like: `int name(args) {`
        rf"|^\s*{name}\s*[:=]\s*(?:async\s+)?(?:function|\()"  # `name = function`, `name: (`
    )
    for start, line in enumerate(lines):
        if defines.search(line):
            return "\n".join(s for s in (x.strip() for x in _block(lines, start)) if s)
    return None


def _block(lines: list[str], start: int, limit: int = 2000) -> list[str]:
    """The lines of the definition starting at `start`: to its matching closing brace when it
    opens one, else its indented block."""
    depth, opened, out = 0, False, []
    for line in lines[start : start + limit]:
        out.append(line)
        code = re.sub(r"(['\"]).*?\1", "", line)
        depth += code.count("{") - code.count("}")
        opened = opened or "{" in code
        if opened and depth <= 0:
            return out
        if not opened and len(out) > 1 and line.strip() and _indent(line) <= _indent(lines[start]):
            return out[:-1]
        if not opened and line.rstrip().endswith(";") and len(out) == 1:
            return out
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def symbol_print(path: str, data: bytes, symbol: str) -> str | None:
    """The fingerprint of `symbol`'s definition in the file `path` holding `data`: GONE when
    the file says it is not defined, None when that cannot be told (the Python file does not
    parse; another language's definition line is not found but the name is there)."""
    if is_python(path):
        defs = python_defs(data)
        if defs is None:
            return None
        node = find_python(defs, symbol)
        return python_print(node) if node is not None else GONE
    text = data.decode("utf-8", "replace")
    block = text_block(text, symbol)
    if block is not None:
        return "tx:" + _short_hash(block)
    last = symbol.replace("::", ".").split(".")[-1]
    return None if re.search(rf"(?<![\w$]){re.escape(last)}(?![\w$])", text) else GONE


def renamed_in(path: str, old: bytes, new: bytes, symbol: str) -> str | None:
    """The name `symbol` (gone from `new`) has there, when a definition of `new` has the same
    body as `symbol` had in `old` (Python only)."""
    if not is_python(path):
        return None
    before, after = python_defs(old), python_defs(new)
    if before is None or after is None:
        return None
    node = find_python(before, symbol)
    if node is None:
        return None
    body = python_print(node, named=False)
    same = [name for name, n in after.items() if name not in before and python_print(n, named=False) == body]
    return same[0] if len(same) == 1 else None


# -- where code is read from -------------------------------------------------------------


def inside(root: Path, path: str) -> Path | None:
    """`root/path` when it is a regular file inside the work tree (no climbing out, no link
    leading elsewhere), else None."""
    found = _inside(str(root), path, {})
    return Path(found[0]) if found is not None else None


def _inside(root: str, path: str, seen: dict[str, bool | None]) -> tuple[str, os.stat_result] | None:
    """`inside`, with the file's stat; `seen` keeps whether each folder on the way is a real
    folder (not a link), or None when nothing is there, so a recall looks at each once."""
    norm = os.path.normpath(path)
    if not path or os.path.isabs(norm) or norm == ".." or norm.startswith(".." + os.sep) or "\0" in path \
            or _in_git_dir(norm):
        return None
    full = os.path.join(root, norm)
    parts = norm.split(os.sep)
    for i in range(1, len(parts)):
        folder = os.sep.join(parts[:i])
        plain = seen.get(folder, _UNSEEN)
        if plain is _UNSEEN:
            try:
                plain = seen[folder] = stat.S_ISDIR(os.lstat(os.path.join(root, folder)).st_mode)
            except (FileNotFoundError, NotADirectoryError):
                # Nothing there, not even a link: no file below it. Kept in `seen` for this
                # recall only (`Prints.look_again`: it may appear later in a long-lived
                # process), and no `realpath` of the whole path, which cost a recall ~1 ms per
                # anchor to a deleted file.
                seen[folder] = None
                return None
            except (OSError, ValueError):
                plain = seen[folder] = False
        if plain is None:
            return None
        if not plain:
            return _through_link(root, full)  # a folder on the way is a link, or is not there
    try:
        st = os.lstat(full)
    except (OSError, ValueError):
        return None
    if stat.S_ISLNK(st.st_mode):
        return _through_link(root, full)
    return (full, st) if stat.S_ISREG(st.st_mode) else None


_UNSEEN: Any = object()  # a folder `_inside` has not looked at yet


def _through_link(root: str, full: str) -> tuple[str, os.stat_result] | None:
    """A path with a link on the way: followed, and kept only when it ends inside the work tree."""
    real, top = os.path.realpath(full), os.path.realpath(root)
    if not _under(top, real) or _in_git_dir(os.path.relpath(real, top)):
        return None
    try:
        st = os.stat(real)
    except OSError:
        return None
    return (full, st) if stat.S_ISREG(st.st_mode) else None


def _in_git_dir(norm: str) -> bool:
    """Whether a normalised path from the root is in a git directory (`.git`, any case: a file
    system may not tell them apart; a nested clone's too), which holds a clone's config and
    credentials, not code."""
    return ".git" in (part.lower() for part in norm.split(os.sep))


def _under(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass
class _Entry:
    stat: tuple[int, ...]
    blob: str | None
    symbols: dict[str, str | None]


def _entry_shaped(key: Any, blob: Any, symbols: Any) -> bool:
    """Whether a cached entry has the shape `Prints.save` writes (anything else is read again)."""
    return (isinstance(key, list) and len(key) == 4 and all(type(n) is int for n in key)
            and (blob is None or isinstance(blob, str)) and isinstance(symbols, dict)
            and all(isinstance(s, str) and (p is None or isinstance(p, str)) for s, p in symbols.items()))


class Prints:
    """Work-tree fingerprints of one repository, cached by each file's inode, mtime, ctime and size,
    in memory and (`save`) in `<git-dir>/memgit/codeprints.json` between processes."""

    KEEP = 5000

    def __init__(self, root: Path, git_dir: Path | None = None) -> None:
        self.root = root
        self._root = str(root)
        self._seen: dict[str, bool | None] = {}
        self._saving = threading.Lock()
        self.cache_file = localstate.codeprints(git_dir) if git_dir is not None else None
        self._entries: dict[str, _Entry] = {}
        self._extra: dict[str, dict[str, Any]] = {}
        self._loaded = False
        self._dirty = False

    def _load(self) -> None:
        self._loaded = True
        if self.cache_file is None:
            return
        try:
            data = json.loads(self.cache_file.read_text(encoding="utf-8"))
            for path, (key, blob, symbols) in data["files"].items():
                if _entry_shaped(key, blob, symbols):
                    self._entries[path] = _Entry(tuple(key), blob, dict(symbols))
            self._extra = {k: v for k, v in data["more"].items() if isinstance(v, dict)}
        except (OSError, ValueError, TypeError, AttributeError, KeyError):
            self._entries, self._extra = {}, {}  # a cache that cannot be read is built again

    def save(self) -> None:
        """Keep what was computed for the next process (best effort: a cache)."""
        if not self._dirty or self.cache_file is None:
            return
        with self._saving:  # threads of one process (an MCP server) share one temporary file name
            files = {p: [list(e.stat), e.blob, dict(e.symbols)]
                     for p, e in list(self._entries.items())[-self.KEEP :]}
            data = {"files": files, "more": dict(list(self._extra.items())[-self.KEEP :])}
            try:
                self.cache_file.parent.mkdir(parents=True, exist_ok=True)
                localstate.replace(self.cache_file, json.dumps(data, separators=(",", ":")))
            except OSError:
                pass
            self._dirty = False

    def look_again(self) -> None:
        """Forget which folders lead where (a checkout may have made one a link): once per recall."""
        self._seen.clear()

    def extra(self, key: str) -> dict[str, Any] | None:
        """What a caller kept under `key` (`put_extra`), from this process or an earlier one."""
        if not self._loaded:
            self._load()
        return self._extra.get(key)

    def put_extra(self, key: str, value: dict[str, Any]) -> None:
        if not self._loaded:
            self._load()
        self._extra[key] = value
        self._dirty = True

    def _entry(self, path: str) -> _Entry | None:
        found = _inside(self._root, path, self._seen)
        if found is None:
            return None
        full, st = found
        if not self._loaded:
            self._load()
        key = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
        entry = self._entries.get(path)
        if entry is None or entry.stat != key:
            blob = None
            if st.st_size <= MAX_BYTES:
                try:
                    with open(full, "rb") as handle:
                        blob = blob_id(handle.read())
                except OSError:
                    return None
            entry = self._entries[path] = _Entry(key, blob, {})
            self._dirty = True
        return entry

    def file(self, path: str) -> str | None:
        """The file's blob id, GONE when there is no such file, None when it is too big to read."""
        entry = self._entry(path)
        return GONE if entry is None else entry.blob

    def symbol(self, path: str, symbol: str) -> str | None:
        """The symbol's fingerprint in the work tree (see `symbol_print`)."""
        entry = self._entry(path)
        if entry is None:
            return GONE
        if symbol not in entry.symbols:
            full = inside(self.root, path)
            try:
                data = full.read_bytes() if full is not None and entry.blob is not None else None
            except OSError:
                data = None
            entry.symbols[symbol] = symbol_print(path, data, symbol) if data is not None else None
            self._dirty = True
        return entry.symbols[symbol]

    def of(self, anchor: str) -> str | None:
        path, sep, symbol = anchor.partition("::")
        return self.symbol(path, symbol) if sep and symbol else self.file(path)


# -- code at a revision ------------------------------------------------------------------


def read_blobs(root: Path, specs: Iterable[str]) -> dict[str, bytes | None]:
    """The contents of `REV:path` objects (one `git cat-file --batch`), None where missing."""
    wanted = [s for s in dict.fromkeys(specs) if "\n" not in s]
    if not wanted:
        return {}
    done = runner.run(["cat-file", "--batch"], root, stdin="".join(s + "\n" for s in wanted).encode())
    out: dict[str, bytes | None] = {}
    data, pos = done.data, 0
    for spec in wanted:
        end = data.find(b"\n", pos)
        if end < 0:
            out[spec] = None
            continue
        header = data[pos:end].split(b" ")
        pos = end + 1
        if len(header) != 3 or header[1] != b"blob":
            out[spec] = None
            continue
        size = int(header[2])
        out[spec] = data[pos : pos + size] if size <= MAX_BYTES else None
        pos += size + 1
    return out


def prints_at(root: Path, rev: str, anchors: Iterable[str]) -> dict[str, str | None]:
    """The fingerprints of `anchors` in revision `rev` (see `Prints`)."""
    anchors = list(anchors)
    paths = {a.partition("::")[0] for a in anchors}
    blobs = read_blobs(root, (f"{rev}:{p}" for p in paths if inside_name(p)))
    out: dict[str, str | None] = {}
    for anchor in anchors:
        path, sep, symbol = anchor.partition("::")
        data = blobs.get(f"{rev}:{path}")
        if data is None:
            out[anchor] = GONE
        elif sep and symbol:
            out[anchor] = symbol_print(path, data, symbol)
        else:
            out[anchor] = blob_id(data)
    return out


def inside_name(path: str) -> bool:
    """Whether `path` may name a file of a revision's tree (relative, no `..`)."""
    norm = os.path.normpath(path)
    return bool(path) and not os.path.isabs(norm) and norm != ".." and not norm.startswith("../") \
        and "\n" not in path and not path.startswith(("-", ":"))
