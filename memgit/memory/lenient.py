"""Reading memory files liberally: what a slightly-off hand-written value most likely means.

memgit writes strictly (`memory.parse` refuses every value below) but reads liberally, so a
memory with one odd field is still recalled, listed and shown while `memgit lint` says what to
fix. `check` reads a file; each `as_*` function returns the value memgit uses and, when the
written value was not valid, a message for lint (None when it was). Nothing here guesses
beyond the rules in docs/format.md ("Reading hand-written files").
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from typing import Any, Callable

from memgit.errors import MemgitError
from memgit.memory import format as fmt
from memgit.memory.format import Memory, Problem

#: Lines git writes around an unresolved conflict (`|||||||` is the base side with diff3).
_MARKER = re.compile(r"^(<{7}|\|{7}|={7}|>{7})(?:[ \t].*)?$")
#: A top-level `key:` that starts a block of front-matter lines.
_KEY = re.compile(r"([^\s#:'\"\[\]{},&*!|>%@`-][^:]*?)[ \t]*:(?:[ \t]|$)")

Loader = Callable[[str], Any]


def _shown(value: Any) -> str:
    """A value quoted for a message, unless it looks like a credential: messages end up in
    terminals, CI logs and agents' transcripts."""
    from memgit.memory.credentials import find_secrets  # many patterns, compiled only when a value is checked

    found = find_secrets(str(value))
    return f"({found[0].pattern}: {found[0].excerpt})" if found else repr(value)


def _key_line(front: str, key: str) -> int:
    """1-based line in the file of a front-matter key (`front` starts after the first `---`)."""
    match = re.search(rf"^{re.escape(key)}\s*:", front, re.MULTILINE)
    if not match:
        return 1
    return front.count("\n", 0, match.start()) + 1


def parse(data: bytes | str, rel_path: str = "", kinds: tuple[str, ...] = fmt.KINDS) -> Memory:
    """Parse a memory file strictly, as memgit's writes need: raise MemgitError naming the
    first problem, even one `check` reads past."""
    memory, problems = check(data, rel_path, kinds)
    if problems or memory is None:
        raise MemgitError(str(problems[0]))
    return memory


def check(data: bytes | str, rel_path: str, kinds: tuple[str, ...] = fmt.KINDS) -> tuple[Memory | None, list[Problem]]:
    """Read a memory file liberally: the memory, and every problem `memgit lint` reports.

    The memory is None only when no text can be read at all (a binary file, over 1 MB);
    every other problem leaves a usable memory, read as docs/format.md describes ("Reading
    hand-written files"). `parse` is the strict reader for what memgit writes. `kinds` are
    the valid kinds: the built-in ones plus any the config adds.
    """
    problems: list[Problem] = []

    def problem(line: int, message: str | None) -> None:
        if message:
            problems.append(Problem(rel_path, line, message))

    if isinstance(data, bytes):
        if len(data) > fmt.MAX_FILE_BYTES:
            problem(0, "file is over 1 MB; memory files are limited to 1 MB")
            return None, problems
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16, as some Windows editors save
            try:
                data = data.decode("utf-16").encode("utf-8")
                problem(0, "saved as UTF-16; save the file as UTF-8")
            except UnicodeError:
                pass
        if b"\0" in data:
            problem(0, "binary file (contains NUL bytes); memory files are UTF-8 Markdown")
            return None, problems
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            problem(line, f"not valid UTF-8 (byte {exc.start}); save the file as UTF-8 "
                          "(meanwhile memgit reads it with replacement characters)")
            text = data.decode("utf-8", "replace")
    else:
        text = data
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if "\r" in text and "\n" not in text:
        problem(0, "lines end in CR only (classic Mac OS); save the file with LF line endings")
        text = text.replace("\r", "\n")
    meta, body, front = _split(text, problem)

    def flag(name: str, message: str | None) -> None:  # the line is looked up only when needed
        if message:
            problems.append(Problem(rel_path, _key_line(front, name), message))

    values: dict[str, Any] = {}
    for name in fmt.TEXT_FIELDS:
        value = meta.get(name)
        if value is None or value == "":
            continue
        text_value, message = as_text(name, value, raw_value(front, name) if isinstance(value, (bool, int, float)) else "")
        flag(name, message)
        if text_value:
            values[name] = text_value
    for name in fmt.TIME_FIELDS:
        value = meta.get(name)
        if value is None or value == "":
            continue
        time_value, message = as_time(name, value)
        flag(name, message)
        if time_value:
            values[name] = time_value
    for name in fmt.LIST_FIELDS:
        value = meta.get(name)
        if value is None:
            continue
        items, message = as_list(name, value)
        flag(name, message)
        if items is not None:
            values[name] = items

    memory_id = values.get("id") or fmt.path_id(rel_path)
    if not fmt.ID_RE.match(memory_id):
        problem(
            _key_line(front, "id"),
            f"id {_shown(memory_id)} is not valid: use letters, digits, '.', '_' and '-' "
            f"(first a letter or digit, at most 128); read as {fmt.path_id(rel_path)!r} meanwhile",
        )
        memory_id = fmt.path_id(rel_path)
    title = values.get("title") or _title_from_body(body) or memory_id
    kind, message = as_choice("kind", values.get("kind", "fact"), kinds, "fact")
    flag("kind", message)
    source, message = as_choice("source", values.get("source", "user"), fmt.SOURCES, "user")
    flag("source", message)
    status, message = as_choice("status", values.get("status", "active"), fmt.STATUSES, "active")
    flag("status", message)
    default = fmt.DEFAULT_CONFIDENCE.get(source, 0.5)
    confidence = meta.get("confidence")
    if confidence is None or confidence == "":
        confidence = default
    else:
        confidence, message = as_confidence(confidence, default)
        flag("confidence", message)
    clean: dict[str, Any] = {}
    for name, value in (("title", title), ("body", body), *((n, values.get(n)) for n in fmt.TEXT_FIELDS if n != "title")):
        if isinstance(value, str):
            reason = fmt.bad_text(value)
            if reason:
                problem(_key_line(front, name) if name != "body" else 0, f"'{name}' {reason}")
            clean[name] = fmt.clean_text(value) if reason else value
    for name in fmt.LIST_FIELDS:
        if any(fmt.bad_text(item) for item in values.get(name, ())):
            reason = next(filter(None, map(fmt.bad_text, values[name])))
            flag(name, f"an item of '{name}' {reason}")
            values[name] = tuple(fmt.clean_text(item) for item in values[name])
    for line in conflict_lines(text):
        problem(line, "unresolved merge conflict markers (<<<<<<<): resolve them")
    extra = {k: v for k, v in meta.items() if k not in fmt.FIELDS}
    memory = Memory(
        id=memory_id,
        title=clean["title"],
        body=clean["body"],
        kind=kind,
        entity=clean.get("entity") or "",
        confidence=float(confidence),
        source=source,
        task_id=clean.get("task_id"),
        created=values.get("created"),
        updated=values.get("updated"),
        tags=values.get("tags", ()),
        files=values.get("files", ()),
        symbols=values.get("symbols", ()),
        supersedes=values.get("supersedes", ()),
        status=status,
        expires=values.get("expires"),
        pinned=_pinned(meta.get("pinned"), lambda message: flag("pinned", message)),
        extra=extra,
        path=rel_path,
    )
    return memory, problems


