"""Markdown and plain-text chat logs: "### Human / ### Assistant", "User: / Assistant:",
"用户：/ 助手：". (Aider's history, with its `#### ` turns, has its own reader.)"""

from __future__ import annotations

import re

from memgit.agents.events import Transcript
from memgit.agents.readers.reader import Head, Lines, Turns

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
    turns = Turns(transcript)
    for number, raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        match = _CHAT_TURN.match(line)
        if match:
            name = (match.group("h") or match.group("p") or "").lower()
            turns.begin("user" if name in _USER_NAMES else "assistant", number, [match.group("rest") or ""])
        else:
            turns.add(line)
    turns.end()
