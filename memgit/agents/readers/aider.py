"""Aider's chat history (`.aider.chat.history.md`): a `# aider chat started at …` line per
session, each input as consecutive `#### ` lines, Aider's own output (edits applied, commands
run, commits made) as `> ` lines, and the model's replies as everything else.

Not all `#### ` lines are the user's words: Aider logs there the answers to its own questions
("Add file to the chat? (Y)es/(N)o…"), the prompt its watch mode writes for "AI" comments in
the code (marked with █), and, in architect mode, the architect's reply handed to the editor
model. Those are dropped; so are Aider's commands (`/add`, `/undo`…), which are not rules, except
that `/run CMD` (or `!CMD`) and Aider's `> Running CMD` are commands run, and `> Applied edit to
FILE` an edit. `/ask`, `/code` and `/architect` lose their prefix and keep the user's words."""

from __future__ import annotations

import re

from memgit.agents.events import Transcript
from memgit.agents.readers import chat
from memgit.agents.readers.reader import Head, Lines, Turns

FORMAT = "aider"
_STARTED = re.compile(r"^# aider chat started", re.MULTILINE)
_USER = re.compile(r"^####(?: (.*?))?\s*$")
_CONFIRM = re.compile(r"\(Y\)es/\(N\)o")
_WATCH = "█"  # Aider marks the "AI" comments it quotes in the prompt it writes for them
_MODE = re.compile(r"^/(?:ask|code|architect|context)\s+(?=\S)")
_RUN = re.compile(r"^(?:/run\s+|/test\s+|!)(?P<cmd>\S.*)$")
_COMMAND = re.compile(r"^/[a-z][\w-]*(?:\s|$)")
_RAN = re.compile(r"^> Running (?P<cmd>\S.*?)\s*$")
_APPLIED = re.compile(r"^> Applied edit to (?P<file>\S.*?)\s*$")
_ECHO_MIN = 40  # a shorter input can be inside the reply before it by chance


def sniff(head: Head) -> bool:
    """An Aider history says so on its first line; a fragment of one has only `#### ` turns."""
    if head.json:
        return False
    if _STARTED.search(head.text):
        return True
    return any(_USER.match(line) for line in head.text.splitlines()) and not chat.sniff(head)


def read(lines: Lines, transcript: Transcript) -> None:
    turns = Turns(transcript)
    said: list[tuple[int, str]] = []  # the `#### ` lines of the input being read
    reply = ""  # the model's reply before it, its words joined by single spaces
    for number, raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        turn = _USER.match(line)
        if turn:
            if not said and turns.role == "assistant":
                reply = " ".join(" ".join(turns.lines).split())
            if not said:
                turns.end()
            said.append((number, turn.group(1) or ""))
            continue
        if said:
            _input(turns, said, reply)
            said = []
        if _STARTED.match(line):
            turns.end()
        elif line.startswith(">"):
            ran, applied = _RAN.match(line), _APPLIED.match(line)
            if ran:
                turns.call(number, ran.group("cmd"))
            elif applied:
                turns.edit(number, applied.group("file"))
        elif turns.role != "assistant" and line.strip():
            turns.begin("assistant", number, [line])
        elif turns.role == "assistant":
            turns.add(line)
    if said:
        _input(turns, said, reply)
    turns.end()


def _input(turns: Turns, said: list[tuple[int, str]], reply: str) -> None:
    """One input's `#### ` lines: the user's words, the commands run, or nothing of the user's."""
    text = "\n".join(line for _, line in said).strip()
    flat = " ".join(text.split())
    if any(_WATCH in line for _, line in said):
        return  # the prompt Aider's watch mode wrote
    if len(flat) >= _ECHO_MIN and flat[:300] in reply:
        return  # the architect's reply, handed to the editor model
    words: list[str] = []
    start = 0
    for number, line in said:
        if _CONFIRM.search(line):
            continue
        ran = _RUN.match(line.strip())
        if ran:
            turns.call(number, ran.group("cmd"))
            continue
        mode = _MODE.match(line.strip())
        if mode:
            line = line.strip()[mode.end():]
        elif _COMMAND.match(line.strip()):
            continue
        start = start or number
        words.append(line)
    if any(w.strip() for w in words):
        turns.begin("user", start, words)
        turns.end()
