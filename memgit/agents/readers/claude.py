"""Claude Code's session transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one
JSON record a line; sub-agents' lines marked as their side chain."""

from __future__ import annotations

from typing import Any

from memgit.agents.events import SHELL_TOOLS, Event, Transcript
from memgit.agents.readers.exitcode import failed
from memgit.agents.readers.noise import user_text
from memgit.agents.readers.questions import ASK_TOOLS, PLAN_TOOLS, choices, feedback, plan
from memgit.agents.readers.reader import Head, Lines, blocks_text, cut, records, stamp
from memgit.agents.readers.toolcall import tool_call

FORMAT = "claude"
_TYPES = {"summary", "user", "assistant", "system", "file-history-snapshot", "ai-title", "custom-title",
          "attachment", "progress", "queue-operation"}
_RECORDS = ("user", "assistant", "system", "summary", "attachment", "progress")
_BOOKKEEPING = ("title", "tag", "snapshot", "operation", "link", "prompt", "mode")  # known, nothing to read


_SHARED = ("user", "assistant", "system", "summary")  # record types other formats use too


def sniff(head: Head) -> bool:
    """A record of one of Claude Code's types; a user or assistant one also carries its `message`,
    `uuid` or `sessionId` (a Gemini CLI recording has `type: user` records and a `sessionId` header)."""
    return any(isinstance(r.get("type"), str) and r["type"] in _TYPES
               and (r["type"] not in _SHARED or "message" in r or "uuid" in r or "leafUuid" in r)
               for r in head.records)


def read(lines: Lines, transcript: Transcript) -> None:
    events = transcript.events
    last_message: tuple[str, int] | None = None  # (message id, index of its text event)
    tools: dict[str, str] = {}  # call id → tool
    asked: dict[str, Any] = {}  # call id → input of a call that put a question or a plan to the user
    for number, record in records(lines, transcript):
        kind = record.get("type")
        if kind not in _RECORDS and kind is not None:
            if not isinstance(kind, str) or not kind.endswith(_BOOKKEEPING):
                transcript.skipped += 1
            continue
        stamp(transcript, record)
        transcript.session_id = transcript.session_id or str(record.get("sessionId") or "")
        transcript.cwd = transcript.cwd or str(record.get("cwd") or "")
        side = bool(record.get("isSidechain"))
        raw = record.get("message")
        message: dict[str, Any] = raw if isinstance(raw, dict) else {}
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if kind == "user":
            if record.get("isCompactSummary"):
                events.append(Event(number, "summary", cut(blocks_text(content)), sidechain=side))
                continue
            if record.get("isMeta"):
                continue
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_result":
                    call_id = str(block.get("tool_use_id") or "")
                    text = blocks_text(block.get("content"))
                    shell = tools.get(call_id) in SHELL_TOOLS
                    error = bool(block.get("is_error")) or (shell and failed(text))
                    events.append(Event(number, "tool_result", cut(text), error=error, call_id=call_id,
                                        sidechain=side))
                    events.extend(_answered(number, tools.get(call_id, ""), asked.pop(call_id, None), text,
                                            record, bool(block.get("is_error")), call_id, side))
                elif block.get("type") == "text":
                    text = user_text(str(block.get("text") or ""))
                    if text:
                        events.append(Event(number, "user", cut(text), sidechain=side))
        elif kind == "assistant":
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    # Streamed blocks of one message share its id: one message, one event.
                    mid = str(message.get("id") or "")
                    if last_message and mid and last_message[0] == mid:
                        i = last_message[1]
                        events[i] = Event(events[i].line, "assistant", events[i].text + "\n" + block["text"],
                                          sidechain=side)
                    else:
                        events.append(Event(number, "assistant", cut(block["text"]), sidechain=side))
                        last_message = (mid, len(events) - 1)
                elif block.get("type") == "tool_use":
                    call = tool_call(number, str(block.get("name") or ""), block.get("input"),
                                     str(block.get("id") or ""), side)
                    tools[call.call_id] = call.tool
                    if call.tool in ASK_TOOLS or call.tool in PLAN_TOOLS:
                        asked[call.call_id] = block.get("input")
                    events.append(call)
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            events.append(Event(number, "summary", "", sidechain=side))


def _answered(number: int, tool: str, data: Any, text: str, record: dict[str, Any], error: bool,
              call_id: str, side: bool) -> list[Event]:
    """What a tool result says the user answered: their choices, the plan they approved or
    rejected, the words they typed when they turned a call down."""
    found: list[Event] = []
    if tool in ASK_TOOLS:
        result = record.get("toolUseResult")
        answers = result.get("answers") if isinstance(result, dict) else None
        notes = result.get("annotations") if isinstance(result, dict) else None
        if isinstance(answers, dict) and isinstance(notes, dict):  # a note typed next to an answer
            answers = {q: {"answer": a, "note": (notes.get(q) or {}).get("notes") if isinstance(notes.get(q), dict)
                           else None} for q, a in answers.items()}
        found += choices(number, tool, data, text, answers, error=error, call_id=call_id, side=side)
    elif tool in PLAN_TOOLS and isinstance(data, dict):
        proposed = plan(number, str(data.get("plan") or ""), text, error=error, side=side)
        found += [proposed] if proposed else []
    said = user_text(feedback(text)) if error or tool in PLAN_TOOLS else ""
    if said:
        found.append(Event(number, "user", cut(said), sidechain=side))
    return found
