"""Markdown and plain-text chat logs: "### Human / ### Assistant", "User: / Assistant:",
"用户：/ 助手：". (Aider's history, with its `#### ` turns, has its own reader.)"""

from __future__ import annotations

import re

from memgit.agents.events import Event, Transcript
from memgit.agents.readers.noise import user_text
from memgit.agents.readers.reader import Head, Lines, cut

FORMAT = "chat"
_CHAT_TURN = re.compile(
    r"^(?:#{1,4}\s*(?P<h>human|user|you|assistant|ai|claude|model|agent)\s*:?\s*$"
    r"|(?P<p>human|user|you|assistant|ai|claude|codex|model|agent|用户|助手)\s*[:：]\s?(?P<rest>.*))$",
    re.I | re.M,
)
_USER_NAMES = {"human", "user", "you", "用户"}


def sniff(head: Head) -> bool:
    return not head.json and bool(_CHAT_TURN.search(head.text))


def read(lines: Lines, transcript: Transcript) -> None:
    role, start = "", 0
    buffer: list[str] = []

    def flush() -> None:
        text = "\n".join(buffer).strip()
        if role == "user":
            text = user_text(text)
        if role and text:
            transcript.events.append(Event(start, role, cut(text)))

    for number, raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        match = _CHAT_TURN.match(line)
        if match:
            name = (match.group("h") or match.group("p") or "").lower()
            flush()
            role = "user" if name in _USER_NAMES else "assistant"
            start, buffer = number, [match.group("rest") or ""]
            continue
        buffer.append(line)
    flush()
