"""Configuration: where each setting comes from, and which sources may name code.

A setting has a section and a key (`[recall] k`). Sources, the later winning:

1. `.memory/config.toml` — committed, shared by the team, and so written by whoever can push
   a branch. Plain data settings (k, weights, budgets, `embedder = "minilm"` / `"none"`) are
   read from it; a setting that names code or a command is *not* (see `CODE_SETTINGS`): an
   embedder plug-in (`module:attr`, `onnx:PATH` outside the repository), `[capture]
   command` or `[capture] llm_command`. Checking out a branch to review it must not run the branch's code, as git never
   clones hooks or `core.*` commands. Nor is `[review] branch` (see `MACHINE_SETTINGS`): a
   branch must not name itself the reviewed one. Such a setting is ignored with a warning (once per
   process) that says where to set it instead, and `memgit lint` reports it.
2. the user's own file, `$XDG_CONFIG_HOME/memgit/config.toml` (`~/.config/memgit/config.toml`).
3. the clone's git config (never cloned): `git config memgit.<section>.<key> VALUE`, a `-`
   standing for `_` (git names have no underscores): `memgit.recall.min-score`.
4. the environment: `MEMGIT_<SECTION>_<KEY>`, e.g. `MEMGIT_RECALL_MIN_SCORE=0.2` or
   `MEMGIT_INDEX_EMBEDDER=none`.

Sources 2-4 are the user's machine, so any setting is honoured from them.

A committed value memgit cannot use (not TOML, the wrong type, out of range) is set aside the
same way, with the default in its place: a typo on a branch must not stop memgit for everyone
who checks it out. A mistake in the user's own sources is an error, theirs to fix at once.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from memgit.errors import MemgitError
from memgit.memory.format import KINDS

#: The memory folder in a repository's work tree.
MEMORY_DIR = ".memory"
CONFIG_NAME = "config.toml"

DEFAULT_TOML = """\
# memgit configuration, shared by the team (committed with the memories).
# Any setting can be overridden, on your machine only, by ~/.config/memgit/config.toml,
# by the clone's git config (git config memgit.index.embedder none; '-' for '_'), or by an
# environment variable MEMGIT_<SECTION>_<KEY>, e.g. MEMGIT_INDEX_EMBEDDER=none.
# Settings that run code are read only from those: an embedder plug-in ("module:attr", or
# "onnx:PATH" outside this repository), [capture] command and [capture] llm_command are
# ignored here, with a warning.

[memory]
# token_budget = 300        # max approximate tokens in a memory body ('remember --force' overrides)
# kinds = []                # extra kinds besides fact, preference, convention, decision,
#                           # lesson, skill, checkpoint, summary

[index]
# embedder = "minilm"       # "minilm" (bundled, offline), "none" (keywords + anchors only),
#                           # "onnx:models/model.onnx" (a model in this repository); a plug-in
#                           # "package.module:factory" or a model elsewhere only on your machine
# warm = true               # keep the model loaded in a small background process between
#                           # CLI calls (exits after 15 idle minutes); false: load it per call
# background = true         # after a big pull, embed the new memories in a low-priority
#                           # background process; false: until 'memgit reindex' or an import

[recall]
# k = 5                     # memories returned by 'memgit recall'
# min_score = 0.25          # relevance floor; 0 turns it off
# task_widen = 0.7          # score factor for other tasks' memories when the task has none
# weight_keyword = 0.5
# weight_vector = 0.6
# weight_anchor = 0.4
# weight_title = 0.45       # the title lane: each memory's title and anchor names, as a vector
# method = "minmax"         # "minmax", "rrf" or "weighted"

[inject]
# What an agent is given per turn ('recall --format markdown', the agent hooks):
# k = 3                     # memories at most
# budget = 600              # tokens for all of it, header included
# per_memory = 200          # tokens per memory: title, id and anchors kept, body cut at a word
# min_score = 0.25          # relevance floor for injection

[reflect]
# What 'memgit reflect' proposes:
# evict_confidence = 0.35   # archive a memory under this confidence...
# evict_days = 30           # ...not recalled for this many days (none since its update)
# checkpoint_ttl_days = 7   # archive checkpoints not updated for this many days
# max_checkpoints = 100     # beyond this many active checkpoints, archive the least recalled
# stale_confidence_drop = 0.2  # confidence lost when a memory's file or symbol is gone
# churn_lines = 20            # a file of a memory changed by at least this many lines…
# churn_share = 0.5           # …and this share of its length since the memory was written: review it
# pin_sessions = 3          # pin a memory marked used in this many sessions
# unpin_days = 90           # unpin a pinned memory not used or recalled for this many days

