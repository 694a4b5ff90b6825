"""The task summary: the goal (the first request), what was changed, how it ended."""

from __future__ import annotations

from collections.abc import Sequence

from memgit.agents.events import EDIT_TOOLS, SHELL_TOOLS, Transcript
from memgit.capture.candidate import Candidate, flat, make_title, relative_paths, shorten


def summarize(transcript: Transcript, base: str, git_files: Sequence[str]) -> Candidate | None:
    users = [e for e in transcript.events if e.role == "user" and not e.sidechain]
    if not users:
        return None
    goal_event = users[0]
    goal = shorten(goal_event.text.strip().splitlines()[0], 160)
    edits = [e for e in transcript.events if e.role == "tool_call" and e.tool in EDIT_TOOLS]
    files = tuple(dict.fromkeys(relative_paths(flat(e.files for e in edits), base) + tuple(git_files)))
    if not files:
        return None  # a conversation that changed nothing has no task to summarise
    symbols = tuple(dict.fromkeys(s for e in edits for s in e.symbols))
    results = [e for e in transcript.events if e.role == "tool_result"]
    calls = {e.call_id: e for e in transcript.events if e.role == "tool_call"}
    last_run = next((r for r in reversed(results) if calls.get(r.call_id) is not None
                     and calls[r.call_id].tool in SHELL_TOOLS), None)
    last_tool = max((i for i, e in enumerate(transcript.events) if e.role == "tool_result"), default=-1)
    final = next((e for e in transcript.events[last_tool + 1:] if e.role == "assistant" and not e.sidechain
                  and len(e.text.split()) >= 3 and not e.text.rstrip().endswith(("?", "？"))), None)
    lines = [f"Goal: {goal}", "Changed: " + ", ".join(files[:12]) + (" …" if len(files) > 12 else "")]
    if symbols:
        lines.append("Functions: " + ", ".join(symbols[:12]))
    if last_run is not None:
        command = shorten(calls[last_run.call_id].command, 80)
        lines.append(f"Last command: `{command}` {'failed' if last_run.error else 'passed'}.")
    if final is not None:
        lines.append("Outcome: " + shorten(final.text.strip().splitlines()[0], 200))
    evidence = (goal_event.line,) + tuple(e.line for e in edits[:20])
    return Candidate("summary", make_title(f"Session: {goal}", 100), "\n".join(lines), "inferred", 0.5,
                     tuple(sorted(set(evidence))), files=files[:20])
