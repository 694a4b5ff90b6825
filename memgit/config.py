"""Configuration: `.memory/config.toml` (committed, shared by the team), then `MEMGIT_*`.

Every setting has a section and a key; the environment variable `MEMGIT_<SECTION>_<KEY>`
(upper case) overrides it, e.g. `MEMGIT_RECALL_MIN_SCORE=0.2` or `MEMGIT_INDEX_EMBEDDER=none`.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from memgit.errors import MemgitError
from memgit.memory import KINDS

CONFIG_NAME = "config.toml"

DEFAULT_TOML = """\
# memgit configuration, shared by the team (committed with the memories).
# Any setting can be overridden by an environment variable MEMGIT_<SECTION>_<KEY>,
# e.g. MEMGIT_INDEX_EMBEDDER=none.

[memory]
# token_budget = 300        # max approximate tokens in a memory body ('remember --force' overrides)
# kinds = []                # extra kinds besides fact, preference, convention, decision,
#                           # lesson, skill, checkpoint, summary

[index]
# embedder = "minilm"       # "minilm" (bundled, offline), "none" (keywords + anchors only),
#                           # "onnx:/path/to/model.onnx" or "package.module:factory"
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
"""


@dataclass(frozen=True)
class Config:
    """Resolved settings. Field names are `<section>_<key>`."""

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
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def kinds(self) -> tuple[str, ...]:
        return KINDS + tuple(k for k in self.memory_kinds if k not in KINDS)


def load(memory_dir: Path | None, environ: Mapping[str, str] | None = None) -> Config:
    """Read `<memory_dir>/config.toml` (if any) and apply `MEMGIT_*` overrides."""
    environ = os.environ if environ is None else environ
    raw: dict[str, Any] = {}
    path = memory_dir / CONFIG_NAME if memory_dir is not None else None
    if path is not None and path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise MemgitError(f"{path}: invalid TOML ({exc}); fix or delete the file") from exc
        for section, settings in data.items():
            if not isinstance(settings, dict):
                raise MemgitError(f"{path}: '{section}' must be a [section] of settings")
            for key, value in settings.items():
                raw[f"{section}_{key}"] = (value, f"{path} [{section}] {key}")
    known = {f.name: f for f in fields(Config) if f.name != "extra"}
    for name in known:
        env_name = "MEMGIT_" + name.upper()
        if env_name in environ:
            raw[name] = (environ[env_name], f"${env_name}")
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for name, (value, where) in raw.items():
        if name not in known:
            extra[name] = value  # a later version's setting: keep, don't fail
            continue
        values[name] = _coerce(value, type(getattr(Config(), name)), where)
    for name, low, high in _RANGES:
        value = values.get(name)
        if value is not None and not (low <= value <= high):
            where = raw[name][1]
            raise MemgitError(f"{where}: {value!r} is out of range; use a number from {low} to {high:g}")
    return Config(**values, extra=extra)


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
)


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
