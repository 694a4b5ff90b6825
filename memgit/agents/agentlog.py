"""An agent's transcript as a checkpoint reads it: the user's requests, the agent's stated
plans, and its actions (files read and changed, commands run, jobs delegated), each failed one
with the line that says why. A view over `memgit.agents.transcripts.tail`: the main session
only (sub-agents' side chains left out), the last few megabytes of a long file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memgit.agents import transcripts
from memgit.agents.events import Transcript
from memgit.agents.readers.exitcode import first_line


@dataclass
class Action:
    kind: str  # read, edit, run, delegate, other
    target: str
    error: str | None = None


@dataclass
class Log:
    prompts: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)


def read(path: str | Path | None, end: int | None = None) -> Log:
    """The transcript at `path` (its first `end` bytes if given); an empty Log when it is
    missing or unreadable."""
    transcript = transcripts.tail(path, end=end) if path else None
    return view(transcript) if transcript is not None else Log()


def view(transcript: Transcript) -> Log:
    """What a checkpoint reads of `transcript`."""
    log = Log()
    calls: dict[str, Action] = {}
    for event in transcript.events:
        if event.sidechain:
            continue
        if event.role == "user":
            log.prompts.append(event.text)
        elif event.role == "assistant" and event.text.strip():
            log.said.append(event.text.strip())
        elif event.role == "tool_call":
            target = first_line(event.target) if event.action in ("run", "delegate") else event.target
            action = Action(event.action, target)
            log.actions.append(action)
            if event.call_id:
                calls[event.call_id] = action
        elif event.role == "tool_result" and event.error and event.call_id in calls:
            calls[event.call_id].error = first_line(event.text or "error")
    return log
