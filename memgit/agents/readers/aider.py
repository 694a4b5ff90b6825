"""Aider's chat history (`.aider.chat.history.md`): a `# aider chat started at …` line per
session, the user's turns as `#### ` lines, Aider's own output (edits applied, commits made)
as `> ` lines, and the model's replies as everything else."""

from __future__ import annotations

import re

from memgit.agents.events import Event, Transcript
from memgit.agents.readers import chat
from memgit.agents.readers.noise import user_text
from memgit.agents.readers.reader import Head, Lines, cut

FORMAT = "aider"
_STARTED = re.compile(r"^# aider chat started", re.M)
_USER = re.compile(r"^#### (.*)$")


def sniff(head: Head) -> bool:
    """An Aider history says so on its first line; a fragment of one has only `#### ` turns."""
    if head.json:
        return False
    if _STARTED.search(head.text):
        return True
    return any(_USER.match(line) for line in head.text.splitlines()) and not chat.sniff(head)


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
        turn = _USER.match(line)
        if turn:
            if role != "user":
                flush()
                role, start, buffer = "user", number, []
            buffer.append(turn.group(1).rstrip())
        elif _STARTED.match(line):
            flush()
            role, buffer = "", []
        elif line.startswith("> "):
            continue  # Aider's tool output and confirmations
        elif role == "user" and line.strip():
            # A user turn is only `#### ` lines; the next other line is the reply.
            flush()
            role, start, buffer = "assistant", number, [line]
        else:
            buffer.append(line)
    flush()
