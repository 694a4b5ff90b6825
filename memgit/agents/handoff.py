"""The end of an agent session: record it, and hand the transcript to an extractor.

Each session end (Claude Code `SessionEnd`; Codex has none, so its per-turn `Stop`) appends
one line to `<git-dir>/memgit/sessions.jsonl` (local, never committed): the session id,
agent, task, transcript path, starting and ending commits, and why it ended. Then the
extractor is started detached — its own session, stdio on /dev/null — with that line's
fields in `MEMGIT_SESSION_*` variables and `{transcript}` / `{session}` in the command
replaced; the hook returns at once (Claude Code gives it 1.5 s). The extractor is memgit's
own `memgit capture --from-hook {transcript}`, which leaves a proposal for `memgit capture
--pending` (one per session, replaced as the session goes on) and never commits.
`MEMGIT_CAPTURE_COMMAND`, `git config memgit.capture.command` or `[capture] command` in the
user's own config file names another, and `none` turns it off; a command in the committed
`.memory/config.toml` is ignored (`memgit.config`): a branch must not run code on checkout.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from typing import TYPE_CHECKING, Any

from memgit import launch
from memgit.errors import MemgitError
from memgit.git import localstate, repostate
from memgit.index.workspace import Workspace

if TYPE_CHECKING:
    from memgit.agents.known import SessionState


def capture_command(ws: Workspace) -> str:
    """The extractor's command line ("" when turned off), from the user's own settings only:
    `memgit.config` leaves a committed `[capture] command` out."""
    value = ws.config.capture_command.strip()
    if value.lower() in ("none", "off", "false") or os.environ.get("MEMGIT_JUDGE"):
        # An agent CLI run as capture's judge (`memgit.capture.judge`) is no session to capture.
        return ""
    return value or f"{launch.command('memgit', 'capture', '--from-hook')} {{transcript}}"


def end_session(ws: Workspace, state: "SessionState", *, agent: str, reason: str) -> dict[str, Any]:
    repo = ws.repo
    if repo is None:
        raise MemgitError(f"{ws.memory_dir} is not in a git repository: sessions are recorded in its git dir")
    record = {
        "ts": localstate.stamp(),
        "session_id": state.session_id,
        "agent": agent,
        "task": state.task,
        "transcript": state.transcript,
        "start_commit": state.start_commit,
        "end_commit": repostate.head(repo.root),
        "reason": reason,
    }
    localstate.append_json(localstate.sessions_log(repo.git_dir), record)
    command = capture_command(ws)
    if command and state.transcript:
        args = [
            part.replace("{transcript}", state.transcript or "").replace("{session}", state.session_id)
            for part in shlex.split(command)
        ]
        env = dict(os.environ)
        env.update({f"MEMGIT_SESSION_{k.upper()}": str(v or "") for k, v in record.items()})
        with open(os.devnull, "r+b") as null:
            subprocess.Popen(
                args,
                cwd=repo.root,
                stdin=null,
                stdout=null,
                stderr=null,
                env=env,
                start_new_session=True,
                close_fds=True,
            )
    return record
