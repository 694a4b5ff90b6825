"""The events of an agent's session, whatever agent wrote them, and the reading that every
transcript reader shares: JSONL records read leniently, long texts cut, a tool call's files
and symbols. `memgit.agents.transcripts` (Claude Code, Codex) and `memgit.agents.chatlogs`
(Markdown and plain-text chat logs, Cursor) read into these."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from memgit.agents.sessionfiles import open_regular

TEXT_LIMIT = 6000  # characters kept of one message or tool output (start and end)
LINE_LIMIT = 16 * 1024 * 1024  # a longer record (a pasted dump) is skipped, not parsed

#: Tools whose input names a file they change.
EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit", "StrReplace", "apply_patch", "write_file",
              "replace"}
SHELL_TOOLS = {"Bash", "shell", "exec_command", "local_shell", "exec", "Shell", "run_shell_command"}

#: User text that the agent, not the person, put there.
_NOISE = re.compile(
    r"\s*(<local-command-stdout>|<command-name>|<command-message>|<session-start-hook>|<tick>|<goal>"
    r"|<environment_context>|<user_instructions>|<task-notification>|\[Request interrupted|Caveat:"
    r"|# AGENTS\.md|<ide_opened_file>|<ide_selection>|<bash-input>|<bash-stdout>|<bash-stderr>)"
)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_SYMBOL_DEF = re.compile(
    r"^[+\- ]?\s*(?:async\s+)?(?:def|class|function|func|fn)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)
_HUNK_CONTEXT = re.compile(r"^@@.*?(?:def|class|function|func|fn)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


@dataclass(frozen=True)
class Event:
    """One thing that happened: `role` is user, assistant, tool_call, tool_result or summary.

    `line` is the 1-based line of the transcript it came from (evidence for a reviewer).
    A tool call carries its `tool`, the `command` it ran and the `files`/`symbols` it edited;
    a tool result says whether it was an `error`.
    """

    line: int
    role: str
    text: str = ""
    tool: str = ""
    command: str = ""
    files: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    error: bool = False
    call_id: str = ""
    sidechain: bool = False


@dataclass
class Transcript:
    path: str
    format: str
    events: list[Event] = field(default_factory=list)
    skipped: int = 0  # malformed lines and unknown records
    lines: int = 0
    session_id: str = ""
    cwd: str = ""
    started: str = ""
    ended: str = ""

    @property
    def edited_files(self) -> list[str]:
        seen: dict[str, None] = {}
        for event in self.events:
            if event.role == "tool_call" and event.tool in EDIT_TOOLS:
                seen.update(dict.fromkeys(event.files))
        return list(seen)


# -- reading lines ---------------------------------------------------------------------------

def _records(path: Path, transcript: Transcript) -> Iterator[tuple[int, dict[str, Any]]]:
    with open_regular(path) as handle:
        for number, raw in enumerate(handle, 1):
            transcript.lines = number
            if not raw.strip():
                continue
            if len(raw) > LINE_LIMIT:
                transcript.skipped += 1
                continue
            try:
                record = json.loads(raw)
            except ValueError:  # a torn last line, a stray log line
                transcript.skipped += 1
                continue
            if isinstance(record, dict):
                yield number, record
            else:
                transcript.skipped += 1


def _cut(text: str, limit: int = TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - limit} characters cut …]\n{text[-half:]}"


def _blocks_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(parts)
    return ""


def _user_text(text: str) -> str:
    text = _REMINDER.sub("", text).strip()
    return "" if not text or _NOISE.match(text) else text


def _symbols(*texts: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for text in texts:
        for rx in (_HUNK_CONTEXT, _SYMBOL_DEF):
            found.update(dict.fromkeys(rx.findall(text or "")))
    return tuple(found)


def _tool_call(number: int, name: str, data: Any, call_id: str, side: bool) -> Event:
    data = data if isinstance(data, dict) else {}
    files: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    command = ""
    if name in EDIT_TOOLS:
        target = data.get("file_path") or data.get("path") or data.get("notebook_path")
        files = (str(target),) if target else ()
        edits = data.get("edits") if isinstance(data.get("edits"), list) else [data]
        texts = [str(e.get(k) or "") for e in edits if isinstance(e, dict)
                 for k in ("old_string", "new_string", "content", "contents")]
        symbols = _symbols(*texts)
    else:
        raw = data.get("command") or data.get("cmd") or ""
        if isinstance(raw, list):
            command = " ".join(map(str, raw[2:] if raw[:2] == ["bash", "-lc"] else raw))
        else:
            command = str(raw)
    return Event(number, "tool_call", _cut(command, 2000), tool=name, command=command[:2000], files=files,
                 symbols=symbols, call_id=call_id, sidechain=side)