def _split(text: str, problem: Callable[[int, str | None], None]) -> tuple[dict[str, Any], str, str]:
    """Front-matter values, body and the raw front-matter (for line numbers) of a file.

    Whatever is wrong with the front-matter is a problem, and only the part that cannot be
    read is lost: invalid YAML is read key by key, conflict markers on their first side.
    """
    front = ""
    if text.startswith("---"):
        end = re.search(r"^-{3,}\s*$", text[3:], re.MULTILINE)
        if end is None and fmt.opens_front_matter(text):
            problem(1, "the front-matter is never closed: add a '---' line after it")
            lines = text.split("\n")[1:]
            size = front_size(lines)
            front = "\n".join(lines[:size])
            return by_key(front, fmt.load_fields), fmt.clean_body("\n".join(lines[size:])), "\n" + front
        front = text[3 : 3 + end.start()] if end else ""
        if len(front.encode()) > fmt.MAX_FRONT_MATTER_BYTES:
            problem(1, "front-matter is over 64 KB; keep memory metadata small (it is ignored until then)")
            return {}, fmt.clean_body(text[3 + end.end() :]) if end else text, front
    read = fmt.read_front(text)
    markers = conflict_lines(front)
    if read.meta is not None and not markers:
        if read.error:
            problem(*read.error)
        return read.meta, read.body, front
    if read.error and not markers:
        problem(*read.error)
    parts = fmt.split_front(text)
    raw = ours(parts[0] if parts else front)
    whole = fmt.load_fields(raw)
    return whole if isinstance(whole, dict) else by_key(raw, fmt.load_fields), read.body, front


def _title_from_body(body: str) -> str:
    """The first line with words: not a rule or fence (`+++` of TOML front-matter, `***`)."""
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line and line.strip("-+=*_~` \t"):
            return line[:120]
    return ""


def as_text(name: str, value: Any, raw: str = "") -> tuple[str | None, str | None]:
    """A one-line text field (`title`, `entity`, ...) from whatever YAML gave; `raw` is the
    text written after `key:`, for a value YAML read as yes/no."""
    if isinstance(value, bool):
        return raw or str(value).lower(), f"'{name}' must be text, not a yes/no value; quote it"
    if isinstance(value, (int, float)):
        written = re.sub(r"\s+#.*$", "", raw).strip()
        if written and written != str(value):  # 0x1F, 1_000, 1.50: YAML read a number, the writer meant text
            return written, f"'{name}' {written} reads as the number {value} in YAML: quote it ('{written}')"
        return str(value), None
    if isinstance(value, str):
        if not value.strip():
            return None, None  # as if it were not there
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
        return None, f"{hint} (got {_shown(value)}); it is ignored until then"
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None, f"{hint} (got {_shown(value)}); it is ignored until then"
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
        return default, f"{hint}, not {_shown(value)}; memgit reads it as {default} (the default for its source)"
    if percent or (10.0 <= number <= 100.0 and number.is_integer()):
        read = round(number / 100.0, 4)
        if 0.0 <= read <= 1.0:
            return read, f"'confidence' is {_shown(value)}; memgit reads it as the percentage {read}: write {read}"
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
        return folded, f"{name} {_shown(value)} is not lower case: write {folded!r}"
    return default, f"unknown {name} {_shown(value)}; use one of {', '.join(choices)} (read as {default})"


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


def _pinned(value: Any, flag: Callable[[str | None], None]) -> bool:
    """`pinned: true` (also yes/on/1 in any case); anything else is not pinned."""
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1", "false", "no", "off", "0", ""):
        flag(f"write 'pinned: true' or leave the key out (it is read as {text in ('true', 'yes', 'on', '1')})")
        return text in ("true", "yes", "on", "1")
    flag(f"'pinned' must be true or false; {value!r} is read as false")
    return False
