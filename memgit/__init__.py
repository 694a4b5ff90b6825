"""memgit: an AI coding agent's memory, kept as Markdown files in the project's git repository.

    import memgit
    mem = memgit.open(".")
    mem.remember("parse_config returns a tuple (path, Config)", kind="decision")
    for hit in mem.recall("why does parse_config return a tuple?"):
        print(hit.score, hit.title)

The names below are imported lazily so that `import memgit` (and `memgit --help`) stay fast.
"""

from __future__ import annotations

from memgit.errors import MemgitError

# Not `typing` at start: every hook and command imports this package first.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memgit.api import Memgit, open
    from memgit.memory.format import Memory, Problem
    from memgit.recall.hit import Hit

__all__ = ["Hit", "Memgit", "MemgitError", "Memory", "Problem", "open"]

_LAZY = {
    "open": "memgit.api",
    "Memgit": "memgit.api",
    "Memory": "memgit.memory.format",
    "Problem": "memgit.memory.format",
    "Hit": "memgit.recall.hit",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from memgit.distribution import version  # reads the installed metadata: only when asked

        return version() or "0+unknown"
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memgit' has no attribute {name!r}")
    import importlib  # the names are imported when first used

    return getattr(importlib.import_module(module), name)
