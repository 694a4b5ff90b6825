"""What changed in memory between two revisions, in memory terms, for a pull-request review.

`memgit diff main...HEAD` reads the memory files git reports as changed and compares them
memory by memory (matched by id, so a moved file is one edited memory): added, edited (which
fields, old → new, and whether the body changed), archived, merged (archived and superseded
by another memory of the change), restored, deleted; and which memories a change newly
`supersedes`, since that hides them from recall. Every other file under the memory folder
that changed is listed too (`config.toml`, a README, `notes.txt`, a hidden file, a symlink):
nothing a branch changes there is left out of the review. For `config.toml` each changed
setting is named, and one that names code or a command is flagged.

The Markdown goes into pull-request comments, where a forge renders it, so everything taken
from a file is escaped (`_md`, `_code`): no HTML, links, images, emphasis, `@mention` or
`#123` reference comes through from a branch's memories.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from memgit import config as config_mod
from memgit.errors import MemgitError
from memgit.git import repo as gitrepo
from memgit.memory import format as fmt
from memgit.memory import lenient, trust
from memgit.memory.format import Memory, parse_time

ORDER = ("added", "edited", "merged", "archived", "restored", "deleted")
FILE_ORDER = ("added", "changed", "renamed", "deleted")
#: Fields not worth a line of their own: `updated` changes with every edit.
QUIET = {"updated"}
SYMLINK = "120000"
GITLINK = "160000"


@dataclass(frozen=True)
class MemoryChange:
    """One memory's change. `fields` maps a front-matter field to (old, new)."""

    id: str
    title: str
    change: str
    path: str
    kind: str = "fact"
    fields: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    body_changed: bool = False
    merged_into: tuple[str, ...] = ()
    #: (id, title or "") of each memory this change newly makes it supersede, hiding it from recall.
    supersedes: tuple[tuple[str, str], ...] = ()
    #: (id, title) of each memory that this change's lower `source` lets hide it (its `supersedes`).
    hidden_by: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "title": self.title, "change": self.change, "path": self.path, "kind": self.kind,
            "fields": {k: {"old": _plain(o), "new": _plain(n)} for k, (o, n) in self.fields.items()},
            "body_changed": self.body_changed, "merged_into": list(self.merged_into),
            "supersedes": [{"id": i, "title": t or None} for i, t in self.supersedes],
            "hidden_by": [{"id": i, "title": t} for i, t in self.hidden_by],
        }


@dataclass(frozen=True)
class SettingChange:
    """One setting of `config.toml`, old → new (None: not set). `code` says why it names code or
    a command ("" when it does not)."""

    setting: str
    old: Any
    new: Any
    code: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"setting": self.setting, "old": self.old, "new": self.new, "names_code": self.code or None}


@dataclass(frozen=True)
class FileChange:
    """A file under the memory folder that is not (on one side at least) a memory."""

    path: str
    change: str  # FILE_ORDER
    old_path: str = ""
    note: str = ""
    settings: tuple[SettingChange, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.path, "change": self.change, "old_path": self.old_path or None,
                "note": self.note or None, "settings": [s.to_dict() for s in self.settings]}


@dataclass(frozen=True)
class Review:
    """Everything a revision range changes under the memory folder."""

    memories: list[MemoryChange]
    files: list[FileChange]
    under: str = ".memory"  # the memory folder, relative to the repository's root


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def revisions(repo: gitrepo.Repo, rev_range: str | None) -> tuple[str, str | None]:
    """(old commit, new commit or None for the work tree) of `A..B`, `A...B`, `A` or nothing."""
    def commit(rev: str) -> str:
        rev = rev or "HEAD"
        if rev.startswith("-"):
            raise MemgitError(f"{rev!r} is not a revision")
        try:
            return gitrepo.resolve(repo, rev)
        except MemgitError:
            raise MemgitError(f"unknown revision {rev!r}; give a range such as main...HEAD") from None

    if not rev_range:
        return commit("HEAD"), None
    if "..." in rev_range:
        a, b = rev_range.split("...", 1)
        new = commit(b)
        return gitrepo.merge_base(repo, commit(a), new), new
    if ".." in rev_range:
        a, b = rev_range.split("..", 1)
        return commit(a), commit(b)
    return commit(rev_range), None


def diff(repo: gitrepo.Repo, memory_dir: Path, kinds: tuple[str, ...], rev_range: str | None) -> list[MemoryChange]:
    """The memory-level changes of `rev_range` (see `revisions`), in ORDER then by title."""
    return review(repo, memory_dir, kinds, rev_range).memories


