"""The memory file format: one Markdown file with YAML front-matter per memory.

This module is the only one that reads or writes YAML. `dump(parse(text)) == text` for every
file memgit wrote: keys in a fixed order, empty optional keys omitted, timestamps kept as the
strings they were, nothing filled in with "now".
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import secrets
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from types import SimpleNamespace
from typing import Any, Container, Mapping

from memgit.errors import MemgitError

KINDS: tuple[str, ...] = (
    "fact",
    "preference",
    "convention",
    "decision",
    "lesson",
    "skill",
    "checkpoint",
    "summary",
)
SOURCES: tuple[str, ...] = ("user", "static", "inferred")
STATUSES: tuple[str, ...] = ("active", "archived")
DEFAULT_CONFIDENCE: Mapping[str, float] = {"user": 0.9, "static": 0.7, "inferred": 0.5}

FIELDS: tuple[str, ...] = (
    "id",
    "title",
    "kind",
    "entity",
    "confidence",
    "source",
    "task_id",
    "created",
    "updated",
    "tags",
    "files",
    "symbols",
    "supersedes",
    "status",
    "expires",
)
LIST_FIELDS = ("tags", "files", "symbols", "supersedes")
TEXT_FIELDS = ("id", "title", "kind", "entity", "source", "task_id", "status")
TIME_FIELDS = ("created", "updated", "expires")

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
MAX_FILE_BYTES = 1_000_000
MAX_FRONT_MATTER_BYTES = 64_000


@dataclass(frozen=True)
class Memory:
    """One memory. `path` is where it was read from, relative to the memory folder."""

    id: str
    title: str
    body: str = ""
    kind: str = "fact"
    entity: str = ""
    confidence: float = 0.9
    source: str = "user"
    task_id: str | None = None
    created: str | None = None
    updated: str | None = None
    tags: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    status: str = "active"
    expires: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    path: str = field(default="", compare=False)

    @property
    def active(self) -> bool:
        return self.status == "active"

    def to_dict(self) -> dict[str, Any]:
        """Front-matter fields plus `body` and `path`, for JSON output and export."""
        out: dict[str, Any] = {name: getattr(self, name) for name in FIELDS}
        for name in LIST_FIELDS:
            out[name] = list(out[name])
        out.update(self.extra)
        out["body"] = self.body
        out["path"] = self.path
        return out


@dataclass(frozen=True)
class Problem:
    """Something wrong with a memory file; `line` is 1-based, 0 when it is the whole file."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


# -- YAML: safe, no aliases (they can build huge objects), timestamps stay strings --------
# Built on first use: recall reads memories from the index and never needs YAML, so the
# cold recall path does not pay for importing it.


#: Anything that could be a YAML anchor or alias (`&name`, `*name`) where a value can start.
_MAYBE_ALIAS = re.compile(r"(?:^|[\s\[\]{},:?-])[&*]")


@functools.cache
def _yaml() -> SimpleNamespace:
    import frontmatter
    import yaml
    from frontmatter.default_handlers import YAMLHandler

    def without_timestamps(resolvers: dict[Any, list[Any]]) -> dict[Any, list[Any]]:
        return {
            key: [(tag, rx) for tag, rx in entries if tag != "tag:yaml.org,2002:timestamp"]
            for key, entries in resolvers.items()
        }

    class Loader(yaml.SafeLoader):
        yaml_implicit_resolvers = without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.composer.ComposerError(
                    None, None, "YAML aliases are not allowed in memory files", event.start_mark
                )
            return super().compose_node(parent, index)

    class Dumper(yaml.SafeDumper):
        yaml_implicit_resolvers = without_timestamps(yaml.SafeDumper.yaml_implicit_resolvers)

    def represent_str(dumper: Dumper, value: str) -> Any:
        # Unicode line breaks would be folded away in a plain or single-quoted scalar; a
        # double-quoted one escapes them, so the value reads back exactly.
        style = '"' if any(c in value for c in "\x85\u2028\u2029\r") else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, represent_str)

    # libyaml parses ~10x faster (indexing 10k files is mostly YAML). It is used only for
    # front-matter that cannot hold an alias or deep nesting: the pure-Python Loader above
    # refuses aliases exactly and turns runaway nesting into a RecursionError.
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:

        class FastLoader(fast):  # type: ignore[misc, valid-type]
            yaml_implicit_resolvers = without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)

    def load(fm: str) -> Any:
        if fast is None or _MAYBE_ALIAS.search(fm) or fm.count("[") + fm.count("{") > 64:
            return yaml.load(fm, Loader=Loader)  # noqa: S506 - Loader is a SafeLoader
        return yaml.load(fm, Loader=FastLoader)  # noqa: S506 - a CSafeLoader

    class Handler(YAMLHandler):
        loaded: Any = None

        def load(self, fm: str, **kwargs: object) -> Any:
            # Kept so `check` can tell "no front-matter" from "front-matter that is not a
            # mapping" (python-frontmatter silently drops the latter).
            self.loaded = load(fm)
            return self.loaded

    def dump(data: Mapping[str, Any]) -> str:
        return yaml.dump(
            dict(data),
            Dumper=Dumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=float("inf"),
        )

    return SimpleNamespace(parse=frontmatter.parse, Handler=Handler, dump=dump, Error=yaml.YAMLError)


