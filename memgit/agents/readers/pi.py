"""pi's sessions (`~/.pi/agent/sessions/<folder>/<time>_<id>.jsonl`): a `{"type": "session"}`
header (with a `version` from v2 on), then one entry a line. A `message` entry holds a user,
assistant or `toolResult` message (assistant content is text, thinking and `toolCall` blocks), or a
command the user ran themselves (`bashExecution`, with its exit code); `compaction` and
`branch_summary` entries summarise what came before. Model and thinking-level changes, labels,
extension state, the messages extensions inject and the body of a skill the user invoked are
known and passed over.

An ask tool's answers (pi's ask and questionnaire extensions) become `choice` events."""

from __future__ import annotations

import re
from typing import Any

from memgit.agents.events import SHELL_TOOLS, Event, Transcript
from memgit.agents.readers.exitcode import code_of, exit_code, failed
from memgit.agents.readers.noise import user_text
from memgit.agents.readers.questions import ASK_TOOLS, choices
from memgit.agents.readers.reader import Head, Lines, blocks_text, cut, records, stamp
from memgit.agents.readers.toolcall import tool_call

FORMAT = "pi"
_PASSED = ("model_change", "thinking_level_change", "label", "session_info", "custom", "custom_message")
_SUMMARIES = ("compaction", "branch_summary")
_QUIET = ("custom", "hookMessage", "branchSummary", "compactionSummary")  # roles nobody typed
#: A skill's body pi puts into the user's message when they invoke `/skill:name`; what follows it
#: is what they typed.
_SKILL = re.compile(r"<skill name=\"[^\"]*\"[^>]*>.*?</skill>\s*", re.DOTALL)


def sniff(head: Head) -> bool:
    """The session header, or (in the tail a hook reads) an entry of the id/parentId tree."""
    return any((r.get("type") == "session" and isinstance(r.get("id"), str) and "cwd" in r)
               or (r.get("type") == "message" and "parentId" in r and isinstance(r.get("message"), dict))
               for r in head.records)


def read(lines: Lines, transcript: Transcript) -> None:
    events = transcript.events
    asked: dict[str, Any] = {}  # call id → arguments of an ask tool's call
    for number, record in records(lines, transcript):
        kind = record.get("type")
        stamp(transcript, record)
        if kind == "session":
            transcript.session_id = transcript.session_id or str(record.get("id") or "")
            transcript.cwd = transcript.cwd or str(record.get("cwd") or "")
        elif kind in _SUMMARIES:
            events.append(Event(number, "summary", cut(str(record.get("summary") or ""))))
        elif kind == "message" and isinstance(record.get("message"), dict):
            _message(number, record["message"], transcript, asked)
        elif kind not in _PASSED:
            transcript.skipped += 1


def _message(number: int, message: dict[str, Any], transcript: Transcript, asked: dict[str, Any]) -> None:
    events, role, content = transcript.events, message.get("role"), message.get("content")
    if role == "user":
        text = user_text(_SKILL.sub("", blocks_text(content)))
        if text:
            events.append(Event(number, "user", cut(text)))
    elif role == "assistant":
        for block in content if isinstance(content, list) else [{"type": "text", "text": blocks_text(content)}]:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and str(block.get("text") or "").strip():
                events.append(Event(number, "assistant", cut(str(block["text"]).strip())))
            elif block.get("type") == "toolCall":
                call = tool_call(number, str(block.get("name") or ""), block.get("arguments"),
                                 str(block.get("id") or ""), False)
                if call.tool in ASK_TOOLS:
                    asked[call.call_id] = block.get("arguments")
                events.append(call)
    elif role == "toolResult":
        _result(number, message, transcript, asked)
    elif role == "bashExecution":  # a command the user ran with `!`: its call and its result
        command = str(message.get("command") or "")
        events.append(tool_call(number, "bash", {"command": command}, f"{number}.user", False))
        output = str(message.get("output") or "")
        code = code_of(message.get("exitCode"))
        error = bool(message.get("cancelled")) or (code != 0 if code is not None else failed(output))
        events.append(Event(number, "tool_result", cut(output), error=error, call_id=f"{number}.user"))
    elif role not in _QUIET:
        transcript.skipped += 1


def _result(number: int, message: dict[str, Any], transcript: Transcript, asked: dict[str, Any]) -> None:
    call_id, tool = str(message.get("toolCallId") or ""), str(message.get("toolName") or "")
    text = blocks_text(message.get("content"))
    raw = message.get("details")
    details: dict[str, Any] = raw if isinstance(raw, dict) else {}
    code = code_of(details.get("exitCode"))
    code = exit_code(text) if code is None else code
    error = bool(message.get("isError")) or (code is not None and code != 0) \
        or (code is None and tool in SHELL_TOOLS and failed(text))
    transcript.events.append(Event(number, "tool_result", cut(text), error=error, call_id=call_id))
    if call_id in asked:
        transcript.events.extend(choices(number, tool, asked.pop(call_id), text, details.get("answers"),
                                         error=bool(message.get("isError") or details.get("cancelled")),
                                         call_id=call_id))
