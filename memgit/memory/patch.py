"""Surgical edits of a memory file: change the lines of the fields that changed, nothing else.

When memgit edits a file a person wrote (`memgit edit ID --confidence 0.5`, `memgit forget`),
the file keeps its comments, key order, quoting, line endings (CRLF stays CRLF), byte order
mark and body; only the `key: value` lines of the changed fields are replaced (a list value's
lines with them), a new key is added before the closing `---`, and a changed body replaces
only the body. `memory.dump` stays the canonical text of new files. The caller checks that
the patched text reads back as the intended memory and falls back to `dump` when it does not.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Protocol

from memgit.errors import MemgitError
from memgit.memory import format as fmt
from memgit.memory import lenient
from memgit.memory.format import Memory
from memgit.memory.lenient import conflict_lines


class Folder(Protocol):
    """What patching a file needs of the folder it is in (a `memgit.store.folder.Store`)."""

    kinds: tuple[str, ...]

    def path_of(self, rel: str) -> Path: ...


_FENCE = re.compile(r"-{3,}[ \t]*\r?\n?\Z")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]|\r?\n|\Z)")


def edited(store: Folder, old: Memory, new: Memory) -> str:
    """The text of `new`, an edit of `old`, for its file: the file patched, or the canonical
    `dump` when the file cannot be patched or the patch does not read back as `new`."""
    text = fmt.dump(new)
    try:
        current = store.path_of(new.path).read_bytes().decode("utf-8")
    except OSError:
        return text
    except UnicodeDecodeError:
        # It is read with replacement characters: writing it back would destroy those bytes.
        raise MemgitError(
            f"{new.path} is not valid UTF-8: save it as UTF-8 first (see 'memgit lint'); writing it "
            "back would replace the bytes memgit cannot read"
        ) from None
    if conflict_lines(current.replace("\r\n", "\n")):
        # Rewriting would keep one side of the conflict and silently drop the other.
        raise MemgitError(f"{new.path} has unresolved merge conflict markers: resolve them first (see 'memgit lint')")
    changes = {name: getattr(new, name) for name in (*fmt.FIELDS, "body") if getattr(new, name) != getattr(old, name)}
    read = lenient.check(current, new.path, store.kinds)[0]
    if read is not None and read.id != new.id:
        changes["id"] = new.id  # a copy read under its path id (Store.load) gets that id written
    patched = patch(current, changes) if old.path == new.path and old.extra == new.extra else None
    if patched is not None and lenient.check(patched, new.path, store.kinds)[0] == new:
        text = patched
    return text


def with_id(store: Folder, rel: str, memory_id: str) -> str:
    """A file's text with `id: memory_id` written in, nothing else touched (`memgit lint --fix`)."""
    text = store.path_of(rel).read_bytes().decode("utf-8")
    patched = patch(text, {"id": memory_id}) if fmt.declares_id(text.encode()) else None
    return patched if patched is not None else fmt.insert_id(text, memory_id)


def patch(text: str, changes: Mapping[str, Any]) -> str | None:
    """`text` with the front-matter fields in `changes` (and `body`, if given) replaced.

    A value that memgit leaves out of a file (None, empty, `status: active`) removes its
    key. Returns None when the text cannot be patched safely (no closing fence, a key written
    twice); then the caller writes the canonical `dump` instead.
    """
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    rest = text[len(bom) :]
    if "\r" in rest.replace("\r\n", ""):
        return None  # CR-only or mixed line endings: not worth keeping byte for byte
    newline = "\r\n" if rest.split("\n", 1)[0].endswith("\r") else "\n"
    lines = rest.splitlines(keepends=True)
    fields = {key: value for key, value in changes.items() if key != "body"}
    if not lines or not _FENCE.match(lines[0]):
        if "body" in changes:
            return None
        block = "".join(_render(key, value, newline) for key, value in fields.items())
        return f"{bom}---{newline}{block}---{newline}{newline}{rest}" if block else text
    close = next((i for i in range(1, len(lines)) if _FENCE.match(lines[i])), None)
    if close is None:
        return None
    blocks = _blocks(lines, close)
    if blocks is None:
        return None
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in `lines`
    added = ""  # new keys, in the order given, before the closing fence
    for key, value in fields.items():
        new = _render(key, value, newline)
        if key in blocks:
            start, end = blocks[key]
            edits.append((start, end, _keep_comment(lines[start:end], key, new)))
        else:
            added += new
    if added:
        edits.append((close, close, added))
    if "body" in changes:
        edits.append((close + 1, len(lines), _body(lines[close + 1 :], str(changes["body"]), newline)))
    if not lines[close].endswith("\n") and "body" not in changes:
        lines[close] += newline  # `---` at the very end of the file, and a key added before it
    for start, end, replacement in sorted(edits, key=lambda edit: (edit[0], edit[1]), reverse=True):
        lines[start:end] = [replacement]
    return bom + "".join(lines)


def _blocks(lines: list[str], close: int) -> dict[str, tuple[int, int]] | None:
    """Each top-level key's lines `[start, end)`: the key line and its indented or `- item`
    lines. None when a key is written twice (which one YAML keeps is not worth guessing)."""
    blocks: dict[str, tuple[int, int]] = {}
    current: str | None = None
    for i in range(1, close):
        line = lines[i]
        match = _KEY.match(line)
        if match:
            if match.group(1) in blocks:
                return None
            current = match.group(1)
            blocks[current] = (i, i + 1)
        elif current is not None and line[:1] in (" ", "\t", "-") and line.strip():
            blocks[current] = (blocks[current][0], i + 1)
        else:
            current = None  # a comment or a blank line ends the value
    return blocks


def _render(key: str, value: Any, newline: str) -> str:
    """`key: value` as memgit writes it, or "" when memgit leaves the key out."""
    if (value is None or value == "" or value == () or value == [] or (key == "status" and value == "active")
            or (key == "pinned" and value is False)):
        return ""
    if isinstance(value, tuple):
        value = list(value)
    return fmt.dump_fields({key: value}).replace("\n", newline)


def _keep_comment(old: list[str], key: str, new: str) -> str:
    """`new`, keeping a comment that followed the old one-line value (`confidence: 0.8  # a guess`)."""
    if len(old) != 1 or not new or new.count("\n") != 1:
        return new
    line = old[0].rstrip("\r\n")
    match = re.search(r"[ \t]+#.*\Z", line)
    if match is None or fmt.load_fields(line[: match.start()]) != fmt.load_fields(line):
        return new  # no comment, or a '#' inside a quoted value
    ending = new[len(new.rstrip("\r\n")) :]
    return new.rstrip("\r\n") + match.group() + ending


def _body(old: list[str], body: str, newline: str) -> str:
    """The new body after the closing fence, keeping the blank line(s) before it."""
    blank = ""
    for line in old:
        if line.strip():
            break
        blank += line
    body = fmt.clean_body(body)
    if not body:
        return ""
    return (blank or newline) + body.replace("\r\n", "\n").replace("\n", newline) + newline