# -- parse -------------------------------------------------------------------------------


def path_id(rel_path: str) -> str:
    """The id of a hand-written file without one: derived from its path, stable while it stays."""
    stem = rel_path[:-3] if rel_path.endswith(".md") else rel_path
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", stem.replace("/", "."))
    text = text.strip("-.") or "memory"
    if not text[0].isalnum():
        text = "f" + text
    if len(text) > 128:
        digest = hashlib.sha1(rel_path.encode()).hexdigest()[:10]
        text = text[:117] + "-" + digest
    return text


def _key_line(front: str, key: str) -> int:
    """1-based line in the file of a front-matter key (`front` starts after the first `---`)."""
    match = re.search(rf"^{re.escape(key)}\s*:", front, re.MULTILINE)
    if not match:
        return 1
    return front.count("\n", 0, match.start()) + 1


def check(data: bytes | str, rel_path: str, kinds: tuple[str, ...] = KINDS) -> tuple[Memory | None, list[Problem]]:
    """Parse a memory file, returning the memory (None if unusable) and every problem found.

    `kinds` are the valid kinds: the built-in ones plus any the config adds.
    """
    problems: list[Problem] = []

    def problem(line: int, message: str) -> None:
        problems.append(Problem(rel_path, line, message))

    if isinstance(data, bytes):
        if len(data) > MAX_FILE_BYTES:
            problem(0, "file is over 1 MB; memory files are limited to 1 MB")
            return None, problems
        if b"\0" in data:
            problem(0, "binary file (contains NUL bytes); memory files are UTF-8 Markdown")
            return None, problems
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            problem(line, f"not valid UTF-8 (byte {exc.start}); save the file as UTF-8")
            return None, problems
    else:
        text = data
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")

    front = ""
    if text.startswith("---"):
        end = re.search(r"^-{3,}\s*$", text[3:], re.MULTILINE)
        if end is None and _FENCE.match(text):
            problem(1, "the front-matter is never closed: add a '---' line after it")
            return None, problems
        front = text[3 : 3 + end.start()] if end else ""
        if len(front.encode()) > MAX_FRONT_MATTER_BYTES:
            problem(1, "front-matter is over 64 KB; keep memory metadata small")
            return None, problems
    y = _yaml()
    handler = y.Handler()
    try:
        meta, body = y.parse(text, handler=handler)
    except y.Error as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problem(line, f"invalid YAML front-matter: {reason}")
        return None, problems
    except RecursionError:
        problem(1, "the front-matter nests too deeply; memory metadata is flat")
        return None, problems
    if not isinstance(meta, dict) or not isinstance(handler.loaded, (dict, type(None))):
        problem(1, "front-matter must be a mapping of keys to values")
        return None, problems

    values: dict[str, Any] = {}
    for name in TEXT_FIELDS:
        value = meta.get(name)
        if value is None or value == "":
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            problem(_key_line(front, name), f"'{name}' must be text, not {type(value).__name__}")
            continue
        values[name] = str(value)
    for name in TIME_FIELDS:
        value = meta.get(name)
        if value is None or value == "":
            continue
        if not isinstance(value, str) or not _valid_time(value):
            problem(
                _key_line(front, name),
                f"'{name}' must be an ISO 8601 date or time with a timezone, "
                f"e.g. 2026-11-30T10:00:00+00:00 (got {value!r})",
            )
            continue
        values[name] = value
    for name in LIST_FIELDS:
        value = meta.get(name)
        if value is None:
            continue
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, list) or not all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
        ):
            problem(_key_line(front, name), f"'{name}' must be a list of text items")
            continue
        values[name] = tuple(str(v) for v in value)

    memory_id = values.get("id") or path_id(rel_path)
    if not ID_RE.match(memory_id):
        problem(
            _key_line(front, "id"),
            f"id {memory_id!r} is not valid: use letters, digits, '.', '_' and '-' "
            "(first a letter or digit, at most 128)",
        )
    title = values.get("title") or _title_from_body(body) or memory_id
    if "\n" in title:
        problem(_key_line(front, "title"), "'title' must be one line")
    kind = values.get("kind", "fact")
    if kind not in kinds:
        problem(_key_line(front, "kind"), f"unknown kind {kind!r}; use one of {', '.join(kinds)}")
    source = values.get("source", "user")
    if source not in SOURCES:
        problem(_key_line(front, "source"), f"unknown source {source!r}; use one of {', '.join(SOURCES)}")
    status = values.get("status", "active")
    if status not in STATUSES:
        problem(_key_line(front, "status"), f"unknown status {status!r}; use active or archived")
    confidence = meta.get("confidence")
    if confidence is None:
        confidence = DEFAULT_CONFIDENCE.get(source, 0.5)
    elif isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        problem(_key_line(front, "confidence"), f"'confidence' must be a number from 0 to 1, not {confidence!r}")
        confidence = 0.5
    elif not 0.0 <= confidence <= 1.0 or math.isnan(confidence):
        problem(_key_line(front, "confidence"), f"'confidence' is {confidence}; it must be from 0 to 1")
    for name, value in (("title", title), ("body", body), *((n, values.get(n)) for n in TEXT_FIELDS if n != "title")):
        reason = bad_text(value) if isinstance(value, str) else None
        if reason:
            problem(_key_line(front, name) if name != "body" else 0, f"'{name}' {reason}")
    for name in LIST_FIELDS:
        for item in values.get(name, ()):
            reason = bad_text(item) or ("is empty or spans lines" if not item.strip() or "\n" in item else None)
            if reason:
                problem(_key_line(front, name), f"an item of '{name}' {reason}")
    extra = {k: v for k, v in meta.items() if k not in FIELDS}
    memory = Memory(
        id=memory_id,
        title=title,
        body=body,
        kind=kind,
        entity=values.get("entity", ""),
        confidence=float(confidence),
        source=source,
        task_id=values.get("task_id"),
        created=values.get("created"),
        updated=values.get("updated"),
        tags=values.get("tags", ()),
        files=values.get("files", ()),
        symbols=values.get("symbols", ()),
        supersedes=values.get("supersedes", ()),
        status=status,
        expires=values.get("expires"),
        extra=extra,
        path=rel_path,
    )
    return memory, problems