[mcp]
# max_bytes = 60000         # the most JSON one answer of 'memgit mcp' holds; past it the answer is
#                           # cut and says so ('reflect' pages within it: ask for the next page)

[capture]
# "none" turns off the session-end capture. The command that replaces memgit's own
# ('command = ...') is read only from your machine (MEMGIT_CAPTURE_COMMAND, git config
# memgit.capture.command, ~/.config/memgit/config.toml), never from this file.
# The judge that vets capture's candidates ('llm_command = "claude -p"', "llm -m MODEL",
# "codex exec", "ollama run MODEL", or a command speaking memgit's JSON protocol) likewise:
# MEMGIT_CAPTURE_LLM_COMMAND, git config memgit.capture.llm-command, or your own file.
# llm_timeout = 120         # seconds the judge may take; past it the rules' proposal is kept

[rules]
# What 'memgit rules' writes into AGENTS.md and the other rules files (docs/agents.md):
# budget = 1500             # tokens for the whole block
# min_confidence = 0.6      # conventions and preferences under this are left out (pinned ones never)
"""

#: Settings that name code or a command: honoured only from the user's machine.
CODE_SETTINGS = ("index_embedder", "capture_command", "capture_llm_command")
#: Settings a branch must not choose for the reader: which branch counts as reviewed.
MACHINE_SETTINGS = ("review_branch",)
#: Values of those settings that run nothing.
_OFF = ("", "none", "off", "false")

Warn = Callable[[str], None]


@dataclass(frozen=True)
class Config:
    """Resolved settings. Field names are `<section>_<key>`. `ignored` holds a warning for each
    committed setting that names code and was therefore left out."""

    memory_token_budget: int = 300
    memory_kinds: tuple[str, ...] = ()
    index_embedder: str = "minilm"
    index_warm: bool = True
    index_background: bool = True
    recall_k: int = 5
    recall_min_score: float = 0.25
    recall_task_widen: float = 0.7
    recall_weight_keyword: float = 0.5
    recall_weight_vector: float = 0.6
    recall_weight_anchor: float = 0.4
    recall_weight_title: float = 0.45
    recall_method: str = "minmax"
    inject_k: int = 3
    inject_budget: int = 600
    inject_per_memory: int = 200
    inject_min_score: float = 0.25
    reflect_evict_confidence: float = 0.35
    reflect_evict_days: int = 30
    reflect_checkpoint_ttl_days: int = 7
    reflect_max_checkpoints: int = 100
    reflect_stale_confidence_drop: float = 0.2
    reflect_churn_lines: int = 20
    reflect_churn_share: float = 0.5
    reflect_pin_sessions: int = 3
    reflect_unpin_days: int = 90
    mcp_max_bytes: int = 60_000
    capture_command: str = ""
    capture_llm_command: str = ""
    capture_llm_timeout: int = 120
    rules_budget: int = 1500
    rules_min_confidence: float = 0.6
    review_branch: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    ignored: tuple[str, ...] = field(default=(), compare=False)

    @property
    def kinds(self) -> tuple[str, ...]:
        return KINDS + tuple(k for k in self.memory_kinds if k not in KINDS)


@dataclass(frozen=True)
class Ignored:
    """A committed setting that names code, and so is not honoured."""

    section: str
    key: str
    value: Any
    why: str  # "imports Python code", "runs a command", ...
    because: str = "a branch must not run code on your machine"

    def message(self) -> str:
        env = f"MEMGIT_{self.section}_{self.key}".upper()
        git_name = f"memgit.{self.section}.{self.key.replace('_', '-')}"
        return (f"[{self.section}] {self.key} = {_show(self.value)} {self.why}, so memgit ignores it in the "
                f"committed config ({self.because}); set it on your machine "
                f"instead: {env}, 'git config {git_name} ...' in this clone, or {_display(user_file())}")


def user_file(environ: Mapping[str, str] | None = None) -> Path:
    """The user's own config file: `$XDG_CONFIG_HOME/memgit/config.toml` (`~/.config/...`)."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".config")
    return Path(base) / "memgit" / CONFIG_NAME


