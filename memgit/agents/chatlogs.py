"""Chat logs that are not Claude Code or Codex JSONL: Markdown and plain-text logs
("### Human / ### Assistant", "User: / Assistant:", "用户：/ 助手：", Aider's
`.aider.chat.history.md`), and Cursor's agent transcripts (JSONL lines
`{"role": "user"|"assistant", "message": {"content": [...]}}`, the user's words inside
`<user_query>`). Read into the same events as `memgit.agents.transcripts`.
"""

from __future__ import annotations

import re
from pathlib import Path

from memgit.agents.events import Event, Transcript, _blocks_text, _cut, _records, _tool_call, _user_text
from memgit.agents.sessionfiles import open_regular


def looks_like_chat(head: str) -> bool:
    return bool(_CHAT_TURN.search(head))


def read_cursor(path: Path, transcript: Transcript) -> None:
    for number, record in _records(path, transcript):
        role = record.get("role")
        message = record.get("message")
        if role not in ("user", "assistant") or not isinstance(message, dict):
            transcript.skipped += 1
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": _blocks_text(content)}]
        for i, block in enumerate(b for b in blocks if isinstance(b, dict)):
            if block.get("type") == "tool_use":
                transcript.events.append(_tool_call(number, str(block.get("name") or ""), block.get("input"),
                                                    f"{number}.{i}", False))
            elif block.get("type") == "text" and isinstance(block.get("text"), str):
                text = block["text"]
                if role == "user":
                    query = _QUERY.search(text)
                    text = _user_text(query.group(1) if query else text)
                if text.strip():
                    transcript.events.append(Event(number, role, _cut(text.strip())))


_QUERY = re.compile(r"<user_query>(.*?)</user_query>", re.S)


_CHAT_TURN = re.compile(
    r"^(?:#{1,4}\s*(?P<h>human|user|you|assistant|ai|claude|model|agent)\s*:?\s*$"
    r"|(?P<p>human|user|you|assistant|ai|claude|codex|model|agent|用户|助手)\s*[:：]\s?(?P<rest>.*)"
    r"|#### (?P<aider>.*))$",
    re.I | re.M,
)
_USER_NAMES = {"human", "user", "you", "用户"}


def read_chat(path: Path, transcript: Transcript) -> None:
    role, start, aider = "", 0, False
    buffer: list[str] = []

    def flush() -> None:
        text = "\n".join(buffer).strip()
        if role and text:
            if role == "user":
                text = _user_text(text)
            if text:
                transcript.events.append(Event(start, role, _cut(text)))

    with open_regular(path) as handle:
        for number, raw in enumerate(handle, 1):
            transcript.lines = number
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            match = _CHAT_TURN.match(line)
            if match and match.group("aider") is not None:
                if not (role == "user" and aider):
                    flush()
                    role, start, buffer, aider = "user", number, [], True
                buffer.append(match.group("aider").rstrip())
                continue
            if match:
                name = (match.group("h") or match.group("p") or "").lower()
                flush()
                role, aider = ("user" if name in _USER_NAMES else "assistant"), False
                start, buffer = number, [match.group("rest") or ""]
                continue
            if line.startswith("# aider chat started"):
                flush()
                role, buffer, aider = "", [], False
                continue
            if line.startswith("> ") and aider:
                continue  # Aider's tool output and confirmations
            if aider and role == "user" and line.strip():
                # In Aider's log a user turn is only `#### ` lines; the next other line is the reply.
                flush()
                role, start, buffer = "assistant", number, []
            buffer.append(line)
    flush()
