"""Claude Code's session transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one
JSON record a line; sub-agents' lines marked as their side chain."""

from __future__ import annotations

from typing import Any

from memgit.agents.events import SHELL_TOOLS, Event, Transcript
from memgit.agents.readers.exitcode import failed
from memgit.agents.readers.noise import user_text
from memgit.agents.readers.reader import Head, Lines, blocks_text, cut, records, stamp
from memgit.agents.readers.toolcall import tool_call

FORMAT = "claude"
_TYPES = {"summary", "user", "assistant", "system", "file-history-snapshot", "ai-title", "custom-title",
          "attachment", "progress", "queue-operation"}
_RECORDS = ("user", "assistant", "system", "summary", "attachment", "progress")
_BOOKKEEPING = ("title", "tag", "snapshot", "operation", "link", "prompt")  # known, nothing to read


def sniff(head: Head) -> bool:
    return any("sessionId" in r or "uuid" in r or r.get("type") in _TYPES for r in head.records)


def read(lines: Lines, transcript: Transcript) -> None:
    events = transcript.events
    last_message: tuple[str, int] | None = None  # (message id, index of its text event)
    tools: dict[str, str] = {}  # call id → tool
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
                    events.append(call)
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            events.append(Event(number, "summary", "", sidechain=side))
