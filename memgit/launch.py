"""How memgit starts its own Python: the interpreter, isolated from the folder it runs in.

Hooks, the merge driver, background jobs and the MCP server run inside repositories that
other people wrote. `python -m memgit…` would put the current folder first on `sys.path`, so
a `memgit/` package or an embedder module committed there would run as the user. Every
command memgit starts or registers therefore runs isolated: `-I` (no current folder on the
import path, no `PYTHON*` variables, no user site). When memgit itself is installed in the
user site (`pip install --user`), `-I` would hide it: `-E -P` then keeps the same protection
and the user's own site.

The `memgit-hook` command (the one committed into shared agent settings, found on PATH)
starts without the current folder on `sys.path` already; `isolate()` re-executes it with
these flags when a variable that changes the import path (`PYTHONPATH`…) is set.
"""

from __future__ import annotations

import os
import sys

# Not `pathlib`, `shlex` or `typing` at start: every hook imports this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

#: The variables that change where Python imports from: only these make a hook start again.
_IMPORT_PATH_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONPLATLIBDIR")

#: The command committed into shared settings: a console script found on PATH.
HOOK_COMMAND = "memgit-hook"


def _in_user_site() -> bool:
    import site  # only to tell a user-site install
    from pathlib import Path  # as above

    try:
        user_site = Path(site.getusersitepackages()).resolve()
    except Exception:  # noqa: BLE001 - no user site on this Python: nothing is hidden by -I
        return False
    here = Path(__file__).resolve()
    return user_site in here.parents


def flags() -> list[str]:
    """The interpreter flags that keep the current folder and `PYTHON*` variables out."""
    return ["-E", "-P"] if _in_user_site() else ["-I"]


def argv(module: str, *args: str, python: str | None = None) -> list[str]:
    """`[python, flags…, "-m", module, args…]`: a memgit module run isolated."""
    return [python or sys.executable, *flags(), "-m", module, *args]


def command(module: str, *args: str, python: str | None = None) -> str:
    """`argv()` as one shell-quoted line, for hook files and git config."""
    import shlex  # only to write a command line
    return " ".join(shlex.quote(part) for part in argv(module, *args, python=python))


def isolate(module: str, args: Sequence[str]) -> None:
    """Re-execute as `python -I -m module args` unless already as safe as that.

    A console script does not put the current folder on `sys.path`; what is left is the
    environment (`PYTHONPATH`, `PYTHONHOME`, `PYTHONUSERBASE`…), which `-I`/`-E` ignore.
    """
    if sys.flags.ignore_environment or not any(os.environ.get(name) for name in _IMPORT_PATH_VARIABLES):
        return  # common ones (PYTHONUNBUFFERED, PYTHONDONTWRITEBYTECODE) cost no second start
    os.execv(sys.executable, argv(module, *args))


def detach(args: Sequence[str]) -> None:
    """Start `args` detached: its own session, stdio on /dev/null, no other descriptor of this
    process (an agent waiting for a hook's pipes to close must not wait for it). Raises OSError.

    `posix_spawn` where it can say all that (Linux, with `/proc/self/fd` to list what to
    close): a hook that starts a process must not pay for importing `subprocess`."""
    try:
        mine = [int(fd) for fd in os.listdir("/proc/self/fd") if fd.isdigit() and int(fd) > 2]
    except OSError:
        mine = []
    if hasattr(os, "posix_spawn") and hasattr(os, "POSIX_SPAWN_OPEN") and mine:
        actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
            (os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        for fd in mine:
            try:
                if not os.get_inheritable(fd):
                    continue  # closed on exec anyway
            except OSError:
                continue  # the listing's own descriptor, gone already
            actions.append((os.POSIX_SPAWN_CLOSE, fd))
        os.posix_spawn(args[0], list(args), dict(os.environ), file_actions=actions, setsid=True)
        return
    import subprocess  # where posix_spawn cannot do it all

    subprocess.Popen(list(args), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True)


def holder(lock: str | os.PathLike[str]) -> int | None:
    """The pid that the process holding `lock` (an `flock` held by a background job or server
    memgit started) wrote in it, -1 when it wrote none; None when no process holds it, there
    is no such file, or the platform has no `flock`."""
    try:
        import fcntl  # POSIX only
    except ImportError:
        return None
    try:
        with open(lock) as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:  # held
                handle.seek(0)
                text = handle.read().strip()
                return int(text) if text.isdigit() else -1
            fcntl.flock(handle, fcntl.LOCK_UN)
    except OSError:
        return None
    return None
