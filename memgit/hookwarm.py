"""The warm hook server's process, by the name it is started with: `python -I -m memgit.hookwarm`
(`memgit.agents.warmhooks.spawn`). It imports what the `user-prompt` and `session-start` hooks
import, then serves them (`memgit.agents.warmhooks.serve`), each in a child forked for it that
runs `memgit.hookrun.answer` as the hook's own process would."""

from __future__ import annotations

import os
import sys

from memgit import hookrun
from memgit.agents import warmhooks


def main() -> int:
    try:
        path = warmhooks.socket_path()
        if path is None:  # no socket path fits: no server
            return 0
        os.chdir(path.parent)  # not the repository the first hook ran in
        from memgit import api  # noqa: F401 - what every hook imports, imported once here
        from memgit.agents import hookevents  # noqa: F401 - as above

        try:
            idle = float(os.environ.get("MEMGIT_WARM_IDLE") or warmhooks.IDLE_SECONDS)
        except ValueError:
            idle = warmhooks.IDLE_SECONDS
        warmhooks.serve(hookrun.answer, idle_seconds=idle)
    except BaseException:  # noqa: BLE001, S110 - an optimisation only: the hooks do without it
        pass
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