_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def bad_text(text: str) -> str | None:
    """Why `text` cannot be stored in a memory (control characters, broken Unicode), or None."""
    match = _BAD_CHARS.search(text)
    if match is None:
        return None
    char = match.group()
    if 0xD800 <= ord(char) <= 0xDFFF:
        return "holds text that is not valid Unicode (a lone surrogate, e.g. from non-UTF-8 input)"
    return f"holds a control character (U+{ord(char):04X}); remove it"


def parse(data: bytes | str, rel_path: str = "", kinds: tuple[str, ...] = KINDS) -> Memory:
    """Parse a memory file or raise MemgitError naming the first problem."""
    memory, problems = check(data, rel_path, kinds)
    if problems or memory is None:
        raise MemgitError(str(problems[0]))
    return memory


def _valid_time(value: str) -> bool:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return False
    # A bare date is fine; a time of day needs a timezone to mean one moment.
    return len(value) == 10 or parsed.tzinfo is not None


def _title_from_body(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:120]
    return ""


# -- dump --------------------------------------------------------------------------------


def dump(memory: Memory) -> str:
    """The canonical text of a memory file."""
    meta: dict[str, Any] = {"id": memory.id, "title": memory.title, "kind": memory.kind}
    if memory.entity:
        meta["entity"] = memory.entity
    meta["confidence"] = memory.confidence
    meta["source"] = memory.source
    for name in ("task_id", "created", "updated", *LIST_FIELDS):
        value = getattr(memory, name)
        if value:
            meta[name] = list(value) if name in LIST_FIELDS else value
    if memory.status != "active":
        meta["status"] = memory.status
    if memory.expires:
        meta["expires"] = memory.expires
    meta.update(memory.extra)
    text = "---\n" + _yaml().dump(meta) + "---\n"
    body = memory.body.strip()
    return text + ("\n" + body + "\n" if body else "")


