"""A tool call as an event, whatever agent made it: the files and functions an edit touched,
the command a shell call ran, what a read or a delegation was aimed at."""

from __future__ import annotations

import re
from typing import Any

from memgit.agents.events import EDIT_TOOLS, READ_TOOLS, Event, action_of
from memgit.agents.readers.reader import cut

PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
_SYMBOL_DEF = re.compile(
    r"^[+\- ]?[ \t]*(?:async[ \t]+)?(?:def|class|function|func|fn)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)
_HUNK_CONTEXT = re.compile(r"^@@.*?(?:def|class|function|func|fn)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def symbols(*texts: str) -> tuple[str, ...]:
    """The functions and classes that edited or patched texts define or fall in."""
    found: dict[str, None] = {}
    for text in texts:
        for rx in (_HUNK_CONTEXT, _SYMBOL_DEF):
            found.update(dict.fromkeys(rx.findall(text or "")))
    return tuple(found)


def command_of(raw: Any) -> str:
    """A shell call's command line; `["bash", "-lc", "pytest -q"]` is `pytest -q`."""
    if isinstance(raw, list):
        words = [str(word) for word in raw]
        return " ".join(words[2:] if len(words) >= 3 and words[1] in ("-lc", "-c") else words)
    return str(raw or "")


def patch_call(number: int, patch: str, call_id: str) -> Event:
    """An `apply_patch` call: the files its `*** Update File:` lines name."""
    files = tuple(dict.fromkeys(f.strip() for f in PATCH_FILE.findall(patch)))
    return Event(number, "tool_call", cut(patch, 2000), tool="apply_patch", files=files,
                 symbols=symbols(patch), call_id=call_id, action="edit",
                 target=", ".join(files) or "a patch")


def tool_call(number: int, name: str, data: Any, call_id: str, side: bool) -> Event:
    """A call of the tool `name` with the input `data`."""
    data = data if isinstance(data, dict) else {}
    if name == "apply_patch" and isinstance(data.get("input"), str):
        return patch_call(number, data["input"], call_id)
    files: tuple[str, ...] = ()
    found: tuple[str, ...] = ()
    command = ""
    action = action_of(name)
    if name in EDIT_TOOLS:
        edited = data.get("file_path") or data.get("path") or data.get("notebook_path") or data.get("absolute_path")
        files = (str(edited),) if edited else ()
        edits = data.get("edits") if isinstance(data.get("edits"), list) else [data]
        texts = [str(e.get(k) or "") for e in edits if isinstance(e, dict)
                 for k in ("old_string", "new_string", "content", "contents", "oldText", "newText")]
        found = symbols(*texts)
        target = ", ".join(files)
    else:
        raw = data.get("command") or data.get("cmd") or (data.get("input") if action == "run" else "")
        command = command_of(raw)
        target = _target(name, action, data, command)
    return Event(number, "tool_call", cut(command, 2000), tool=name, command=command[:2000], files=files,
                 symbols=found, call_id=call_id, sidechain=side, action=action, target=target)


def _target(name: str, action: str, data: dict[str, Any], command: str) -> str:
    if name in READ_TOOLS:
        keys: tuple[str, ...] = ("file_path", "path", "absolute_path", "dir_path", "pattern", "url", "query",
                                  "prompt")
    elif action == "delegate":
        keys = ("description", "prompt")
    elif action == "run":
        return command
    else:
        return name
    return str(next((data[k] for k in keys if data.get(k)), ""))
