"""The memory file format: one Markdown file with YAML front-matter per memory.

This module is the only one that reads or writes YAML. `dump(lenient.parse(text)) == text` for every
file memgit wrote: keys in a fixed order, empty optional keys omitted, timestamps kept as the
strings they were, nothing filled in with "now".
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
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
    "pinned",
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
    pinned: bool = False
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
    import yaml  # YAML only when a file is parsed or written: a cold recall reads the index

    # YAML only when a file is parsed or written: a cold recall reads the index
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

    def dump(data: Mapping[str, Any]) -> str:
        return yaml.dump(
            dict(data),
            Dumper=Dumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=float("inf"),
        )

    def split(text: str) -> tuple[str, str] | None:
        # frontmatter.parse's split, but the body is left as it is: parse strips it, which
        # loses the indentation of its first line (code, a nested list item).
        text = text.strip()
        handler = YAMLHandler()
        if not handler.detect(text):
            return None
        try:
            front, content = handler.split(text)
        except ValueError:
            return None
        return front, clean_body(content)

    return SimpleNamespace(dump=dump, Error=yaml.YAMLError, load=load, split=split)


# -- parse -------------------------------------------------------------------------------


#: Memory files: `*.md` in any case and `*.markdown`; a README is documentation for people.
_MEMORY_NAME = re.compile(r"(?i)(?!readme\.(?:md|markdown)\Z)[^.].*\.(?:md|markdown)\Z")


def is_memory_file(name: str) -> bool:
    """Whether a file name under the memory folder is a memory (`notes.md`, `Notes.MD`,
    `notes.markdown`), not a README, a hidden file or something else."""
    return _MEMORY_NAME.match(name) is not None


def path_id(rel_path: str) -> str:
    """The id of a hand-written file without one: derived from its path, stable while it stays.

    An ASCII name keeps its readable slug (`team/notes.md` is `team.notes`). A name the slug
    cannot tell apart from others (non-ASCII letters, a slug over 128 characters) gets a
    short hash of its exact path too (`日本.md` is `memory-3f9c…`), so two such files never
    share an id. ASCII names whose slugs collide (`notes.md`, `notes .md`) are told apart by
    the store: the first file keeps the slug, the others are read under `hashed_path_id`.
    """
    text = _path_slug(rel_path)
    if len(text) > 128 or not rel_path.isascii():
        return hashed_path_id(rel_path)
    return text


def hashed_path_id(rel_path: str) -> str:
    """The path id with a hash of the exact path: unique per path even when slugs collide."""
    digest = hashlib.sha1(rel_path.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return _path_slug(rel_path)[:117] + "-" + digest


def _path_slug(rel_path: str) -> str:
    stem = re.sub(r"(?i)\.(?:md|markdown)\Z", "", rel_path)
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", stem.replace("/", "."))
    text = text.strip("-.") or "memory"
    if not text[0].isalnum():
        text = "f" + text
    return text


def original_first(rel_path: str, memory_id: str) -> tuple[bool, str]:
    """Sort key for files that declare the same id: the original sorts first.

    A copy keeps the id of the file it was copied from, but not its name: the original is
    the file named for the id (memgit's `<slug>-<id without m->.md`, or the path the id was
    derived from). `Store.original` asks git when names do not tell. The others are read
    under their path id (`path_id`) and `memgit lint` names them.
    """
    stem = rel_path.rsplit("/", 1)[-1]
    stem = stem[: -len(stem.rsplit(".", 1)[-1]) - 1] if "." in stem else stem
    suffix = memory_id[2:] if memory_id.startswith("m-") else memory_id
    named = stem == suffix or stem.endswith("-" + suffix) or path_id(rel_path) == memory_id
    return (not named, rel_path)


_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def parse_time(value: str | None) -> datetime | None:
    """An ISO 8601 time (or bare date, as midnight UTC) as an aware datetime, else None."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def bad_text(text: str) -> str | None:
    """Why `text` cannot be stored in a memory (control characters, broken Unicode), or None."""
    match = _BAD_CHARS.search(text)
    if match is None:
        return None
    char = match.group()
    if 0xD800 <= ord(char) <= 0xDFFF:
        return "holds text that is not valid Unicode (a lone surrogate, e.g. from non-UTF-8 input)"
    return f"holds a control character (U+{ord(char):04X}); remove it"