def review(repo: gitrepo.Repo, memory_dir: Path, kinds: tuple[str, ...], rev_range: str | None,
           current: Callable[[], list[Memory]] | None = None) -> Review:
    """The memory changes of `rev_range` and the other files it changes under `memory_dir`.
    `current` (the work tree's memories, read only when needed) names a superseded memory the
    change does not touch."""
    old_rev, new_rev = revisions(repo, rev_range)
    under = Path(os.path.relpath(memory_dir, repo.root)).as_posix()
    prefix = "" if under == "." else under + "/"
    olds: dict[str, Memory] = {}
    news: dict[str, Memory] = {}
    files: list[FileChange] = []
    paths = gitrepo.changed_paths(repo, old_rev, new_rev, under)
    for status, old_path, new_path, old_mode, new_mode in paths:
        old_data = gitrepo.show(repo, old_rev, old_path) if status != "A" else None
        new_data = None
        if status != "D" and new_path:
            new_data = gitrepo.show(repo, new_rev, new_path) if new_rev else _file(repo.root / new_path)
        old_rel, new_rel = old_path.removeprefix(prefix), (new_path or old_path).removeprefix(prefix)
        old_memory = _memory(old_data, old_rel, old_mode, kinds) if status != "A" else None
        new_memory = _memory(new_data, new_rel, new_mode, kinds) if status != "D" else None
        if old_memory is not None:
            olds[old_memory.id] = old_memory
        if new_memory is not None:
            news[new_memory.id] = new_memory
        old_other = status != "A" and old_memory is None
        new_other = status != "D" and new_memory is None
        if old_other or new_other:
            files.append(_file_change(status, old_rel, new_rel, (old_data, new_data), (old_mode, new_mode),
                                      (old_other, new_other), repo.root))
    superseded: dict[str, list[str]] = {}
    for memory in news.values():
        before = _in_force(olds.get(memory.id), memory)
        for gone in set(memory.supersedes) - before:
            superseded.setdefault(gone, []).append(memory.id)
    names = {m.id: m.title for m in olds.values()} | {m.id: m.title for m in news.values()}
    unknown = {i for m in news.values() for i in m.supersedes} - names.keys()
    if unknown and current is not None:
        names |= {m.id: m.title for m in current() if m.id in unknown}

    def title(memory_id: str) -> str:
        return names.get(memory_id, "")

    changes = [_change(olds.get(i), news.get(i), tuple(superseded.get(i, ())), title) for i in {*olds, *news}]
    found = [c for c in changes if c is not None]
    # A memory merged into another by this change is listed as merged: no need to say it twice.
    merged = {(c.id, into) for c in found for into in c.merged_into}
    found = [replace(c, supersedes=tuple(s for s in c.supersedes if (s[0], c.id) not in merged))
             for c in found]
    lowered = {i for i in olds.keys() & news.keys()
               if trust.rank(news[i].source) < trust.rank(olds[i].source)}
    found = [replace(c, hidden_by=_hidden_by(repo, new_rev, under, olds[c.id], news[c.id], kinds))
             if c.id in lowered else c for c in found]
    memories = sorted(found, key=lambda c: (ORDER.index(c.change), c.title.casefold(), c.id))
    files.sort(key=lambda f: (f.path != config_mod.CONFIG_NAME, FILE_ORDER.index(f.change), f.path))
    return Review(memories, files, under)


def _memory(data: bytes | None, rel: str, mode: str, kinds: tuple[str, ...]) -> Memory | None:
    """The memory a file holds, or None when the store would not read it as one."""
    parts = rel.split("/")
    if mode == SYMLINK or any(p.startswith(".") for p in parts) or not fmt.is_memory_file(parts[-1]):
        return None
    return _read(data, rel, kinds)


def _file_change(status: str, old_rel: str, new_rel: str, data: tuple[bytes | None, bytes | None],
                 modes: tuple[str, str], other: tuple[bool, bool], root: Path) -> FileChange:
    change = {"A": "added", "D": "deleted", "R": "renamed", "C": "added"}.get(status, "changed")
    path = old_rel if change == "deleted" else new_rel
    notes = []
    if modes[1] == SYMLINK or (change == "deleted" and modes[0] == SYMLINK):
        notes.append("a symbolic link")
    if GITLINK in modes:
        notes.append("a submodule: the memory files of the repository it names are read as memories once it "
                     "is checked out, and its changes are not listed here")
    if not other[0] and other[1] and status != "A":
        notes.append("no longer read as a memory")
    elif other[0] and not other[1] and status != "D":
        notes.append("now read as a memory")
    elif change != "deleted" and _looks_like_memory(new_rel) and modes[1] not in (SYMLINK, GITLINK):
        notes.append("not read as a memory")
    settings: tuple[SettingChange, ...] = ()
    if config_mod.CONFIG_NAME in (old_rel, new_rel) and SYMLINK not in modes:
        settings, note = _settings(data[0] if old_rel == config_mod.CONFIG_NAME else None,
                                   data[1] if new_rel == config_mod.CONFIG_NAME else None, root)
        notes += [note] if note else []
    return FileChange(path, change, old_rel if change == "renamed" else "", "; ".join(notes), settings)


