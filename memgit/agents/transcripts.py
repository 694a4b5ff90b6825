"""Agent session transcripts, read into one list of events whatever agent wrote them.

Claude Code JSONL (`~/.claude/projects/<project>/<session>.jsonl`), Codex rollout JSONL
(`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), and Markdown or plain-text chat logs
("### Human / ### Assistant", Aider's `.aider.chat.history.md`, "User: / Assistant:").

Reading is lenient and streaming: a malformed line or an unknown record type is skipped and
counted, never fatal; a huge tool output is cut to its start and end. Only a file that is no
transcript at all (empty, binary, another format, too large) is refused with a message.
Pure: standard library only; the one I/O is reading the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from memgit.agents import chatlogs
from memgit.agents.events import (
    Event,
    Transcript,
    _blocks_text,
    _cut,
    _records,
    _symbols,
    _tool_call,
    _user_text,
)
from memgit.agents.sessionfiles import open_regular
from memgit.errors import MemgitError

MAX_BYTES = 64 * 1024 * 1024  # a year of daily sessions is far below; more is not a transcript
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
_EXIT = re.compile(r"(?:exit code:?|exited with code|exit status)\s*(-?\d+)", re.I)


def read(path: str | Path) -> Transcript:
    """The transcript at `path`, or a MemgitError saying why it is not one."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise MemgitError(f"cannot read {path}: {exc.strerror or exc}") from None
    if path.is_dir():
        raise MemgitError(f"{path} is a folder; give a transcript file")
    if not path.is_file():
        raise MemgitError(f"{path} is not a regular file (a device, a FIFO or a socket); "
                          "give a transcript file")
    if size == 0:
        raise MemgitError(f"{path} is empty: no session to capture")
    if size > MAX_BYTES:
        raise MemgitError(f"{path} is {size // 2**20} MB, over the {MAX_BYTES // 2**20} MB a transcript may "
                          "have; "
                          "nothing was read")
    try:
        with open_regular(path) as handle:
            head = handle.read(8192)
    except OSError as exc:
        raise MemgitError(f"cannot read {path}: {exc.strerror or exc}") from None
    if b"\0" in head:
        raise MemgitError(f"{path} is a binary file, not a transcript")
    kind = _sniff(head.decode("utf-8", "replace"))
    if kind == "torn":
        raise MemgitError(f"{path} is not a transcript: no line of it is complete JSON (was it cut off?)")
    if kind is None:
        raise MemgitError(f"{path} is not a transcript memgit reads (Claude Code or Codex JSONL, "
                          "a Markdown or plain-text chat log)")
    transcript = Transcript(str(path), kind)
    if kind in ("chat", "cursor"):
        (chatlogs.read_chat if kind == "chat" else chatlogs.read_cursor)(path, transcript)
    else:
        (_claude if kind == "claude" else _codex)(path, transcript)
    if not transcript.events:
        raise MemgitError(f"{path} holds no messages ({transcript.skipped} lines skipped)")
    return transcript


def _sniff(head: str) -> str | None:
    json_lines = parsed = 0
    for line in head.splitlines():
        line = line.strip()
        if not line:
            continue
        if not line.startswith("{"):
            if json_lines:
                continue  # a stray line among records
            break
        json_lines += 1
        try:
            record = json.loads(line)
        except ValueError:
            continue  # maybe cut at 8 KB: try the next line
        parsed += 1
        if not isinstance(record, dict):
            return None
        if "payload" in record and record.get("type") in _CODEX_TYPES:
            return "codex"
        if "sessionId" in record or "uuid" in record or record.get("type") in _CLAUDE_TYPES:
            return "claude"
        if record.get("role") in ("user", "assistant") and isinstance(record.get("message"), dict):
            return "cursor"
    if json_lines:
        return "torn" if parsed == 0 else None
    return "chat" if chatlogs.looks_like_chat(head) else None


_CLAUDE_TYPES = {"summary", "user", "assistant", "system", "file-history-snapshot", "ai-title",
                 "custom-title",
                 "attachment", "progress", "queue-operation"}


def _stamp(transcript: Transcript, record: dict[str, Any]) -> None:
    stamp = record.get("timestamp")
    if isinstance(stamp, str):
        transcript.started = transcript.started or stamp
        transcript.ended = stamp


# -- Claude Code ------------------------------------------------------------------------------

_CLAUDE_RECORDS = ("user", "assistant", "system", "summary", "attachment", "progress")
_CLAUDE_BOOKKEEPING = ("title", "tag", "snapshot", "operation", "link", "prompt")  # known, nothing to read


