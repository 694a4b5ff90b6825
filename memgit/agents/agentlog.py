"""An agent's transcript, read for a checkpoint: the user's requests, the agent's stated
plans, and its tool calls (files read and changed, commands run, what failed and why).

Reads Claude Code transcripts (`~/.claude/projects/…/<session>.jsonl`) and Codex rollouts
(`~/.codex/sessions/…/rollout-….jsonl`). Neither format is a stable interface, so reading is
lenient: malformed lines, unknown record types and missing fields are skipped, sub-agent
(side-chain) lines are left out, and only the last few megabytes of a long file are read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit.agents.sessionfiles import read_tail

TAIL_BYTES = 8_000_000
EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch"}
READ_TOOLS = {"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch"}
RUN_TOOLS = {"Bash", "shell", "exec_command", "local_shell", "exec"}
#: Text the agent injects into the user's turn, not something the user asked.
_NOISE = re.compile(
    r"^\s*(<local-command-|<command-name>|<command-message>|<session-start-hook>|<system-reminder>|"
    r"<environment_context>|<user_instructions>|<ide_|<task-notification>|<tick>|Caveat:|"
    r"\[Request interrupted by user|# AGENTS\.md|## Memories recalled by memgit)"
)


@dataclass
class Action:
    kind: str  # read, edit, run, delegate, other
    target: str
    error: str | None = None


@dataclass
class Log:
    prompts: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)


def read(path: str | Path | None) -> Log:
    """The transcript at `path`; an empty Log when it is missing or unreadable."""
    log = Log()
    if not path:
        return log
    try:
        data = read_tail(path, TAIL_BYTES)  # a regular file only: the path comes from a hook payload
    except OSError:
        return log
    calls: dict[str, Action] = {}
    for raw in data.splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            try:
                _claude(record, log, calls) if "payload" not in record else _codex(record, log, calls)
            except (AttributeError, TypeError, KeyError, ValueError):
                continue
    return log


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") in ("text", "input_text", "output_text")
        )
    return ""


def _prompt(log: Log, text: str) -> None:
    text = text.strip()
    if text and not _NOISE.match(text):
        log.prompts.append(text)


def _claude(record: dict[str, Any], log: Log, calls: dict[str, Action]) -> None:
    kind = record.get("type")
    if record.get("isSidechain") or kind not in ("user", "assistant"):
        return
    message = record.get("message") or {}
    content = message.get("content")
    if kind == "user":
        if record.get("isMeta") or record.get("isCompactSummary"):
            return
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error"):
                    action = calls.get(str(block.get("tool_use_id")))
                    if action is not None:
                        action.error = _first_line(_text_of(block.get("content")) or "error")
        if not (
            isinstance(content, list)
            and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
        ):
            _prompt(log, _text_of(content))
        return
    for block in content if isinstance(content, list) else [{"type": "text", "text": content or ""}]:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            log.said.append(str(block["text"]).strip())
        elif block.get("type") == "tool_use":
            action = _action(str(block.get("name", "")), block.get("input") or {})
            log.actions.append(action)
            calls[str(block.get("id"))] = action


def _codex(record: dict[str, Any], log: Log, calls: dict[str, Action]) -> None:
    payload = record.get("payload") or {}
    kind, ptype = record.get("type"), payload.get("type")
    if kind == "event_msg" and ptype == "user_message":
        _prompt(log, str(payload.get("message") or ""))
    elif kind == "event_msg" and ptype == "agent_message":
        if str(payload.get("message") or "").strip():
            log.said.append(str(payload["message"]).strip())
    elif kind == "response_item" and ptype in ("function_call", "custom_tool_call", "local_shell_call"):
        name = str(payload.get("name") or ("local_shell" if ptype == "local_shell_call" else ""))
        if ptype == "function_call":
            args = json.loads(payload.get("arguments") or "{}")
        elif ptype == "custom_tool_call":
            args = {"input": payload.get("input", "")}
        else:
            args = {"command": (payload.get("action") or {}).get("command")}
        action = _action(name, args if isinstance(args, dict) else {})
        log.actions.append(action)
        calls[str(payload.get("call_id"))] = action
    elif kind == "response_item" and ptype in ("function_call_output", "custom_tool_call_output"):
        called = calls.get(str(payload.get("call_id")))
        error = _codex_error(payload.get("output"))
        if called is not None and error:
            called.error = error


def _codex_error(output: Any) -> str | None:
    text = output if isinstance(output, str) else json.dumps(output)
    try:
        wrapped = json.loads(text)
    except ValueError:
        wrapped = None
    if isinstance(wrapped, dict):
        code = (wrapped.get("metadata") or {}).get("exit_code")
        if isinstance(code, int) and code != 0:
            return _first_line(str(wrapped.get("output") or f"exit code {code}"))
        return None
    match = re.search(r"(?:Exit code|exited with code|Process exited with code)\s*([1-9]\d*)", text)
    return _first_line(text) if match else None


def _action(name: str, args: dict[str, Any]) -> Action:
    if name in EDIT_TOOLS:
        if name == "apply_patch":
            files = re.findall(r"\*\*\* (?:Add|Update|Delete) File: (.+)", str(args.get("input", "")))
            return Action("edit", ", ".join(f.strip() for f in files) or "a patch")
        return Action("edit", str(args.get("file_path") or args.get("notebook_path") or ""))
    if name in READ_TOOLS:
        return Action(
            "read",
            str(
                args.get("file_path")
                or args.get("path")
                or args.get("pattern")
                or args.get("url")
                or args.get("query")
                or ""
            ),
        )
    if name in RUN_TOOLS:
        command = args.get("command") or args.get("cmd") or args.get("input") or ""
        if isinstance(command, list):
            command = (
                command[-1]
                if len(command) >= 3 and command[1] in ("-lc", "-c")
                else " ".join(map(str, command))
            )
        return Action("run", _first_line(str(command)))
    if name in ("Task", "Agent"):
        return Action("delegate", _first_line(str(args.get("description") or args.get("prompt") or "")))
    return Action("other", name)


def _first_line(text: str, limit: int = 160) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    # "Exit code 1" says less than the line that follows it.
    if len(lines) > 1 and re.match(r"(?i)^(error: )?exit code \d+$", lines[0]):
        lines = lines[1:]
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
