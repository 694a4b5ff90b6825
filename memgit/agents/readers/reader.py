"""What a transcript reader is (`Reader`), what it sniffs (`Head`), and the reading that the
JSONL readers share: records read leniently, long texts cut, a content's text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from memgit.agents.events import Event, Transcript
from memgit.agents.readers.exitcode import exit_code, failed
from memgit.agents.readers.noise import user_text

TEXT_LIMIT = 6000  # characters kept of one message or tool output (start and end)
LINE_LIMIT = 16 * 1024 * 1024  # a longer record (a pasted dump) is skipped, not parsed

#: What Claude Code writes as the user's turn when it compacts a session (the summary that
#: continues it, the request for one): a Markdown export shows it under a user heading.
_COMPACTION = re.compile(r"\s*(?:This session is being continued from a previous conversation"
                         r"|Your task is to create a detailed summary of the conversation so far)")

#: Output that says it failed, for the logs that keep no exit code (compilers, test runners,
#: interpreters): checked only when the output states no code.
_SAYS_FAILED = re.compile(r"^(?:.*\berror(?:\[E\d+\]| TS\d+)?:|\w*(?:Error|Exception): |ERROR\b|FAIL\b"
                          r"|.*\b[1-9]\d* (?:failed|errors?)\b)", re.MULTILINE)

#: A transcript's lines as read: (1-based number, the line's bytes).
Lines = Iterable[tuple[int, bytes]]


@dataclass(frozen=True)
class Head:
    """The first lines of a file, as a reader sniffs them: `json` when the first line that is
    not blank starts with `{`, and the JSON objects among them that parsed."""

    text: str
    json: bool
    records: tuple[dict[str, Any], ...]


class Reader(Protocol):
    """A transcript format: a module with these three names is one."""

    FORMAT: str  # the name a `Transcript` gives its format

    def sniff(self, head: Head) -> bool:
        """Whether a file that starts with `head` is in this format."""

    def read(self, lines: Lines, transcript: Transcript) -> None:
        """`lines` read into `transcript`: events appended, what could not be read counted
        in `skipped`, never raising for what the file holds."""


def head_of(lines: Iterable[str], records: int = 50) -> Head:
    """The `Head` of a file from its first lines (JSON objects parsed up to `records`)."""
    seen = list(lines)
    found: list[dict[str, Any]] = []
    json_lines = 0
    for line in seen:
        line = line.strip()
        if not line:
            continue
        if not line.startswith("{"):
            if json_lines:
                continue  # a stray line among records
            break
        json_lines += 1
        # a line cut where the head ends gives nothing: the next line may
        found.extend(r for r in _values(line) if isinstance(r, dict))
        if len(found) >= records:
            break
    return Head("\n".join(seen), bool(json_lines), tuple(found))


def records(lines: Lines, transcript: Transcript) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of `lines`; blank lines passed over, anything else counted skipped."""
    for number, raw in lines:
        if not raw.strip():
            continue
        if len(raw) > LINE_LIMIT:
            transcript.skipped += 1
            continue
        values = _values(raw)
        objects = [v for v in values if isinstance(v, dict)]
        transcript.skipped += len(values) - len(objects)  # a torn last line, a stray log line
        for record in objects:
            yield number, record


_TORN = object()  # what of a line is not JSON


def _values(raw: bytes | str) -> list[Any]:
    """The JSON values of one line: one, or several when a write lost the newline between
    records; `_TORN` for a part that does not parse."""
    try:
        return [json.loads(raw)]
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            return [_TORN]
    except (ValueError, RecursionError):
        return [_TORN]
    decoder = json.JSONDecoder()
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    text, at, out = text.strip(), 0, list[Any]()
    while at < len(text):
        try:
            value, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return [*out, _TORN]
        out.append(value)
        while at < len(text) and text[at].isspace():
            at += 1
    return out


def cut(text: str, limit: int = TEXT_LIMIT) -> str:
    """`text`, or its start and end when it is longer than `limit`."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - limit} characters cut …]\n{text[-half:]}"


def blocks_text(content: Any) -> str:
    """The text of a message's content: a string, or the text of its blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(parts)
    return ""


def stamp(transcript: Transcript, record: dict[str, Any]) -> None:
    """The transcript's start and end times, moved on by a record's `timestamp`."""
    when = record.get("timestamp")
    if isinstance(when, str):
        transcript.started = transcript.started or when
        transcript.ended = when


class Turns:
    """The turn a text log is in (its role, first line and lines), ended into an `Event` when
    the next begins: what the Markdown and plain-text readers share. A turn can hold the
    commands it ran (`run`) and the files it edited (`edit`) between its words."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.role, self.start, self.lines, self.sidechain = "", 0, list[str](), False

    def begin(self, role: str, number: int, lines: Iterable[str] = (), *, sidechain: bool = False) -> None:
        self.end()
        self.role, self.start, self.lines, self.sidechain = role, number, list(lines), sidechain

    def add(self, line: str) -> None:
        self.lines.append(line)

    def end(self) -> None:
        text = "\n".join(self.lines).strip()
        role = self.role
        if role == "user" and _COMPACTION.match(text):
            role = "summary"
        elif role == "user":
            text = user_text(text)
        if role and text:
            self.transcript.events.append(Event(self.start, role, cut(text), sidechain=self.sidechain))
        self.role, self.lines = "", []

    def emit(self, event: Event, resume: int) -> None:
        """`event` (a tool call or result) inside the turn: its words so far end before it, and
        the turn goes on from line `resume`."""
        role, sidechain = self.role, self.sidechain
        self.end()
        self.transcript.events.append(event)
        self.role, self.start, self.sidechain = role, resume, sidechain

    def run(self, number: int, command: str, output: str | None = None, *, error: bool = False) -> None:
        """A command the log shows run at line `number`, and what it printed when the log shows
        that (`error` when the log says it failed, whatever the output says)."""
        call_id = self.call(number, command)
        if call_id and output is not None:
            self.result(number, call_id, output, error=error)

    def call(self, number: int, command: str) -> str:
        """A shell call of `command` at line `number`; its call id ("" for no command)."""
        command = command.strip()
        if not command:
            return ""
        call_id = f"run-{number}"
        self.emit(Event(number, "tool_call", cut(command, 2000), tool="Bash", command=command[:2000],
                        call_id=call_id, action="run", target=command[:2000]), number + 1)
        return call_id

    def result(self, number: int, call_id: str, output: str, *, error: bool = False) -> None:
        """What the call `call_id` printed, shown at line `number`."""
        error = error or failed(output) or (exit_code(output) is None and bool(_SAYS_FAILED.search(output)))
        self.emit(Event(number, "tool_result", cut(output), error=error, call_id=call_id), number + 1)

    def edit(self, number: int, path: str, symbols: tuple[str, ...] = ()) -> None:
        """An edit of the file `path` (or of a file the log does not name: "") the log shows at
        line `number`."""
        self.emit(Event(number, "tool_call", path or "an edit", tool="Edit", files=(path,) if path else (),
                        symbols=symbols, call_id=f"edit-{number}", action="edit", target=path), number + 1)
