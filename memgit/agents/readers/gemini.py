"""Gemini CLI's chat recordings (`~/.gemini/tmp/<project>/chats/session-*.jsonl`): a header line
(`sessionId`, `projectHash`, `startTime`), then one message record a line (`user`, `gemini`,
`info`, `warning`, `error`), where a message is written again, whole, each time its tool calls,
results or token counts change; `{"$set": …}` lines update the header and `{"$rewindTo": id}`
drops that message and those after it (the user rewound the conversation).

A `gemini` message carries its tool calls with their arguments, result and status; each becomes a
tool call and a tool result. What the CLI sends on the user's behalf (the `System: Please
continue.` turn after a tool the user ran, the text of files referenced with `@`) is not the
user's: a user message's `displayContent`, when it has text, is what the person typed."""

from __future__ import annotations

import json
import re
from typing import Any

from memgit.agents.events import SHELL_TOOLS, Event, Transcript
from memgit.agents.readers.exitcode import exit_code, failed
from memgit.agents.readers.noise import user_text
from memgit.agents.readers.questions import ASK_TOOLS, PLAN_TOOLS, choices, feedback, plan
from memgit.agents.readers.reader import Head, Lines, cut, records, stamp
from memgit.agents.readers.toolcall import tool_call

FORMAT = "gemini"
_KNOWN = ("info", "warning", "error")  # the CLI's own notices: nothing the user or the model said
#: A user turn the CLI wrote: a nudge after a tool ran, a note about the session.
_INJECTED = re.compile(r"^\s*System:\s", re.IGNORECASE)
#: Where the CLI appends the files an `@path` in the prompt referenced.
_REFERENCED = re.compile(r"\n*--- Content from referenced files ---.*", re.DOTALL)
_FAILED = ("error", "cancelled", "canceled")


def sniff(head: Head) -> bool:
    return any(("projectHash" in r and "sessionId" in r)
               or (r.get("type") == "gemini" and "id" in r and "message" not in r)
               for r in head.records)


def read(lines: Lines, transcript: Transcript) -> None:
    messages: dict[str, tuple[int, dict[str, Any]]] = {}  # id → (last line, last version), in order
    side = False  # a sub-agent's recording: its "user" is the agent that called it
    for number, record in records(lines, transcript):
        stamp(transcript, record)
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            cut_at = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else len(ids)
            for gone in ids[cut_at:]:
                del messages[gone]
        elif ("sessionId" in record and "type" not in record) or isinstance(record.get("$set"), dict):
            header = record["$set"] if isinstance(record.get("$set"), dict) else record
            side = _header(transcript, header) or side
            # a header may carry messages: a resumed session's, or a whole recording on one line
            listed = header.get("messages")
            for message in listed if isinstance(listed, list) else ():
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    messages[message["id"]] = (number, message)
        elif isinstance(record.get("id"), str) and isinstance(record.get("type"), str):
            messages[record["id"]] = (number, record)
        else:
            transcript.skipped += 1
    written: dict[str, str] = {}  # file name → what write_file last wrote there (a plan is such a file)
    for number, message in messages.values():
        kind = message.get("type")
        if kind == "user":
            _user(number, message, transcript, side)
        elif kind == "gemini":
            _model(number, message, transcript, side, written)
        elif kind not in _KNOWN:
            transcript.skipped += 1


def _header(transcript: Transcript, header: dict[str, Any]) -> bool:
    """The session's id, folder and start from a header; whether it is a sub-agent's."""
    transcript.session_id = transcript.session_id or str(header.get("sessionId") or "")
    directories = header.get("directories")
    if not transcript.cwd and isinstance(directories, list) and directories:
        transcript.cwd = str(directories[0])
    when = header.get("startTime")
    if isinstance(when, str) and (not transcript.started or when < transcript.started):
        transcript.started = when
    return header.get("kind") == "subagent"


def _user(number: int, message: dict[str, Any], transcript: Transcript, side: bool) -> None:
    typed = _text(message.get("displayContent"))
    if not typed and _responses(message.get("displayContent")):
        return  # the CLI answering for a tool the user ran, not the person
    text = typed or _REFERENCED.sub("", _text(message.get("content")))
    text = user_text(text)
    if text and not _INJECTED.match(text):
        transcript.events.append(Event(number, "user", cut(text), sidechain=side))


def _model(number: int, message: dict[str, Any], transcript: Transcript, side: bool,
           written: dict[str, str]) -> None:
    text = _text(message.get("content")).strip()
    if text:
        transcript.events.append(Event(number, "assistant", cut(text), sidechain=side))
    calls = message.get("toolCalls")
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict):
            continue
        name, call_id, args = str(call.get("name") or ""), str(call.get("id") or ""), call.get("args")
        transcript.events.append(tool_call(number, name, args, call_id, side))
        status = str(call.get("status") or "")
        output, error = _result(call.get("result"))
        if output is None and status not in _FAILED + ("success",):
            continue  # still running when the session ended: no result to read
        text = output or ""
        code = exit_code(text)
        failed_run = name in SHELL_TOOLS and (code != 0 if code is not None else failed(text))
        transcript.events.append(Event(number, "tool_result", cut(text), error=bool(error) or status in _FAILED
                                       or failed_run, call_id=call_id, sidechain=side))
        if name in ASK_TOOLS:
            transcript.events.extend(choices(number, name, args, text, error=status in _FAILED,
                                             call_id=call_id, side=side))
        elif isinstance(args, dict) and name == "write_file" and isinstance(args.get("content"), str):
            written[_name(str(args.get("file_path") or ""))] = args["content"]
        elif isinstance(args, dict) and name in PLAN_TOOLS:
            _plan(number, args, text, status, transcript, side, written)


def _plan(number: int, args: dict[str, Any], result: str, status: str, transcript: Transcript, side: bool,
          written: dict[str, str]) -> None:
    """The plan an `exit_plan_mode` call put to the user: the file the agent wrote it to, approved
    or rejected (the user's feedback on a rejected plan is their words)."""
    where = str(args.get("plan_path") or args.get("plan_filename") or "")
    cancelled = status in _FAILED or "cancelled" in result[:200].lower()
    proposed = plan(number, written.get(_name(where)) or where, result, error=cancelled, side=side)
    if proposed:
        transcript.events.append(proposed)
    said = user_text(feedback(result))
    if said:
        transcript.events.append(Event(number, "user", cut(said), sidechain=side))


def _name(path: str) -> str:
    return re.split(r"[\\/]", path)[-1]


def _result(result: Any) -> tuple[str | None, bool]:
    """A tool call's result parts as text, and whether they report an error."""
    if not isinstance(result, list):
        return (result, False) if isinstance(result, str) else (None, False)
    texts, error = [], False
    for part in result:
        if not isinstance(part, dict):
            continue
        response = part.get("functionResponse")
        if isinstance(response, dict) and isinstance(response.get("response"), dict):
            body = response["response"]
            if body.get("error"):
                error = True
                texts.append(str(body["error"]))
            value = body.get("output", body.get("llmContent"))
            if value is not None and not body.get("error"):
                texts.append(value if isinstance(value, str) else json.dumps(value))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts), error


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
                         and not p.get("thought"))
    return ""


def _responses(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(p, dict) and "functionResponse" in p for p in content)
