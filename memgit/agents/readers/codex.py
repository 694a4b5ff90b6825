"""Codex's rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): one `{"type", "payload"}`
record a line, older rollouts without `user_message` events included."""

from __future__ import annotations

import json
from typing import Any

from memgit.agents.events import SHELL_TOOLS, Event, Transcript
from memgit.agents.readers.exitcode import failed, unwrap
from memgit.agents.readers.noise import user_text
from memgit.agents.readers.questions import ASK_TOOLS, choices, proposed_plans
from memgit.agents.readers.reader import Head, Lines, blocks_text, cut, records, stamp
from memgit.agents.readers.toolcall import patch_call, tool_call

FORMAT = "codex"
_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def sniff(head: Head) -> bool:
    return any("payload" in r and isinstance(r.get("type"), str) and r["type"] in _TYPES for r in head.records)


def read(lines: Lines, transcript: Transcript) -> None:
    events = transcript.events
    pending_user: list[Event] = []  # response_item copies, used only if no event_msg has them
    user_events = 0
    tools: dict[str, str] = {}  # call id → tool
    asked: dict[str, Any] = {}  # call id → the questions a request_user_input call asked
    for number, record in records(lines, transcript):
        kind, payload = record.get("type"), record.get("payload")
        if not isinstance(kind, str) or kind not in _TYPES or not isinstance(payload, dict):
            transcript.skipped += 1
            continue
        stamp(transcript, record)
        ptype = payload.get("type")
        if kind == "session_meta":
            transcript.session_id = str(payload.get("id") or "")
            transcript.cwd = str(payload.get("cwd") or "")
        elif kind == "compacted":
            events.append(Event(number, "summary", cut(str(payload.get("message") or ""))))
        elif kind == "event_msg" and ptype == "user_message":
            text = user_text(str(payload.get("message") or ""))
            if text:
                events.append(Event(number, "user", cut(text)))
                user_events += 1
        elif kind == "response_item" and ptype == "message":
            text = blocks_text(payload.get("content"))
            if payload.get("role") == "assistant":
                if not _repeats(events, text):
                    events.append(Event(number, "assistant", cut(text)))
                    events.extend(proposed_plans(number, text))
            elif payload.get("role") == "user" and user_text(text):
                pending_user.append(Event(number, "user", cut(user_text(text))))
        elif kind == "event_msg" and ptype == "agent_message":
            text = str(payload.get("message") or "")
            if text and not _repeats(events, text):
                events.append(Event(number, "assistant", cut(text)))
                events.extend(proposed_plans(number, text))
        elif kind == "response_item" and ptype in _CALLS:
            call = _call(number, payload)
            if call is None:  # arguments that are not JSON: a call nobody can say anything of
                transcript.skipped += 1
                continue
            tools[call.call_id] = call.tool
            if call.tool in ASK_TOOLS:
                asked[call.call_id] = _arguments(payload)
            events.append(call)
        elif kind == "response_item" and ptype in _OUTPUTS:
            result = _output(number, payload, tools)
            events.append(result)
            if result.call_id in asked:
                output = unwrap(payload.get("output"))[0]
                events.extend(choices(number, tools[result.call_id], asked.pop(result.call_id),
                                      output if isinstance(output, str) else blocks_text(output),
                                      call_id=result.call_id))
    if not user_events and pending_user:  # an older rollout without user_message events
        events.extend(pending_user)
        events.sort(key=lambda e: e.line)


def _repeats(events: list[Event], text: str) -> bool:
    """Whether the agent's last message (the plans drawn from it aside) is `text`: Codex logs each
    message twice, as a response item and as an event."""
    last = next((e for e in reversed(events) if e.role != "plan"), None)
    return last is not None and last.role == "assistant" and last.text == cut(text)


def _arguments(payload: dict[str, Any]) -> Any:
    try:
        return json.loads(str(payload.get("arguments") or ""))
    except (ValueError, RecursionError):
        return None


def _call(number: int, payload: dict[str, Any]) -> Event | None:
    name = str(payload.get("name") or payload.get("type") or "")
    call_id = str(payload.get("call_id") or "")
    patch_input = isinstance(payload.get("input"), str) and "*** Begin Patch" in payload["input"]
    if name == "apply_patch" or patch_input:
        return patch_call(number, str(payload.get("input") or payload.get("arguments") or ""), call_id)
    data: Any = payload.get("action") if isinstance(payload.get("action"), dict) else payload.get("arguments")
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except (ValueError, RecursionError):
            return None
    if name in ("exec",) and isinstance(payload.get("input"), str):
        data = {"command": payload["input"]}
    return tool_call(number, name if name != "local_shell_call" else "local_shell", data, call_id, False)


def _output(number: int, payload: dict[str, Any], tools: dict[str, str]) -> Event:
    call_id = str(payload.get("call_id") or "")
    output, code = unwrap(payload.get("output"))
    text = output if isinstance(output, str) else blocks_text(output)
    error = (code is not None and code != 0) or (tools.get(call_id) in SHELL_TOOLS and failed(text))
    return Event(number, "tool_result", cut(text), error=error, call_id=call_id)
