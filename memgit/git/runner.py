"""Running git: the one place memgit starts a git process.

Every git command memgit runs, the hooks' included, goes through `run`: pathspecs taken
literally (memory paths are file names, never globs: `notes[1].md` must not match
`notes1.md`), git's messages in English (memgit reads a few of them), nothing on stdin unless
given (large inputs such as pathspec files and commit messages go there, never in argv),
output kept as bytes and read as text on demand, a retry while another process holds git's
`index.lock`, and a `MemgitError` that says what to do when git is missing or cannot be run.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from memgit.errors import MemgitError

#: How long a command that failed on a held `index.lock` is retried.
LOCK_RETRY_SECONDS = 15.0
MISSING = "git is not installed or not on PATH; install git first"


@dataclass(frozen=True)
class Output:
    """What a git command left: its exit status, its stdout (bytes as git wrote them) and
    its stderr."""

    returncode: int
    data: bytes
    stderr: str

    @cached_property
    def stdout(self) -> str:
        """stdout as text: UTF-8, and a byte that is not UTF-8 kept (surrogateescape), so a
        file name read here still names the file."""
        return self.data.decode("utf-8", "surrogateescape")

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run(args: Sequence[str], cwd: Path, *, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
        timeout: float | None = None) -> Output:
    """Run `git --literal-pathspecs ARGS` in `cwd`; never raises for a failing command (read
    `returncode`). `env` adds to this process's environment (GIT_INDEX_FILE…). A command
    that fails because another process holds `index.lock` is run again for up to
    LOCK_RETRY_SECONDS. Raises MemgitError when git is missing, cannot start, or runs longer
    than `timeout` seconds."""
    full_env = {**os.environ, **(env or {}), "LANGUAGE": "C", "LC_ALL": "C"}
    deadline = time.monotonic() + LOCK_RETRY_SECONDS
    delay = 0.05
    while True:
        done = _once(list(args), cwd, stdin, full_env, timeout)
        if done.returncode != 0 and "index.lock" in done.stderr and time.monotonic() < deadline:
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
            continue
        return done


def _once(args: list[str], cwd: Path, stdin: bytes | None, env: dict[str, str], timeout: float | None) -> Output:
    name = " ".join(["git", *args][:4 if args[:1] == ["-c"] else 2])
    try:
        done = subprocess.run(["git", "--literal-pathspecs", *args], cwd=cwd, input=stdin,
                              stdin=None if stdin is not None else subprocess.DEVNULL,
                              capture_output=True, check=False, env=env, timeout=timeout)
    except FileNotFoundError:
        if not Path(cwd).is_dir():
            raise MemgitError(f"{cwd} is not a folder; run memgit from inside a repository") from None
        raise MemgitError(MISSING) from None
    except subprocess.TimeoutExpired:
        raise MemgitError(f"{name} took over {timeout:g} s and was stopped; "
                          "run it again when the repository is less busy") from None
    except OSError as exc:
        raise MemgitError(f"cannot run {name} ({exc.strerror or exc}); "
                          "check that git runs in this folder") from None
    return Output(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"))