def _claude(path: Path, transcript: Transcript) -> None:
    events = transcript.events
    last_message: tuple[str, int] | None = None  # (message id, index of its text event)
    for number, record in _records(path, transcript):
        kind = record.get("type")
        if kind not in _CLAUDE_RECORDS and kind is not None:
            if not isinstance(kind, str) or not kind.endswith(_CLAUDE_BOOKKEEPING):
                transcript.skipped += 1
            continue
        _stamp(transcript, record)
        transcript.session_id = transcript.session_id or str(record.get("sessionId") or "")
        transcript.cwd = transcript.cwd or str(record.get("cwd") or "")
        side = bool(record.get("isSidechain"))
        raw = record.get("message")
        message: dict[str, Any] = raw if isinstance(raw, dict) else {}
        content = message.get("content")
        if kind == "user":
            if record.get("isCompactSummary"):
                events.append(Event(number, "summary", _cut(_blocks_text(content)), sidechain=side))
                continue
            if record.get("isMeta"):
                continue
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_result":
                    text = _blocks_text(block.get("content"))
                    error = bool(block.get("is_error")) or _failed(text)
                    events.append(Event(number, "tool_result", _cut(text), error=error,
                                        call_id=str(block.get("tool_use_id") or ""), sidechain=side))
                elif block.get("type") == "text":
                    text = _user_text(str(block.get("text") or ""))
                    if text:
                        events.append(Event(number, "user", _cut(text), sidechain=side))
        elif kind == "assistant":
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    # Streamed blocks of one message share its id: one message, one event.
                    mid = str(message.get("id") or "")
                    if last_message and mid and last_message[0] == mid:
                        i = last_message[1]
                        events[i] = Event(events[i].line, "assistant", events[i].text + "\n" + block["text"],
                                          sidechain=side)
                    else:
                        events.append(Event(number, "assistant", _cut(block["text"]), sidechain=side))
                        last_message = (mid, len(events) - 1)
                elif block.get("type") == "tool_use":
                    events.append(_tool_call(number, str(block.get("name") or ""), block.get("input"),
                                             str(block.get("id") or ""), side))
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            events.append(Event(number, "summary", "", sidechain=side))


def _failed(text: str) -> bool:
    code = _EXIT.search(text[:400])
    if code:
        return code.group(1) != "0"
    return bool(_FAILURE.search(text))


_FAILURE = re.compile(r"^(Traceback \(most recent call last\)|FAILED |fatal: |error: |npm ERR!)", re.M)


# -- Codex ------------------------------------------------------------------------------------

_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}


def _codex(path: Path, transcript: Transcript) -> None:
    events = transcript.events
    pending_user: list[Event] = []  # response_item copies, used only if no event_msg has them
    user_events = 0
    for number, record in _records(path, transcript):
        kind, payload = record.get("type"), record.get("payload")
        if kind not in _CODEX_TYPES or not isinstance(payload, dict):
            transcript.skipped += 1
            continue
        _stamp(transcript, record)
        ptype = payload.get("type")
        if kind == "session_meta":
            transcript.session_id = str(payload.get("id") or "")
            transcript.cwd = str(payload.get("cwd") or "")
        elif kind == "compacted":
            events.append(Event(number, "summary", _cut(str(payload.get("message") or ""))))
        elif kind == "event_msg" and ptype == "user_message":
            text = _user_text(str(payload.get("message") or ""))
            if text:
                events.append(Event(number, "user", _cut(text)))
                user_events += 1
        elif kind == "response_item" and ptype == "message":
            text = _blocks_text(payload.get("content"))
            if payload.get("role") == "assistant":
                if not (events and events[-1].role == "assistant" and events[-1].text == text):
                    events.append(Event(number, "assistant", _cut(text)))
            elif payload.get("role") == "user" and _user_text(text):
                pending_user.append(Event(number, "user", _cut(_user_text(text))))
        elif kind == "event_msg" and ptype == "agent_message":
            text = str(payload.get("message") or "")
            if text and not (events and events[-1].role == "assistant" and events[-1].text == text):
                events.append(Event(number, "assistant", _cut(text)))
        elif kind == "response_item" and ptype in ("function_call", "custom_tool_call", "local_shell_call"):
            events.append(_codex_call(number, payload))
        elif kind == "response_item" and ptype in ("function_call_output", "custom_tool_call_output"):
            events.append(_codex_output(number, payload))
    if not user_events and pending_user:  # an older rollout without user_message events
        events.extend(pending_user)
        events.sort(key=lambda e: e.line)


def _codex_call(number: int, payload: dict[str, Any]) -> Event:
    name = str(payload.get("name") or payload.get("type") or "")
    call_id = str(payload.get("call_id") or "")
    patch_input = isinstance(payload.get("input"), str) and "*** Begin Patch" in payload["input"]
    if name == "apply_patch" or patch_input:
        patch = str(payload.get("input") or payload.get("arguments") or "")
        files = tuple(dict.fromkeys(f.strip() for f in _PATCH_FILE.findall(patch)))
        return Event(number, "tool_call", _cut(patch, 2000), tool="apply_patch", files=files,
                     symbols=_symbols(patch), call_id=call_id)
    data: Any = payload.get("action") if isinstance(payload.get("action"), dict) else payload.get("arguments")
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            data = {"command": data}
    if name in ("exec",) and isinstance(payload.get("input"), str):
        data = {"command": payload["input"]}
    return _tool_call(number, name if name != "local_shell_call" else "local_shell", data, call_id, False)


def _codex_output(number: int, payload: dict[str, Any]) -> Event:
    output = payload.get("output")
    error = False
    if isinstance(output, str) and output.startswith("{"):
        try:
            wrapped = json.loads(output)
            if isinstance(wrapped, dict):
                code = (wrapped.get("metadata") or {}).get("exit_code")
                error = isinstance(code, int) and code != 0
                output = wrapped.get("output", output)
        except ValueError:
            pass
    text = output if isinstance(output, str) else _blocks_text(output)
    return Event(number, "tool_result", _cut(text), error=error or _failed(text),
                 call_id=str(payload.get("call_id") or ""))