def load(memory_dir: Path | None, environ: Mapping[str, str] | None = None, *,
         root: Path | None = None, git: Mapping[str, str] | None = None) -> Config:
    """Resolve the settings (see the module docstring): `<memory_dir>/config.toml` without the
    settings that name code, the user's file, `git` (the clone's `memgit.*` git config, as
    `gitrepo.settings` reads it) and `MEMGIT_*`. `root` is the repository's root (default: the
    memory folder's parent), inside which a committed `onnx:` model may lie."""
    environ = os.environ if environ is None else environ
    raw: dict[str, tuple[Any, str]] = {}
    ignored: list[tuple[str, str]] = []
    path = memory_dir / CONFIG_NAME if memory_dir is not None else None
    base = root if root is not None else (path.parent.parent if path is not None else None)
    if path is not None and base is not None and path.is_file() and not path.resolve().is_relative_to(base.resolve()):
        # A committed link must not read (or make memgit show) a file outside the work tree.
        ignored.append(("", f"{os.path.relpath(path, base)} is a link to a file outside the repository; "
                            "memgit reads no settings from it: make it a plain file"))
    elif path is not None and base is not None and path.is_file():
        rel = os.path.relpath(path, base)
        try:
            committed = _read(path)
        except MemgitError as exc:
            # A branch must not stop memgit working for everyone who checks it out: the file
            # is set aside, said once, and reported by `memgit lint`.
            committed = []
            ignored.append(("", f"{exc}; memgit uses the default settings until then"))
        for section, key, value in committed:
            name = f"{section}_{key}"
            trusted = _trusted(name, value, base)
            if trusted is None:
                raw[name] = (value, f"{path} [{section}] {key}")
            elif isinstance(trusted, Ignored):
                ignored.append((name, f"{rel}: {trusted.message()}"))
            else:
                raw[name] = (trusted, f"{path} [{section}] {key}")
    mine = user_file(environ)
    if mine.is_file():
        for section, key, value in _read(mine):
            raw[f"{section}_{key}"] = (value, f"{mine} [{section}] {key}")
    for name, value in (git or {}).items():
        parts = name.split(".")
        if len(parts) == 3 and parts[0].lower() == "memgit":
            setting = f"{parts[1]}_{parts[2]}".lower().replace("-", "_")
            raw[setting] = (value, f"git config {name}")
    known = {f.name: f for f in fields(Config) if f.name not in ("extra", "ignored")}
    for name in known:
        env_name = "MEMGIT_" + name.upper()
        if env_name in environ:
            raw[name] = (environ[env_name], f"${env_name}")
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    limits = {name: (low, high) for name, low, high in _RANGES}
    for name, (value, where) in raw.items():
        if name not in known:
            extra[name] = value  # a later version's setting: keep, don't fail
            continue
        try:
            values[name] = _checked(_coerce(value, type(getattr(Config(), name)), where), where,
                                    limits.get(name))
        except MemgitError as exc:
            if path is None or not where.startswith(f"{path} "):
                raise  # the user's own setting: theirs to fix, now
            # A committed value memgit cannot use: the default, and a warning, not a dead tool.
            ignored.append(("", f"{exc}; memgit uses the default ({_show(getattr(Config(), name))})"))
    # Set on the user's machine too: the user has chosen, the committed value is moot.
    unset = tuple(message for name, message in ignored if name not in raw)
    return Config(**values, extra=extra, ignored=unset)


def committed_problems(memory_dir: Path, root: Path | None = None) -> list[tuple[int, str]]:
    """(line, warning) of each setting of `<memory_dir>/config.toml` that memgit does not honour:
    one that names code, a value of the wrong type or out of range, or the whole file when it
    is not valid TOML — what `memgit lint` reports."""
    path = memory_dir / CONFIG_NAME
    if not path.is_file():
        return []
    base = root if root is not None else memory_dir.parent
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    try:
        settings = _read(path)
    except MemgitError as exc:
        return [(1, f"{exc}; memgit uses the default settings until then")]
    known = {f.name: type(getattr(Config(), f.name)) for f in fields(Config) if f.name not in ("extra", "ignored")}
    limits = {name: (low, high) for name, low, high in _RANGES}
    found = []
    for section, key, value in settings:
        name = f"{section}_{key}"
        trusted = _trusted(name, value, base)
        if isinstance(trusted, Ignored):
            found.append((_line_of(lines, section, key), trusted.message()))
        elif trusted is None and name in known:
            try:
                _checked(_coerce(value, known[name], f"[{section}] {key}"), f"[{section}] {key}", limits.get(name))
            except MemgitError as exc:
                found.append((_line_of(lines, section, key),
                              f"{exc}; memgit uses the default ({_show(getattr(Config(), name))})"))
    return found


