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

from memgit.agents import warmhooks

# Not `typing` or `pathlib` at start: a hook that the warm server answers needs neither, and
# each costs about a bare Python start of its own.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

MAX_STDIN = 2_000_000
#: Seconds a hook waits for another memgit writer's lock (unless $MEMGIT_LOCK_TIMEOUT says
#: otherwise): it must not outlast the agent's hook timeout.
LOCK_TIMEOUT = 10.0
#: Seconds the background process (`memgit.hookjob`) waits for it at least: no agent waits for
#: it, and a checkpoint it gives up on is lost (another writer's long `reflect`, say).
BACKGROUND_LOCK_TIMEOUT = 600.0
EVENTS = ("session-start", "user-prompt", "pre-compact", "session-end", "stop")
HOOK_NAMES = {"session-start": "SessionStart", "user-prompt": "UserPromptSubmit"}
#: The events that only hand off: written down and run by a background process.
HANDED_OFF = ("pre-compact", "session-end", "stop")
#: Where a handed-off event's payload says how long its transcript was when the hook ran.
TRANSCRIPT_END = "memgit_transcript_end"


def _git_dir(cwd: Path) -> Path | None:
    from memgit.git import repo as gitrepo  # only the event that runs needs it: a hook starts fast

    try:
        repo = gitrepo.find(cwd)
    except Exception:  # noqa: BLE001 - the log is best effort
        return None
    return repo.git_dir if repo else None


def log(cwd: Path, agent: str, event: str, message: str) -> None:
    """One line in `<git-dir>/memgit/hooks.log`; silently nothing when there is no git dir."""
    from memgit.git import localstate  # only a hook that has something to say

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


def run(agent: str, event: str, payload: dict[str, Any], *, handed: bool = False,
        wait: float | None = None) -> str:
    """What to print for one event ("" for nothing); raises on any problem. The events in
    `HANDED_OFF` are written down for the background (`memgit.agents.spool`) unless `handed`
    (the background process running them)."""
    from pathlib import Path  # only a hook that does the work here

    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}")
    cwd = Path(str(payload.get("cwd") or os.getcwd()))
    session_id = str(payload.get("session_id") or payload.get("thread-id") or "").strip()
    if not session_id:
        raise ValueError("no session_id in the payload")
    if event in HANDED_OFF and not handed and _hand_off(agent, event, cwd, payload):
        return ""
    from memgit.git import repostate  # only the event that runs needs it: a hook starts fast

    with repostate.held():  # a hook does not move HEAD: git's answers (and its files) hold for it
        return _run(agent, event, cwd, session_id, payload, wait)


def _run(agent: str, event: str, cwd: Path, session_id: str, payload: dict[str, Any],
         at_least: float | None) -> str:
    from memgit.agents import spool  # only a hook that does the work here
    from memgit.api import open as open_store  # only the event that runs needs it: a hook starts fast
    from memgit.git.repo import lock_timeout  # only the event that runs needs it: a hook starts fast

    # Passed to this store's writer, not set in the environment: a long-lived process that
    # runs hooks would otherwise hand the hook's short wait to every later writer.
    wait = lock_timeout(os.environ.get("MEMGIT_LOCK_TIMEOUT", str(LOCK_TIMEOUT)))
    if at_least is not None:
        wait = max(wait, at_least)
    mem = open_store(cwd, warn=lambda message: log(cwd, agent, event, message), warm=True, lock_timeout=wait)
    if event == "session-start" and mem.repo is not None and spool.pending(mem.repo.git_dir):
        # A checkpoint a pre-compact handed off belongs in what a compacted session is given.
        _drain(mem.repo.git_dir, lambda m: log(cwd, agent, event, m), wait)
    text = mem.hook_event(agent, event, session_id, payload)
    return _context(event, text) if event in HOOK_NAMES else ""


def _drain(git_dir: Path, say: Callable[[str], None], wait: float) -> None:
    """What was handed off, run before a session starts: at most a bounded part of a backlog
    (`memgit.agents.spool.INLINE_RECORDS`, `INLINE_SECONDS`), the rest left, in order, to the
    background process, started for it."""
    from memgit.agents import spool  # only a hook that does the work here

    if spool.drain(git_dir, run_handed, say, wait=wait, most=spool.INLINE_RECORDS, seconds=spool.INLINE_SECONDS):
        return
    left = len(spool.pending(git_dir))
    if left:
        say(f"left {left} handed-off hook events to the background process")
        spool.start(git_dir)


def _hand_off(agent: str, event: str, cwd: Path, payload: dict[str, Any]) -> bool:
    """Write the event down for the background process; False when it must run here (no
    memory folder: the error is the same either way and cheap; the record cannot be written;
    `MEMGIT_HOOKS_BACKGROUND=0`)."""
    if os.environ.get("MEMGIT_HOOKS_BACKGROUND", "").strip().lower() in ("0", "false", "no", "off"):
        return False
    from memgit.agents import spool  # only the events that hand off
    from memgit.git import gitfiles  # only the events that hand off need it

    found = gitfiles.locate(cwd)
    repo = found or _repo(cwd)
    if repo is None or not (repo[0] / ".memory").is_dir():
        return False
    transcript = payload.get("transcript_path")
    end = None
    if isinstance(transcript, str) and transcript:
        payload = {**payload, "transcript_path": os.path.abspath(transcript)}  # as for the folder, below
        try:
            end = os.stat(transcript).st_size  # what the checkpoint reads: the transcript as it is now
        except OSError:
            pass
    # The folder as this process resolves it: whoever runs the record runs elsewhere.
    record = {"agent": agent, "event": event, "cwd": os.path.abspath(cwd), "payload": payload,
              "transcript_end": end}
    both = gitfiles.head_and_branch(found[1]) if found is not None else None
    if found is not None and both is not None:  # the commit and branch the event is about, whenever it runs
        record.update(root=str(found[0]), head=both[0], branch=both[1])
    try:
        spool.hand_off(repo[1], record)
    except OSError:
        return False
    return True


