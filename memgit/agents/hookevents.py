"""What one agent hook event does in a session (`memgit.hookrun` parses the payload, prints
the answer and fails open):

- `session-start`: a new session (or `/clear`) starts its state anew; pinned memories, the
  task's checkpoint and relevant memories are given (`memgit.agents.briefing`), after a
  compaction the checkpoint first and the known set emptied;
- `user-prompt`: memories relevant to the prompt that the session does not hold yet;
- `pre-compact`: the task's checkpoint (`memgit.agents.checkpoint`);
- `session-end` and `stop`: the session recorded and the extractor started
  (`memgit.agents.handoff`).

The session's state (`memgit.agents.known`) is loaded first and saved last.
"""

from __future__ import annotations

from typing import Any

from memgit.agents import briefing, known, taskid
from memgit.errors import MemgitError
from memgit.git import localstate, repostate
from memgit.index.workspace import Workspace

EVENTS = ("session-start", "user-prompt", "pre-compact", "session-end", "stop")


def handle(ws: Workspace, agent: str, event: str, session_id: str, payload: dict[str, Any]) -> str:
    """The text to give the agent for `event` ("" for nothing); raises on any problem."""
    with repostate.held():  # no event moves HEAD: git is asked for it and the branch once
        return _handle(ws, agent, event, session_id, payload)


def _handle(ws: Workspace, agent: str, event: str, session_id: str, payload: dict[str, Any]) -> str:
    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}")
    ws.require_store()
    if ws.repo is None:
        raise MemgitError(f"{ws.memory_dir} is not in a git repository: a session's state lives in its git dir")
    git_dir, root = ws.repo.git_dir, ws.repo.root
    transcript = payload.get("transcript_path") if isinstance(payload.get("transcript_path"), str) else None
    state = known.load(git_dir, session_id)
    source = str(payload.get("source") or "")
    if state is None or (event == "session-start" and source in ("startup", "clear")):
        state = known.SessionState(
            session_id,
            agent,
            taskid.task_for(root, session_id=session_id),
            repostate.head(root),
            transcript,
            localstate.stamp(),
        )
        known.prune(git_dir)
    state.transcript = transcript or state.transcript
    out = ""
    if event == "session-start":
        if source == "compact":
            state.known = []  # the compaction took them out of the agent's context
        given = briefing.session_start(ws, task=state.task, known=state.known, compact=source == "compact")
        state.add([h.id for h in given.hits])
        note = "" if source == "compact" else briefing.pending_note(ws)
        out = given.text + ("\n" if given.text and note else "") + note
    elif event == "user-prompt":
        prompt = str(payload.get("prompt") or "")
        if prompt.strip():
            given = briefing.for_prompt(ws, prompt, task=state.task, known=state.known)
            state.add([h.id for h in given.hits])
            out = given.text
    elif event == "pre-compact":
        from memgit.agents import checkpoint  # transcript readers: only the event that writes one

        end = payload.get("memgit_transcript_end")  # set by memgit.hookrun for an event it handed off
        checkpoint.write(ws, task=state.task, start_commit=state.start_commit, transcript=state.transcript,
                         transcript_end=end if isinstance(end, int) and not isinstance(end, bool) else None)
    else:
        from memgit.agents import handoff  # only the events that end a session

        handoff.end_session(ws, state, agent=agent, reason=str(payload.get("reason") or event))
    known.save(git_dir, state)
    return out
