"""A benchmark prints a figure only from a run that measured what the figure claims.

A run that failed (a command exited non-zero), came back empty (a hook that printed nothing,
a recall that found nothing for every query) or degraded (vectors that did not load in a
"with vectors" row, hooks that never fired) is not a slow or a fast run: it is not a
measurement. The benchmarks call `require(condition, why)` on what they time, and
`refuse_on_invalid(main)` turns an `InvalidRun` into one line on stderr saying why no figure
was printed, and exit status 2, instead of a number.

A script imports it with its own folder on `sys.path` for that one import (three lines at
the top of each), since the scripts keep this folder off `sys.path` otherwise: its `mcp.py` and
`secrets.py` would hide the MCP SDK and the standard module. So every benchmark in one run
shares one `validity` module, and an `InvalidRun` raised in one is caught by another that
runs it. `load()` gives a script of this folder by path the same way.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

#: The exit status of a benchmark that refused to print a figure.
INVALID = 2


class InvalidRun(Exception):
    """What was measured is not what the figure would claim; the message says why."""


def require(condition: object, why: str) -> None:
    """Stop the benchmark unless `condition` holds: `why` says what went wrong."""
    if not condition:
        raise InvalidRun(why)


def refuse_on_invalid(main: Callable[[], int | None], name: str) -> int:
    """Run `main`; an `InvalidRun` prints "<name>: no figure: <why>" on stderr and gives 2."""
    try:
        return main() or 0
    except InvalidRun as exc:
        sys.stdout.flush()
        print(f"{name}: no figure: {exc}", file=sys.stderr, flush=True)
        return INVALID


def load(name: str) -> ModuleType:
    """A module of this folder, by path (`load("speed")`)."""
    here = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location(f"memgit_bench_{name}", here / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"no benchmark module {name!r} in {here}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