# -- helpers used by the store -----------------------------------------------------------


def new_id(taken: Container[str] = frozenset()) -> str:
    """A short readable id, unique among `taken`."""
    for size in (3, 3, 4, 4, 5, 8):
        candidate = "m-" + secrets.token_hex(size)
        if candidate not in taken:
            return candidate
    raise MemgitError("could not find a free memory id; try again")


def slug(title: str, limit: int = 50) -> str:
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    out = ""
    for word in words:
        candidate = f"{out}-{word}" if out else word
        if len(candidate) > limit:
            break
        out = candidate
    return out or "memory"


def file_name(memory: Memory) -> str:
    """memgit's choice of file name: a slug of the title plus the id (titles collide)."""
    suffix = memory.id[2:] if memory.id.startswith("m-") else memory.id
    return f"{slug(memory.title)}-{suffix}.md"


def count_tokens(text: str) -> int:
    """Approximate tokens, independent of any model.

    Each run of letters/digits counts one token per 4 characters (rounded up), each CJK
    character and each other non-space symbol counts one. It overestimates English a little,
    which is the safe side for a budget.
    """
    total = 0
    for match in _TOKEN_RE.finditer(text):
        piece = match.group()
        total += -(-len(piece) // 4) if len(piece) > 1 else 1
    return total


# Han (incl. extension A, compatibility ideographs, supplementary planes), Hiragana,
# Katakana (incl. phonetic extensions and half-width forms), Hangul syllables and jamo.
# One definition for token counting here and CJK segmentation in memgit.fts.
CJK_CLASS = (
    "\u1100-\u11ff\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
# Letter/digit runs stop at CJK characters, which then count one each through `\S`.
_TOKEN_RE = re.compile(rf"[^\W_{CJK_CLASS}]+|\S")


def normalized_text(title: str, body: str) -> str:
    """What makes two memories 'the same text': case, whitespace and end punctuation ignored."""
    text = f"{title}\n{body}".casefold()
    text = re.sub(r"\s+", " ", text).strip()
    return text.rstrip(" .!;:")


def declares_id(raw: bytes) -> bool:
    """Whether a file's own front-matter has an `id:` (else its id comes from its path)."""
    text = raw.decode("utf-8", "replace").removeprefix("\ufeff").replace("\r\n", "\n")
    opening = _FENCE.match(text)
    if opening is None:
        return False
    front = text[opening.end() :].split("\n---", 1)[0]
    return any(line.startswith("id:") for line in front.splitlines())


#: An opening front-matter fence as memory.check accepts it (`---`, `----`, trailing blanks).
_FENCE = re.compile(r"-{3,}[ \t]*\r?\n")


def insert_id(text: str, memory_id: str) -> str:
    """Add `id:` to a hand-written file, touching nothing else in it (BOM, line endings)."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text.removeprefix(bom)
    newline = "\r\n" if "\r\n" in text.split("\n", 1)[0] + "\n" else "\n"
    opening = _FENCE.match(text)
    if opening is not None:
        return f"{bom}{opening.group()}id: {memory_id}{newline}" + text[opening.end() :]
    return f"{bom}---{newline}id: {memory_id}{newline}---{newline}{newline}" + text


def split_title(text: str, title: str | None) -> tuple[str, str]:
    """A title and a body from remembered text: the first line, unless a title is given."""
    if title is not None:
        title = " ".join(title.split())
        if not title:
            raise MemgitError("the title is empty")
        return title, text
    first, _, rest = text.partition("\n")
    first = " ".join(first.lstrip("# ").split())
    if len(first) <= 120:
        return first, rest.strip()
    cut = first[:117].rsplit(" ", 1)[0]
    return cut + "…", text