def _looks_like_memory(rel: str) -> bool:
    return fmt.is_memory_file(rel.rsplit("/", 1)[-1])


def _settings(old: bytes | None, new: bytes | None, root: Path) -> tuple[tuple[SettingChange, ...], str]:
    """The settings that differ between two versions of config.toml, and a note when one
    cannot be read."""
    sides = []
    for name, data in (("old", old), ("new", new)):
        try:
            sides.append(_flat(tomllib.loads(data.decode("utf-8"))) if data is not None else {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            return (), f"the {name} version is not valid TOML: settings not compared"
    before, after = sides
    out = []
    for (section, key) in sorted({*before, *after}, key=lambda sk: (sk[0], sk[1])):
        if before.get((section, key)) != after.get((section, key)):
            value = after.get((section, key))
            code = config_mod.names_code(section, key, value, root) if value is not None else ""
            setting = f"[{section}] {key}" if section else key
            out.append(SettingChange(setting, before.get((section, key)), value, code))
    return tuple(out), ""


def _flat(data: dict[str, Any], section: str = "") -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{section}.{key}" if section else key))
        else:
            out[(section, key)] = value
    return out


def _file(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _read(data: bytes | None, rel: str, kinds: tuple[str, ...]) -> Memory | None:
    if data is None:
        return None
    return lenient.check(data, rel, kinds)[0]


def _change(old: Memory | None, new: Memory | None, merged_into: tuple[str, ...],
            title: Callable[[str], str]) -> MemoryChange | None:
    if new is None:
        assert old is not None
        return MemoryChange(old.id, old.title, "deleted", old.path, old.kind, merged_into=merged_into)
    fields = {name: (getattr(old, name), getattr(new, name)) for name in fmt.FIELDS
              if old is not None and getattr(old, name) != getattr(new, name) and name not in QUIET}
    if old is not None:
        for key in {*old.extra, *new.extra}:
            if old.extra.get(key) != new.extra.get(key):
                fields[key] = (old.extra.get(key), new.extra.get(key))
        if old.path != new.path:
            fields["path"] = (old.path, new.path)
    body_changed = old is not None and old.body != new.body
    if old is None:
        change = "added"
    elif old.active and not new.active:
        change = "merged" if merged_into else "archived"
    elif not old.active and new.active:
        change = "restored"
    elif fields or body_changed:
        change = "edited"
    else:
        return None  # only `updated` (or the file's layout) changed
    fields.pop("status", None)
    before = _in_force(old, new)
    supersedes = tuple((i, title(i)) for i in new.supersedes if i not in before)
    return MemoryChange(new.id, new.title, change, new.path, new.kind, fields, body_changed, merged_into,
                        supersedes)


def _hidden_by(repo: gitrepo.Repo, rev: str | None, under: str, old: Memory, new: Memory,
               kinds: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The active memories at `rev` whose `supersedes` hides `new` now that its source is lower,
    and did not hide `old` (trust.may_hide): an unchanged memory the review would not name."""
    out = []
    for path in gitrepo.grep_text(repo, rev, new.id, under):
        rel = path.removeprefix(under + "/")
        data = gitrepo.show(repo, rev, path) if rev else _file(repo.root / path)
        link = rev is None and os.path.islink(repo.root / path)
        hider = _memory(data, rel, SYMLINK if link else "100644", kinds)
        if (hider is not None and hider.active and hider.id != new.id and new.id in hider.supersedes
                and trust.may_hide(hider.source, new.source)
                and not trust.may_hide(hider.source, old.source)):
            out.append((hider.id, hider.title))
    return tuple(sorted(out))


def _in_force(old: Memory | None, new: Memory) -> set[str]:
    """The ids in `new.supersedes` that `old` already superseded to the same effect. None when
    the change makes the memory active again or raises its source: a supersession that could
    hide nothing (trust.may_hide) may hide its target now, so the review names it again."""
    if old is None or (new.active and not old.active) or trust.rank(new.source) > trust.rank(old.source):
        return set()
    return set(old.supersedes)


def markdown(changes: list[MemoryChange], titles: dict[str, str] | None = None,
             files: list[FileChange] | None = None, under: str = ".memory") -> str:
    """The changes as Markdown for a pull-request comment; every value from a file escaped."""
    files = files or []
    if not changes and not files:
        return "No memory changes.\n"
    titles = ({c.id: c.title for c in changes} | {i: t for c in changes for i, t in c.supersedes if t}
              | (titles or {}))
    counts = {name: sum(1 for c in changes if c.change == name) for name in ORDER}
    summary = [f"{n} {name}" for name, n in counts.items() if n]
    if files:
        summary.append(f"{len(files)} other file{'s' if len(files) > 1 else ''}")
    lines = [f"### Memory changes: {', '.join(summary)}", ""]
    for name in ORDER:
        group = [c for c in changes if c.change == name]
        if not group:
            continue
        lines += [f"**{name.capitalize()}**", ""]
        for c in group:
            line = f"- **{_md(c.title)}** ({_code(c.id)}, {_md(c.kind)})"
            details = [_field(k, o, n, titles) for k, (o, n) in c.fields.items()]
            if c.body_changed:
                details.append("body changed")
            listed = c.fields.get("supersedes", ((), ()))  # the field's added ids are shown with it
            again = [i for i, _ in c.supersedes if i not in listed[1] or i in listed[0]]
            if again:
                hidden = ", ".join(_named(i, titles) for i in again)
                details.append("supersedes (hides from recall) " + hidden)
            if c.hidden_by:
                hiders = ", ".join(_named(i, {i: t}) for i, t in c.hidden_by)
                details.append("now hidden from recall by " + hiders)
            if c.merged_into:
                details.append("into " + ", ".join(_named(i, titles) for i in c.merged_into))
            lines.append(line + (": " + "; ".join(details) if details else ""))
        lines.append("")
    if files:
        lines += [f"**Other files under {_code(under + '/')}** (not memories)", ""]
        for f in files:
            line = f"- {_code(f.path)} {f.change}"
            if f.old_path:
                line += f" from {_code(f.old_path)}"
            details = [_md(f.note)] if f.note else []
            details += [_setting(s) for s in f.settings]
            lines.append(line + (": " + "; ".join(details) if details else ""))
        lines.append("")
    return "\n".join(lines)


def _named(memory_id: str, titles: dict[str, str]) -> str:
    title = titles.get(memory_id)
    return f"**{_md(title)}** ({_code(memory_id)})" if title else _code(memory_id)


def _field(name: str, old: Any, new: Any, titles: dict[str, str]) -> str:
    if isinstance(old, tuple) and isinstance(new, tuple):
        show = (lambda i: _named(str(i), titles)) if name == "supersedes" else _code
        added = [f"+{show(item)}" for item in new if item not in old]
        removed = [f"−{show(item)}" for item in old if item not in new]
        label = "supersedes (hides from recall)" if name == "supersedes" and added else _md(name)
        return f"{label} {' '.join(added + removed)}"
    if name == "expires" and _past(new) and not _past(old):
        return f"expires (past: hides from recall) {_value(old)} → {_value(new)}"
    return f"{_md(name)} {_value(old)} → {_value(new)}"


def _past(value: Any) -> bool:
    """Whether an `expires` value lies in the past, so recall leaves the memory out (channels.CURRENT)."""
    when = parse_time(str(value)) if value else None
    return when is not None and when <= datetime.now(timezone.utc)


def _setting(change: SettingChange) -> str:
    text = f"{_code(change.setting)} {_value(change.old)} → {_value(change.new)}"
    return text + (f" **⚠ names code: {_md(change.code)}**" if change.code else "")


def _value(value: Any) -> str:
    return "(none)" if value in (None, "", ()) else _code(value)


# -- escaping: a forge renders the comment, and the values come from a branch -----------------

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]+")
#: Bidirectional controls: a right-to-left override in a title would reorder the rest of the
#: rendered line (what a change supersedes, an id) while the file still says what it says.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: What GitHub and GitLab Markdown may give meaning to inside a line.
_SPECIAL = re.compile(r"([\\`*_\[\]<>#!|~&$])")
#: What forges link in plain text even when escaped: mentions, issue references, URLs.
_LINKED = re.compile(r"(?<=[@#!$%&~^])(?=\w)|(?<=:)(?=//)|(?i:(?<=\bwww)(?=\.))")
ZERO_WIDTH = "\u200b"


def _one_line(value: Any) -> str:
    """`value` on one line, each bidirectional control shown as its code point (`(U+202E)`)."""
    return _BIDI.sub(lambda m: f"(U+{ord(m.group()):04X})", _CONTROL.sub(" ", str(value)))


def _md(value: Any) -> str:
    """`value` as literal text: every character Markdown, HTML or a forge would act on escaped,
    and a zero-width space after `@`, `#` (and the like) and inside `://`, `www.` so that no
    mention, reference or link is made of it."""
    text = _LINKED.sub(ZERO_WIDTH, _one_line(value))
    text = _SPECIAL.sub(r"\\\1", text)
    return re.sub(r"^(\d+)([.)])|^([-+=])", r"\1\\\2\3", text)  # "1.", "-" would start a list


def _code(value: Any) -> str:
    """`value` as a code span, which forges render literally (no HTML, link or mention): fenced
    by more backticks than it holds."""
    text = _one_line(value)
    if not text.strip():
        return "(blank)" if text else "(empty)"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"