def _repo(cwd: Path) -> tuple[Path, Path] | None:
    from memgit.git import gitfiles  # only the events that hand off need it

    found = gitfiles.locate(cwd)
    if found is not None:
        return found
    from memgit.git import repo as gitrepo  # git's own answer, for any layout the files do not settle

    try:
        repo = gitrepo.find(cwd)
    except Exception:  # noqa: BLE001 - the event runs here and says why
        return None
    return (repo.root, repo.git_dir) if repo else None


def run_handed(record: dict[str, Any], *, wait: float | None = None) -> None:
    """Run one handed-off event (`memgit.agents.spool` record), failing open into hooks.log;
    `wait`: seconds to wait for another writer's lock at least."""
    from pathlib import Path  # the background process's

    from memgit.git import repostate  # the background process's

    agent, event = str(record.get("agent") or "?"), str(record.get("event") or "?")
    payload = dict(record["payload"])
    cwd = Path(str(record.get("cwd") or payload.get("cwd") or os.getcwd()))
    payload["cwd"] = str(cwd)
    end = record.get("transcript_end")
    payload.pop(TRANSCRIPT_END, None)
    if isinstance(end, int) and not isinstance(end, bool) and end >= 0:
        payload[TRANSCRIPT_END] = end
    try:
        with repostate.held():
            at = _as_of(record)
            if at is not None:
                repostate.hold(*at)
            run(agent, event, payload, handed=True, wait=wait)
    except BaseException as exc:  # as the hook itself: one line in hooks.log, never an error
        if isinstance(exc, KeyboardInterrupt):
            raise
        try:
            log(cwd, agent, event, f"{type(exc).__name__}: {exc}")
        except BaseException:  # noqa: BLE001, S110 - nowhere left to say it
            pass


def _as_of(record: dict[str, Any]) -> tuple[Path, str | None, str | None] | None:
    """(root, HEAD, branch) a record was handed off at, when it says so in a form git's files
    could hold (a record is local, but nothing in it becomes an option of a git command)."""
    from pathlib import Path  # the background process's

    from memgit.git import gitfiles  # the background process's

    root, head, branch = record.get("root"), record.get("head"), record.get("branch")
    if not isinstance(root, str) or not os.path.isabs(root) or not isinstance(head, str):
        return None
    if not gitfiles.is_oid(head) or not (branch is None or (isinstance(branch, str) and branch
                                                              and not branch.startswith("-"))):
        return None
    return Path(root), head, branch


def _context(event: str, text: str) -> str:
    if not text:
        return ""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": HOOK_NAMES[event], "additionalContext": text}},
        ensure_ascii=False,
    )


def answer(agent: str, event: str, payload: dict[str, Any], cwd: Path) -> str:
    """What the hook prints for `payload` ("" for nothing), failing open: any problem is one
    line in hooks.log. The hook's own process runs it, or the warm hook server's child for it."""
    try:
        return run(agent, event, payload)
    except BaseException as exc:  # noqa: BLE001 - a hook never breaks the agent's session
        if isinstance(exc, KeyboardInterrupt):
            return ""
        try:
            log(cwd, agent, event, f"{type(exc).__name__}: {exc}")
        except BaseException:  # noqa: BLE001, S110 - nowhere left to say it
            pass
        return ""


def _path(folder: str) -> Path:
    from pathlib import Path  # only a hook that does the work here

    return Path(folder)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    agent = args[0] if args else "?"
    event = args[1] if len(args) > 1 else "?"
    cwd = os.getcwd()
    warm = False
    try:
        payload = read_payload(sys.stdin)
        payload.pop(TRANSCRIPT_END, None)  # memgit's own, from a record: never the agent's
        if isinstance(payload.get("cwd"), str):
            cwd = payload["cwd"]
    except BaseException as exc:  # noqa: BLE001 - a hook never breaks the agent's session
        if isinstance(exc, KeyboardInterrupt):
            return 0
        try:
            log(_path(cwd), agent, event, f"{type(exc).__name__}: {exc}")
        except BaseException:  # noqa: BLE001, S110 - nowhere left to say it
            pass
        return 0
    out = None
    if event in warmhooks.EVENTS and not warmhooks.turned_off():
        out = warmhooks.ask(agent, event, payload, cwd)
        warm = out is None  # no server answered: this hook starts one for the next
    if out is None:
        out = answer(agent, event, payload, _path(cwd))
    if out:
        try:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        except OSError:
            pass
    if warm:
        warmhooks.spawn()
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
