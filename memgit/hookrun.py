"""The agent hook entry point: `memgit-hook AGENT EVENT` (or `python -I -m memgit.hookrun AGENT
EVENT`), JSON payload on stdin.

`memgit hooks install` writes `memgit-hook` into the project's (shared) settings and this
machine's interpreter, isolated, into the user's (see `memgit.agents.agenthooks`). Events:

- `session-start` (Claude Code and Codex `SessionStart`): inject pinned memories, the task's
  latest checkpoint and relevant memories; with source `compact`, the checkpoint first and
  only what the session no longer holds;
- `user-prompt` (`UserPromptSubmit`, opt-in): inject memories relevant to the prompt that the
  session does not hold yet; nothing at all when none qualifies;
- `pre-compact` (`PreCompact`): write the task's checkpoint (`memgit.agents.checkpoint`);
- `session-end` (Claude Code `SessionEnd`) and `stop` (Codex `Stop`, per turn): record the
  session in `<git-dir>/memgit/sessions.jsonl` and, when `[capture] command` is set, start
  it detached, without waiting.

It fails open, always: whatever goes wrong (no `.memory/`, a malformed or oversized payload,
an unknown event, a held lock, a crash), it prints nothing, exits 0, and appends one line to
`<git-dir>/memgit/hooks.log`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from memgit.git import localstate

MAX_STDIN = 2_000_000
#: Seconds a hook waits for another memgit writer's lock (unless $MEMGIT_LOCK_TIMEOUT says
#: otherwise): it must not outlast the agent's hook timeout.
LOCK_TIMEOUT = 10.0
EVENTS = ("session-start", "user-prompt", "pre-compact", "session-end", "stop")
HOOK_NAMES = {"session-start": "SessionStart", "user-prompt": "UserPromptSubmit"}


def _git_dir(cwd: Path) -> Path | None:
    from memgit.git import repo as gitrepo  # only the event that runs needs it: a hook starts fast

    try:
        repo = gitrepo.find(cwd)
    except Exception:  # noqa: BLE001 - the log is best effort
        return None
    return repo.git_dir if repo else None


def log(cwd: Path, agent: str, event: str, message: str) -> None:
    """One line in `<git-dir>/memgit/hooks.log`; silently nothing when there is no git dir."""
    git_dir = _git_dir(cwd)
    if git_dir is None:
        return
    line = f"{localstate.stamp()} {agent} {event}: {' '.join(message.split())[:500]}"
    try:
        localstate.append(localstate.hooks_log(git_dir), line)
    except OSError:
        pass


def read_payload(stream: Any) -> dict[str, Any]:
    data = stream.buffer.read(MAX_STDIN + 1) if hasattr(stream, "buffer") else stream.read(MAX_STDIN + 1)
    if len(data) > MAX_STDIN:
        raise ValueError(f"payload over {MAX_STDIN} bytes")
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if not text.strip():
        raise ValueError("empty payload")
    payload = json.loads(text)
    if not isinstance(payload, dict):
        raise ValueError("payload is not a JSON object")
    return payload


def run(agent: str, event: str, payload: dict[str, Any]) -> str:
    """What to print for one event ("" for nothing); raises on any problem."""
    from memgit.api import open as open_store  # only the event that runs needs it: a hook starts fast
    from memgit.git.repo import lock_timeout  # only the event that runs needs it: a hook starts fast

    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}")
    cwd = Path(str(payload.get("cwd") or os.getcwd()))
    session_id = str(payload.get("session_id") or payload.get("thread-id") or "").strip()
    if not session_id:
        raise ValueError("no session_id in the payload")
    # Passed to this store's writer, not set in the environment: a long-lived process that
    # runs hooks would otherwise hand the hook's short wait to every later writer.
    wait = lock_timeout(os.environ.get("MEMGIT_LOCK_TIMEOUT", str(LOCK_TIMEOUT)))
    mem = open_store(cwd, warn=lambda message: log(cwd, agent, event, message), warm=True, lock_timeout=wait)
    text = mem.hook_event(agent, event, session_id, payload)
    return _context(event, text) if event in HOOK_NAMES else ""


def _context(event: str, text: str) -> str:
    if not text:
        return ""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": HOOK_NAMES[event], "additionalContext": text}},
        ensure_ascii=False,
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    agent = args[0] if args else "?"
    event = args[1] if len(args) > 1 else "?"
    cwd = Path(os.getcwd())
    try:
        payload = read_payload(sys.stdin)
        if isinstance(payload.get("cwd"), str):
            cwd = Path(payload["cwd"])
        out = run(agent, event, payload)
    except BaseException as exc:  # noqa: BLE001 - a hook never breaks the agent's session
        if isinstance(exc, KeyboardInterrupt):
            return 0
        try:
            log(cwd, agent, event, f"{type(exc).__name__}: {exc}")
        except BaseException:  # noqa: BLE001
            pass
        return 0
    if out:
        try:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        except OSError:
            pass
    return 0


def console() -> None:
    """`memgit-hook AGENT EVENT`: the command committed into shared agent settings."""
    try:
        from memgit import launch  # only the event that runs needs it: a hook starts fast

        launch.isolate("memgit.hookrun", sys.argv[1:])
        code = main()
    except BaseException:  # noqa: BLE001
        code = 0
    os._exit(code)


if __name__ == "__main__":
    console()
