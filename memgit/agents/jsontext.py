"""A JSON object's member added, replaced or removed in the file's own text.

Editors' settings files are written by people: their indentation, line endings, key order and
a missing final newline are theirs. Loading and dumping the JSON would rewrite all of that, so
memgit edits the text: the new member goes after the object's last member, styled like its
siblings, and removing it takes out exactly the characters adding it put in (the file comes
back byte for byte). The text must be strict JSON (`json.loads` checks it first); comments and
trailing commas (JSONC) are refused by the caller.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_WHITESPACE = " \t\r\n"


@dataclass(frozen=True)
class Member:
    """One `"key": value` of an object: where its key starts and its value starts and ends."""

    key: str
    start: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class Obj:
    """An object in the text: its braces and its members."""

    open: int
    close: int
    members: tuple[Member, ...]

    def get(self, key: str) -> Member | None:
        found = [m for m in self.members if m.key == key]
        return found[-1] if found else None


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WHITESPACE:
        i += 1
    return i


def _skip_string(text: str, i: int) -> int:
    i += 1
    while text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _skip_value(text: str, i: int) -> int:
    if text[i] == '"':
        return _skip_string(text, i)
    if text[i] in "{[":
        depth = 0
        while True:
            char = text[i]
            if char == '"':
                i = _skip_string(text, i)
                continue
            if char in "{[":
                depth += 1
            elif char in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
    while i < len(text) and text[i] not in ",}]" + _WHITESPACE:
        i += 1
    return i


def parse(text: str, at: int | None = None) -> Obj:
    """The object whose `{` is at `at` (default: the document's top-level object)."""
    i = _skip_ws(text, 0) if at is None else at
    start = i
    members: list[Member] = []
    i = _skip_ws(text, i + 1)
    while text[i] != "}":
        key_end = _skip_string(text, i)
        key = json.loads(text[i:key_end])
        value_start = _skip_ws(text, _skip_ws(text, key_end) + 1)  # past the ':'
        value_end = _skip_value(text, value_start)
        members.append(Member(key, i, value_start, value_end))
        i = _skip_ws(text, value_end)
        if text[i] == ",":
            i = _skip_ws(text, i + 1)
    return Obj(start, i, tuple(members))


def newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def indent_unit(text: str) -> str:
    """The file's indentation step (its first indented line), two spaces when it has none."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def _render(value: Any, indent: str, unit: str, nl: str, multiline: bool, compact: bool = False) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":") if compact else None)
    dumped = json.dumps(value, indent=unit, ensure_ascii=False)
    return dumped.replace("\n", nl + indent)


def add(text: str, obj: Obj, key: str, value: Any) -> str:
    """`text` with `"key": value` added as the last member of `obj` (which lacks `key`)."""
    nl, unit = newline(text), indent_unit(text)
    name = json.dumps(key, ensure_ascii=False)
    if obj.members:
        first, end = obj.members[0], obj.members[-1].value_end
        between = text[obj.open + 1:first.start]
        if "\n" in between:  # one member a line, indented like the first one
            indent = between.rsplit("\n", 1)[-1]
            member = f",{nl}{indent}{name}: {_render(value, indent, unit, nl, True)}"
        else:  # all on one line: spaced or compact like the first member
            compact = not text[first.start:first.value_start].endswith(" ")
            sep, colon = (",", ":") if compact else (", ", ": ")
            member = f"{sep}{name}{colon}{_render(value, '', unit, nl, False, compact)}"
        return text[:end] + member + text[end:]
    # An empty object: put the member on its own line, one step in from the brace's line.
    line_start = text.rfind("\n", 0, obj.open) + 1
    outer = re.match(r"[ \t]*", text[line_start:obj.open])
    base = outer.group(0) if outer else ""
    indent = base + unit
    rendered = _render(value, indent, unit, nl, True)
    inside = f"{nl}{indent}{name}: {rendered}{nl}{base}"
    return text[:obj.open + 1] + inside + text[obj.close:]


def replace(text: str, member: Member, value: Any) -> str:
    """`text` with `member`'s value replaced by `value`, indented like the member's line."""
    nl, unit = newline(text), indent_unit(text)
    line_start = text.rfind("\n", 0, member.start) + 1
    indent = text[line_start:member.start] if not text[line_start:member.start].strip() else ""
    multiline = "\n" in text[member.value_start:member.value_end] or bool(indent)
    rendered = _render(value, indent, unit, nl, multiline)
    return text[:member.value_start] + rendered + text[member.value_end:]


def remove(text: str, obj: Obj, key: str) -> str:
    """`text` without `obj`'s member `key`: the exact inverse of `add` for the last member."""
    index = next(i for i, m in enumerate(obj.members) if m.key == key)
    member = obj.members[index]
    if index > 0:  # from the end of the member before it: its comma and line go too
        return text[:obj.members[index - 1].value_end] + text[member.value_end:]
    if len(obj.members) > 1:  # the first of several: up to where the next one starts
        return text[:member.start] + text[obj.members[1].start:]
    return text[:obj.open + 1] + text[obj.close:]  # the only one: the object is left empty
