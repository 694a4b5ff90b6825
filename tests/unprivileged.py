"""Children that file modes refuse, as they refuse a user, even when the tests run as root.

Root reads and writes past every file mode (the CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
capabilities), so a test of what memgit does when a file cannot be read proves nothing in a CI
that runs as root. A child started with `preexec()` has those two capabilities dropped from its
bounding set before it runs: it keeps uid 0, so the interpreter, the checkout and the test's
files stay its own, but a file of mode 0 or a folder of mode 0555 refuse it as they refuse
their owner. Not root: there is nothing to drop, the child runs as this user, whom the modes
refuse already. Root where the capabilities cannot be dropped (no prctl, no CAP_SETPCAP): the
test is skipped, saying why.
"""

from __future__ import annotations

import ctypes
import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pytest

PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def _drop() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


@functools.cache
def _dropping_works() -> str | None:
    """None when a child started with `_drop` is refused a file of mode 0; else why not."""
    if not sys.platform.startswith("linux"):
        return "dropping capabilities is Linux-only"
    with tempfile.TemporaryDirectory() as folder:
        locked = Path(folder) / "locked"
        locked.write_text("x")
        locked.chmod(0)
        try:
            done = subprocess.run([sys.executable, "-c", f"open({str(locked)!r}).read()"], preexec_fn=_drop,
                                  capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"cannot drop root's file capabilities here ({exc})"
        if "PermissionError" not in done.stderr:
            return "a child with root's file capabilities dropped still read a file of mode 0"
    return None


def preexec() -> Callable[[], None] | None:
    """The `preexec_fn` that makes a child subject to file modes (None: it is already)."""
    if os.geteuid() != 0:
        return None
    why = _dropping_works()
    if why is not None:
        pytest.skip(f"running as root, and {why}")
    return _drop


#: `python -c RUN_DROPPED ARGV...`: drops the capabilities, then runs ARGV in its place (for a
#: child whose starter takes no `preexec_fn`, such as the MCP SDK's stdio client).
RUN_DROPPED = (
    "import ctypes, os, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    f"for cap in ({CAP_DAC_OVERRIDE}, {CAP_DAC_READ_SEARCH}):\n"
    f"    if libc.prctl({PR_CAPBSET_DROP}, cap, 0, 0, 0) != 0: raise OSError(ctypes.get_errno(), 'prctl')\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


def argv(command: list[str]) -> list[str]:
    """`command`, started so that file modes refuse it (unchanged when not root)."""
    if preexec() is None:
        return command
    return [sys.executable, "-c", RUN_DROPPED, *command]