def names_code(section: str, key: str, value: Any, root: Path) -> str:
    """Why a committed setting names code or a command ("" when it does not): what `memgit
    diff` flags in a change to `config.toml`."""
    trusted = _trusted(f"{section}_{key}", value, root)
    if isinstance(trusted, Ignored):
        return f"{trusted.why}; memgit ignores it in the committed config"
    if isinstance(trusted, str):
        return "loads a model file from this repository"
    return ""


_warned: set[str] = set()


def warn_ignored(config: Config, warn: Warn) -> None:
    """Say once per process why each ignored committed setting is ignored."""
    for message in config.ignored:
        if message not in _warned:
            _warned.add(message)
            warn(message)


def _read(path: Path) -> Iterable[tuple[str, str, Any]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise MemgitError(f"{path}: invalid TOML ({exc}); fix or delete the file") from exc
    out: list[tuple[str, str, Any]] = []
    for section, settings in data.items():
        if not isinstance(settings, dict):
            raise MemgitError(f"{path}: '{section}' must be a [section] of settings")
        out.extend((section, key, value) for key, value in settings.items())
    return out


def _trusted(name: str, value: Any, root: Path) -> Ignored | str | None:
    """For a committed setting: None when it names no code, an `Ignored` when it does, or the
    value to use instead (a committed `onnx:` model inside the repository, made absolute)."""
    section, key = name.split("_", 1)
    if name in MACHINE_SETTINGS:
        return Ignored(section, key, value, "chooses which memories count as reviewed",
                       "a branch must not vouch for its own memories")
    if name not in CODE_SETTINGS:
        return None
    text = str(value).strip()
    if text.lower() in _OFF:
        return None
    if name in ("capture_command", "capture_llm_command"):
        return Ignored(section, key, value, "runs a command")
    if text.lower() == "minilm" or ":" not in text:
        return None  # the bundled model, or a name load_embedder refuses anyway
    if text.startswith("onnx:"):
        model = Path(text[5:].strip())
        if model.parts and not model.is_absolute() and not text[5:].strip().startswith("~"):
            inside = (root / model).resolve()
            if inside.is_relative_to(root.resolve()):
                return "onnx:" + str(inside)
        return Ignored(section, key, value, "loads a model from outside the repository")
    return Ignored(section, key, value, "imports Python code")


def _line_of(lines: list[str], section: str, key: str) -> int:
    current = ""
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if text.startswith("[") and not text.startswith("[["):
            current = text.strip("[] ").strip("\"'")
        elif text.split("=", 1)[0].strip().replace("\"", "").replace("'", "") in (
                key if current == section else None, f"{section}.{key}" if not current else None):
            return number
    return 0


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else '"' + value.replace('"', '\\"') + '"'
    return text if len(text) <= 80 else text[:77] + "..."


def _display(path: Path) -> str:
    home = Path.home()
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


#: Settings whose value must lie in a range (a k of 0 would silently recall nothing).
_RANGES = (
    ("recall_k", 1, 100),
    ("recall_min_score", 0.0, 1.0),
    ("recall_task_widen", 0.0, 1.0),
    ("inject_k", 1, 100),
    ("inject_budget", 1, 1_000_000),
    ("inject_per_memory", 1, 1_000_000),
    ("inject_min_score", 0.0, 1.0),
    ("memory_token_budget", 1, 1_000_000),
    ("capture_llm_timeout", 1, 3600),
    ("rules_budget", 200, 100_000),
    ("rules_min_confidence", 0.0, 1.0),
    ("mcp_max_bytes", 2_000, 1_000_000),  # past ~250k tokens no agent can read an answer
)


def _checked(value: Any, where: str, limits: tuple[float, float] | None) -> Any:
    if limits is not None and not (limits[0] <= value <= limits[1]):
        raise MemgitError(f"{where}: {value!r} is out of range; use a number from {limits[0]} to {limits[1]:g}")
    return value


def _coerce(value: Any, kind: type, where: str) -> Any:
    try:
        if kind is tuple:
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError
            return tuple(value)
        if kind is bool:
            return str(value).lower() in ("1", "true", "yes", "on")
        if kind is int and isinstance(value, float):
            raise ValueError
        return kind(value)
    except (TypeError, ValueError):
        raise MemgitError(f"{where}: expected {kind.__name__}, got {value!r}") from None
