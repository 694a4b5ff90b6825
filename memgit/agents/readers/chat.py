"""Markdown and plain-text chat logs: "### Human / ### Assistant", "User: / Assistant:",
"用户：/ 助手：", and Aider's `.aider.chat.history.md` (the user's turns as `#### ` lines, its
tool output as `> ` lines), which a log may mix."""

from __future__ import annotations

import re

from memgit.agents.events import Event, Transcript
from memgit.agents.readers.noise import user_text
from memgit.agents.readers.reader import Head, Lines, cut

FORMAT = "chat"
_CHAT_TURN = re.compile(
    r"^(?:#{1,4}\s*(?P<h>human|user|you|assistant|ai|claude|model|agent)\s*:?\s*$"
    r"|(?P<p>human|user|you|assistant|ai|claude|codex|model|agent|用户|助手)\s*[:：]\s?(?P<rest>.*)"
    r"|#### (?P<aider>.*))$",
    re.I | re.M,
)
_USER_NAMES = {"human", "user", "you", "用户"}


def sniff(head: Head) -> bool:
    return not head.json and bool(_CHAT_TURN.search(head.text))


def read(lines: Lines, transcript: Transcript) -> None:
    role, start, aider = "", 0, False
    buffer: list[str] = []

    def flush() -> None:
        text = "\n".join(buffer).strip()
        if role and text:
            if role == "user":
                text = user_text(text)
            if text:
                transcript.events.append(Event(start, role, cut(text)))

    for number, raw in lines:
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
