"""Sessions re-exported as plain messages, one `{"type": "message", "role": …, "content": …}`
record a line (role `user`, `assistant`, `tool` or `system`; `type` may be left out, as in
OpenAI-style chat logs), as tools that strip an agent's session down to what was said write them.
The content is a string, a list of blocks or one block (exports that write a record a block); an
assistant's tool calls are `tool_use`/`toolCall` blocks or an OpenAI-style `tool_calls` list, and
a `tool` message or a `tool_result` block is a call's result."""

from __future__ import annotations

import json
from typing import Any

from memgit.agents.events import SHELL_TOOLS, Event, Transcript
from memgit.agents.readers.exitcode import failed
from memgit.agents.readers.noise import user_text
from memgit.agents.readers.reader import Head, Lines, blocks_text, cut, records, stamp
from memgit.agents.readers.toolcall import tool_call

FORMAT = "export"
_ROLES = ("user", "assistant", "tool", "system")


def sniff(head: Head) -> bool:
    return any(_message(r) and "message" not in r for r in head.records)


def _message(record: dict[str, Any]) -> bool:
    return record.get("type", "message") == "message" and record.get("role") in _ROLES and "content" in record


def read(lines: Lines, transcript: Transcript) -> None:
    events = transcript.events
    tools: dict[str, str] = {}  # call id → tool
    for number, record in records(lines, transcript):
        role, content = record.get("role"), record.get("content")
        if not _message(record):
            transcript.skipped += 1
            continue
        stamp(transcript, record)
        if isinstance(content, dict) and content.get("type") == "tool_result":
            role = "tool"  # an export that writes each block as a record of its own
        if role == "tool":
            block = content if isinstance(content, dict) else {}
            text = blocks_text(block.get("content", block.get("output", content)))
            if not text and isinstance(block.get("output"), str):
                text = block["output"]
            events.append(_result(number, dict(record, **block), text, tools))
            continue
        blocks = (content if isinstance(content, list) else [content] if isinstance(content, dict)
                  else [{"type": "text", "text": blocks_text(content)}])
        for i, block in enumerate(b for b in blocks if isinstance(b, dict)):
            kind = block.get("type")
            if kind == "text" and role in ("user", "assistant"):
                text = str(block.get("text") or "").strip()
                text = user_text(text) if role == "user" else text
                if text:
                    events.append(Event(number, role, cut(text)))
            elif kind in ("tool_use", "toolCall"):
                call = tool_call(number, str(block.get("name") or block.get("tool_name") or ""),
                                 block.get("input", block.get("arguments")),
                                 str(block.get("id") or block.get("tool_id") or f"{number}.{i}"), False)
                tools[call.call_id] = call.tool
                events.append(call)
            elif kind == "tool_result":
                text = blocks_text(block.get("content", block.get("output")))
                events.append(_result(number, block, text, tools))
        calls = record.get("tool_calls")
        for i, raw in enumerate(calls if isinstance(calls, list) else ()):
            function = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(function, dict):
                continue
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except (ValueError, RecursionError):
                    arguments = {}
            call = tool_call(number, str(function.get("name") or ""), arguments,
                             str(raw.get("id") or f"{number}.c{i}"), False)
            tools[call.call_id] = call.tool
            events.append(call)


def _result(number: int, record: dict[str, Any], text: str, tools: dict[str, str]) -> Event:
    call_id = str(record.get("tool_call_id") or record.get("tool_use_id") or record.get("toolCallId")
                  or record.get("tool_id") or "")
    tool = tools.get(call_id) or str(record.get("name") or record.get("tool_name") or "")
    error = bool(record.get("is_error") or record.get("isError")) or (tool in SHELL_TOOLS and failed(text))
    return Event(number, "tool_result", cut(text), error=error, call_id=call_id)
