"""Aider's chat history (`.aider.chat.history.md`): a `# aider chat started at …` line per
session, the user's turns as `#### ` lines, Aider's own output (edits applied, commits made)
as `> ` lines, and the model's replies as everything else."""

from __future__ import annotations

import re

from memgit.agents.events import Transcript
from memgit.agents.readers import chat
from memgit.agents.readers.reader import Head, Lines, Turns

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
    turns = Turns(transcript)
    for number, raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        turn = _USER.match(line)
        if turn:
            if turns.role != "user":
                turns.begin("user", number)
            turns.add(turn.group(1).rstrip())
        elif _STARTED.match(line):
            turns.end()
        elif line.startswith("> "):
            continue  # Aider's tool output and confirmations
        elif turns.role == "user" and line.strip():
            turns.begin("assistant", number, [line])  # a user turn is only `#### ` lines
        else:
            turns.add(line)
    turns.end()