@dataclass(frozen=True)
class FrontMatter:
    """A file's front-matter as YAML reads it. `meta` is None when YAML could not load it;
    `error` is then (line, why), as it is for front-matter that is not a mapping."""

    meta: dict[str, Any] | None
    body: str
    error: tuple[int, str] | None = None


def read_front(text: str) -> FrontMatter:
    """Front-matter and body of a file's text (BOM and CRLF already removed)."""
    y = _yaml()
    parts = y.split(text)
    if parts is None:
        return FrontMatter({}, clean_body(text))
    front, body = parts
    try:
        loaded = y.load(front)
    except (y.Error, RecursionError) as exc:
        if isinstance(exc, RecursionError):
            return FrontMatter(None, body, (1, "the front-matter nests too deeply; memory metadata is flat"))
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return FrontMatter(None, body, (mark.line + 1 if mark is not None else 1, f"invalid YAML front-matter: {reason}"))
    if not isinstance(loaded, (dict, type(None))):
        return FrontMatter({}, body, (1, "front-matter must be a mapping of keys to values (it is ignored until then)"))
    return FrontMatter(loaded or {}, body)


def split_front(text: str) -> tuple[str, str] | None:
    """The raw front-matter and the body, split as `read_front` splits them; None without one."""
    parts = _yaml().split(text)
    return (str(parts[0]), str(parts[1])) if parts else None


def opens_front_matter(text: str) -> bool:
    """Whether `text` starts with an opening `---` line (`----`, trailing blanks too)."""
    return _FENCE.match(text) is not None


#: Blank lines at the start of a body (whitespace up to a line break).
_LEADING_BLANK_LINES = re.compile(r"\A(?:[^\S\n]*\n)+")


def clean_body(text: str) -> str:
    """A body as a memory file keeps it: blank lines before it and whitespace after it dropped,
    and nothing else, so the indentation of its first line (code, a nested list item) stays."""
    return _LEADING_BLANK_LINES.sub("", text).rstrip()


def clean_text(text: str) -> str:
    """`text` with what `bad_text` refuses replaced by U+FFFD."""
    return _BAD_CHARS.sub("\ufffd", text)


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
    if memory.pinned:
        meta["pinned"] = True
    meta.update(memory.extra)
    text = "---\n" + _yaml().dump(meta) + "---\n"
    body = clean_body(memory.body)
    return text + ("\n" + body + "\n" if body else "")


def dump_fields(fields: Mapping[str, Any]) -> str:
    """Front-matter lines for `fields`, written as `dump` writes them (for `memgit.memory.patch`)."""
    return str(_yaml().dump(fields))


def load_fields(text: str) -> Any:
    """What front-matter `text` holds, with the safe loader; None when it is not valid YAML."""
    y = _yaml()
    try:
        return y.load(text)
    except (y.Error, RecursionError):
        return None


# -- helpers used by the store -----------------------------------------------------------


def new_id(taken: Container[str] = frozenset()) -> str:
    """A short readable id, unique among `taken`."""
    import secrets  # random ids only on writes: a hook that recalls need not load it

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
    plain = text.isascii() or max(text) < CJK_CLASS[0]  # no CJK character: the short pattern is the same
    for match in (_TOKEN_PLAIN if plain else _token_re()).finditer(text):
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
_TOKEN_PLAIN = re.compile(r"[^\W_]+|\S")  # the same on text without CJK, and compiled 20x faster


@functools.cache
def _token_re() -> re.Pattern[str]:
    """Compiled on first use: its CJK class costs ~10 ms to compile, which a hook need not pay."""
    return re.compile(rf"[^\W_{CJK_CLASS}]+|\S")


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
        return title, clean_body(text)
    text = clean_body(text)
    first, _, rest = text.partition("\n")
    first = " ".join(first.lstrip("# ").split())
    if len(first) <= 120:
        return first, clean_body(rest)
    cut = first[:117].rsplit(" ", 1)[0]
    return cut + "…", text
