"""Which task an agent is working on: the id that tags its checkpoints.

The rule, first match wins:

1. `--task T` on the command line;
2. the `MEMGIT_TASK` environment variable;
3. the current branch, when it is not the default branch: work on a feature branch is one
   task, across sessions and agents, and a new session on that branch finds its checkpoint;
4. on the default branch (or a detached HEAD), the agent session: `session-<first 8
   characters of its id>`, so two sessions on `main` do not share checkpoints;
5. with no session either (`memgit checkpoint` typed by hand on `main`): the branch name.

A session remembers the task it started with, so a branch switch mid-session does not
split its checkpoints.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping

from memgit.git import repostate


def task_for(
    root: Path,
    *,
    explicit: str | None = None,
    session_id: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    environ = os.environ if environ is None else environ
    for given in (explicit, environ.get("MEMGIT_TASK")):
        if given and given.strip():
            return " ".join(given.split())[:128]
    branch = repostate.branch(root)
    if branch and branch != repostate.default_branch(root):
        return branch
    session_id = session_id or environ.get("CLAUDE_CODE_SESSION_ID") or environ.get("CODEX_SESSION_ID")
    if session_id:
        short = re.sub(r"[^A-Za-z0-9]", "", session_id)[:8]
        if short:
            return f"session-{short}"
    return branch or "detached"
