"""Reading hand-written front-matter liberally: what a slightly-off value most likely means.

memgit writes strictly (`memory.parse` refuses every value below) but reads liberally, so a
memory with one odd field is still recalled, listed and shown while `memgit lint` says what to
fix. Each `read_*` function returns the value memgit uses and, when the written value was not
valid, a message for lint (None when it was). Nothing here guesses beyond the rules in
docs/format.md ("Reading hand-written files").
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from typing import Any, Callable

#: Lines git writes around an unresolved conflict (`|||||||` is the base side with diff3).
_MARKER = re.compile(r"^(<{7}|\|{7}|={7}|>{7})(?:[ \t].*)?$")
#: A top-level `key:` that starts a block of front-matter lines.
_KEY = re.compile(r"([^\s#:'\"\[\]{},&*!|>%@`-][^:]*?)[ \t]*:(?:[ \t]|$)")

Loader = Callable[[str], Any]


def as_text(name: str, value: Any, raw: str = "") -> tuple[str | None, str | None]:
    """A one-line text field (`title`, `entity`, ...) from whatever YAML gave; `raw` is the
    text written after `key:`, for a value YAML read as yes/no."""
    if isinstance(value, bool):
        return raw or str(value).lower(), f"'{name}' must be text, not a yes/no value; quote it"
    if isinstance(value, (int, float)):
        return str(value), None
    if isinstance(value, str):
        if "\n" in value:
            return " ".join(value.split()), f"'{name}' must be one line"
        return value, None
    if isinstance(value, list) and value and all(_scalar(v) for v in value):
        joined = " ".join(str(v) for v in value)
        return joined, f"'{name}' must be text, not a list; write it as one line (quote it if it starts with '[')"
    return None, f"'{name}' must be text, not {type(value).__name__}"


def as_list(name: str, value: Any) -> tuple[tuple[str, ...] | None, str | None]:
    """A list field (`tags`, `files`, ...): a single text is a list of one."""
    if _scalar(value):
        value = [value]
    if isinstance(value, dict):
        return None, f"'{name}' must be a list of text items"
    if not isinstance(value, list):
        return None, f"'{name}' must be a list of text items"
    items = [str(v) for v in value if _scalar(v)]
    kept = tuple(" ".join(item.split()) if "\n" in item else item for item in items if item.strip())
    if len(items) != len(value):
        return kept, f"'{name}' must be a list of text items"
    if kept != tuple(items):
        return kept, f"an item of '{name}' is empty or spans lines"
    return kept, None


def as_time(name: str, value: Any) -> tuple[str | None, str | None]:
    """An ISO 8601 time with a timezone, or a bare date. A time without a zone is UTC."""
    hint = f"'{name}' must be an ISO 8601 date or time with a timezone, e.g. 2026-11-30T10:00:00+00:00"
    if not isinstance(value, str):
        return None, f"{hint} (got {value!r}); it is ignored until then"
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None, f"{hint} (got {value!r}); it is ignored until then"
    if len(value) == 10 or parsed.tzinfo is not None:
        return value, None
    utc = parsed.replace(tzinfo=timezone.utc).isoformat()
    return utc, f"'{name}' has no timezone; memgit reads it as UTC: write {utc}"


def as_confidence(value: Any, default: float) -> tuple[float, str | None]:
    """A number from 0 to 1. A percentage (`"85%"`, or a whole number from 10 to 100 such as
    `90`) is read as one; anything else (`high`, `7`, `1.5`, `-1`) is the default for the
    memory's source: a 1-10 scale or a typo cannot be told apart from a percentage."""
    hint = "'confidence' must be a number from 0 to 1"
    number: float | None = None
    percent = False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        percent = text.endswith("%")
        try:
            number = float(text.rstrip("%").strip())
        except ValueError:
            number = None
    if number is None or math.isnan(number):
        return default, f"{hint}, not {value!r}; memgit reads it as {default} (the default for its source)"
    if percent or (10.0 <= number <= 100.0 and number.is_integer()):
        read = round(number / 100.0, 4)
        if 0.0 <= read <= 1.0:
            return read, f"'confidence' is {value!r}; memgit reads it as the percentage {read}: write {read}"
    if not 0.0 <= number <= 1.0:
        return default, f"'confidence' is {value}; it must be from 0 to 1 (read as {default}, the default for its source)"
    if isinstance(value, str):
        return number, f"'confidence' must be a number, not text: write {number} without quotes"
    return number, None


def as_choice(name: str, value: str, choices: tuple[str, ...], default: str) -> tuple[str, str | None]:
    """`kind`, `source`, `status`: a known word (any case), else the default."""
    if value in choices:
        return value, None
    folded = value.strip().casefold()
    if folded in choices:
        return folded, f"{name} {value!r} is not lower case: write {folded!r}"
    return default, f"unknown {name} {value!r}; use one of {', '.join(choices)} (read as {default})"


def conflict_lines(text: str) -> list[int]:
    """1-based lines of `<<<<<<<` markers that a `>>>>>>>` closes: an unresolved merge."""
    starts: list[int] = []
    open_at: int | None = None
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("<<<<<<<") and _MARKER.match(line):
            open_at = number
        elif line.startswith(">>>>>>>") and _MARKER.match(line) and open_at is not None:
            starts.append(open_at)
            open_at = None
    return starts


def ours(front: str) -> str:
    """Front-matter with conflict markers resolved to the first side (`HEAD`, "ours")."""
    out: list[str] = []
    keep = True
    for line in front.split("\n"):
        match = _MARKER.match(line)
        if match is None:
            if keep:
                out.append(line)
            continue
        keep = match.group(1) == "<" * 7  # after ||||||| or =======, skip until >>>>>>>
        if match.group(1) == ">" * 7:
            keep = True
    return "\n".join(out)


def by_key(front: str, load: Loader) -> dict[str, Any]:
    """What can be read of front-matter that is not valid YAML as a whole: each top-level
    `key: ...` block on its own; a block YAML refuses is kept as the raw text after `key:`."""
    meta: dict[str, Any] = {}
    for key, lines in _blocks(front):
        chunk = "\n".join(lines)
        try:
            loaded = load(chunk)
        except Exception:  # noqa: BLE001 - any YAML error or runaway nesting: fall back to the raw text
            loaded = None
        if isinstance(loaded, dict) and key in loaded:
            meta[key] = loaded[key]
        elif len(lines) == 1:
            raw = lines[0].split(":", 1)[1].strip()
            if raw:
                meta[key] = raw
    return meta


def raw_value(front: str, key: str) -> str:
    """The text written after `key:` on its line, unparsed."""
    match = re.search(rf"^{re.escape(key)}[ \t]*:[ \t]*(.*?)[ \t]*$", front, re.MULTILINE)
    return match.group(1) if match else ""


def front_size(lines: list[str]) -> int:
    """How many of `lines` look like front-matter (`key: value` and its continuations), for a
    front-matter whose closing `---` is missing."""
    size = 0
    for line in lines:
        if not (_KEY.match(line) or (size and line[:1] in (" ", "\t", "-"))):
            break
        size += 1
    return size


def _blocks(front: str) -> list[tuple[str, list[str]]]:
    blocks: list[tuple[str, list[str]]] = []
    for line in front.split("\n"):
        match = _KEY.match(line)
        if match:
            blocks.append((match.group(1).strip(), [line]))
        elif blocks and line[:1] in (" ", "\t", "-") and not _MARKER.match(line):
            blocks[-1][1].append(line)
    return blocks


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not (isinstance(value, float) and math.isnan(value))
