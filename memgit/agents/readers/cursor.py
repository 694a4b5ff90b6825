"""Cursor's agent transcripts: JSONL lines `{"role": "user"|"assistant", "message":
{"content": [...]}}`, the user's words inside `<user_query>`."""

from __future__ import annotations

import re

from memgit.agents.events import Event, Transcript
from memgit.agents.readers.noise import user_text
from memgit.agents.readers.reader import Head, Lines, blocks_text, cut, records
from memgit.agents.readers.toolcall import tool_call

FORMAT = "cursor"
_QUERY = re.compile(r"<user_query>(.*?)</user_query>", re.S)


def sniff(head: Head) -> bool:
    return any(r.get("role") in ("user", "assistant") and isinstance(r.get("message"), dict)
               for r in head.records)


def read(lines: Lines, transcript: Transcript) -> None:
    for number, record in records(lines, transcript):
        role = record.get("role")
        message = record.get("message")
        if role not in ("user", "assistant") or not isinstance(message, dict):
            transcript.skipped += 1
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": blocks_text(content)}]
        for i, block in enumerate(b for b in blocks if isinstance(b, dict)):
            if block.get("type") == "tool_use":
                transcript.events.append(tool_call(number, str(block.get("name") or ""), block.get("input"),
                                                   f"{number}.{i}", False))
            elif block.get("type") == "text" and isinstance(block.get("text"), str):
                text = block["text"]
                if role == "user":
                    query = _QUERY.search(text)
                    text = user_text(query.group(1) if query else text)
                if text.strip():
                    transcript.events.append(Event(number, role, cut(text.strip())))
