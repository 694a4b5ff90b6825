"""The background process that runs the agent hook events handed off to it, by the name it is
started with: `python -I -m memgit.hookjob GIT_DIR` (`memgit.agents.spool.start`). It runs
every record waiting under `<git-dir>/memgit/handoff/`, at low priority, each as the hook
would have (`memgit.hookrun.run_handed`), failing open into `hooks.log`; it waits for another
memgit writer's lock longer than a hook can (`memgit.hookrun.BACKGROUND_LOCK_TIMEOUT`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from memgit import hookrun
from memgit.agents import spool
from memgit.git import localstate


def main(argv: list[str]) -> int:
    try:
        git_dir = Path(argv[0])
        if not localstate.handoffs(git_dir).is_dir():
            return 0
        spool.lower_priority()
        spool.drain(git_dir, lambda record: hookrun.run_handed(record, wait=hookrun.BACKGROUND_LOCK_TIMEOUT),
                    lambda message: _say(git_dir, message))
    except BaseException as exc:  # noqa: BLE001 - fail open: one line, exit 0
        if argv:
            _say(Path(argv[0]), f"{type(exc).__name__}: {exc}")
    return 0


def _say(git_dir: Path, message: str) -> None:
    try:
        localstate.append(localstate.hooks_log(git_dir), f"{localstate.stamp()} memgit hookjob: {message}")
    except OSError:
        pass


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)
