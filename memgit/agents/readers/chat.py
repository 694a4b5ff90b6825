"""Markdown and plain-text chat logs: "### Human / ### Assistant", "## User (02:56 UTC)",
"User: / Assistant:", "用户：/ 助手：", and the Markdown session exports that write tools
between the turns (`**Tool call:** `Bash`` or `🔧 **Tool Use: Bash**` with its input as a JSON
block, `**Tool result:**` with the output as a code block, under either heading): a tool result
under a user heading is the tool's output, not the user's words. (Aider's history, with its
`#### ` turns, has its own reader.)"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Any

from memgit.agents.events import Transcript
from memgit.agents.readers import questions
from memgit.agents.readers.markdown import FENCE, json_call
from memgit.agents.readers.reader import Head, Lines, Turns

FORMAT = "chat"
_NAMES = r"human|user|you|assistant|ai|claude|model|agent"
_CHAT_TURN = re.compile(
    rf"^(?:#{{1,4}}\s*(?:[^\w\s#]{{1,3}}\s*)?(?P<h>{_NAMES})\s*(?:\([^)\n]*\))?\s*:?\s*$"
    rf"|(?P<p>{_NAMES}|codex|用户|助手)\s*[:：]\s?(?P<rest>.*))$",
    re.IGNORECASE | re.MULTILINE,
)
_USER_NAMES = {"human", "user", "you", "用户"}
#: First characters no turn line starts with (most lines of a log): they skip the turn pattern.
_PLAIN = set("-*`~|>[]()0123456789<!/\\\"'{}= \t") | set("bdefgijklnopqrstvwxzBDEFGIJKLNOPQRSTVWXZ")
_TOOL_CALL = re.compile(r"^\s*(?:\W{1,3}\s*)?\*\*tool (?:use|call)\b", re.IGNORECASE)
_TOOL_NAME = re.compile(r"tool (?:use|call):\s*([\w.-]+)|`([\w.-]+)`", re.IGNORECASE)
_TOOL_RESULT = re.compile(r"^\s*(?:\W{1,3}\s*)?\*\*tool (?:result|output|error)\b", re.IGNORECASE)
_STAMP = re.compile(r"^\*\*\[(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})[^\]]*\]\*\*\s*$")


def sniff(head: Head) -> bool:
    return not head.json and bool(_CHAT_TURN.search(head.text))


def read(lines: Lines, transcript: Transcript) -> None:
    read_turns(lines, transcript, _CHAT_TURN)


def read_turns(lines: Lines, transcript: Transcript, heading: re.Pattern[str]) -> None:
    """`lines` read into `transcript`, a turn beginning at each line `heading` matches (its
    group `h` or `p` the speaker, `rest` what follows on the line)."""
    turns = Turns(transcript)
    pending = ""  # the tool marker whose code block comes next: "call NAME" or "result [error]"
    fence, body, start = "", list[str](), 0  # the code block being read (marker, lines, first line)
    depth = 0  # open <details> blocks (an export's thinking or collapsed output)
    calls: deque[str | tuple[str, Any]] = deque()  # the tool calls not answered yet, in order: a
    # shell call's id, a question or plan tool and its input, or "" for any other
    for number, raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        stripped = line.lstrip()
        head = stripped[:1]
        if fence:
            match = FENCE.match(line) if head and head in "`~" else None
            if match and match.group(1).startswith(fence) and not match.group(2):
                fence = ""
                if pending:
                    _tool(turns, pending, start, "\n".join(body), calls)
                    pending = ""
                else:
                    turns.add(line)
            elif pending:
                body.append(line)
            else:
                turns.add(line)
            continue
        match = heading.match(line) if head and head not in _PLAIN else None
        if match:
            name = (match.group("h") or match.group("p") or "").lower()
            turns.begin("user" if name in _USER_NAMES else "assistant", number,
                        [match.groupdict().get("rest") or ""])
            pending, depth = "", 0
            continue
        if depth or stripped.startswith("<details"):
            depth += line.count("<details") - line.count("</details>")
            continue
        if "**" in line[:12]:  # a time stamp or a tool marker, in bold near the start
            stamp = _STAMP.match(line)
            if stamp:
                transcript.started = transcript.started or f"{stamp.group(1)}T{stamp.group(2)}Z"
                transcript.ended = f"{stamp.group(1)}T{stamp.group(2)}Z"
                continue
            if _TOOL_CALL.match(line):
                named = _TOOL_NAME.search(line)
                pending = f"call {(named.group(1) or named.group(2)) if named else ''}"
                continue
            if _TOOL_RESULT.match(line):
                pending = "result error" if "error" in line.lower() else "result"
                continue
        opened = FENCE.match(line) if head and head in "`~" else None
        if opened:
            fence, body, start = opened.group(1), [], number
            if not pending:
                turns.add(line)
            continue
        if stripped.rstrip() == "---" and turns.role:
            continue  # the rule an export draws between turns
        turns.add(line)
    if fence and pending:
        _tool(turns, pending, start, "\n".join(body), calls)
    turns.end()


def _tool(turns: Turns, pending: str, number: int, text: str, calls: deque[str | tuple[str, Any]]) -> None:
    """A tool call's input block, or a tool result's output block, into the turn."""
    kind, _, rest = pending.partition(" ")
    if kind == "call":
        if rest in questions.ASK_TOOLS or rest in questions.PLAN_TOOLS:
            calls.append((rest, _json(text)))  # answered by the result
            return
        command = json_call(turns, number, rest, text)
        calls.append(turns.call(number, command) if command else "")
    elif calls:
        call = calls.popleft()
        if isinstance(call, tuple):
            tool, data = call
            error = rest == "error"
            if tool in questions.PLAN_TOOLS:
                planned = questions.plan(number, str(data.get("plan") or "") if isinstance(data, dict) else "",
                                         text, error=error)
                found = [planned] if planned else []
            else:
                found = questions.choices(number, tool, data, text, error=error)
            for event in found:
                turns.emit(event, number + 1)
        elif call:
            turns.result(number, call, text, error=rest == "error")


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
