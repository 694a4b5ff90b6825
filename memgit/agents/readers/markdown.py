"""The Markdown that transcript exports wrap an agent's tools in: code fences, and the tool call
or tool output a block of lines holds (the command it ran and what that printed, or the file it
edited), whatever exporter wrote it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from memgit.agents.events import Event
from memgit.agents.readers.exitcode import exit_code
from memgit.agents.readers.reader import Turns
from memgit.agents.readers.toolcall import symbols

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([^`\s]*)")
SHELL_LANGS = {"bash", "sh", "shell", "zsh", "console", "powershell", "ps1", "cmd"}
#: Tools that run a command, by the names exporters give them (compared in lower case).
SHELL_NAMES = {"bash", "run_terminal_cmd", "shell", "shell_command", "exec_command", "run_shell_command",
               "local_shell", "exec", "execute_command", "terminal"}
#: Tools that change a file, likewise.
EDIT_NAMES = {"edit", "multiedit", "write", "edit_file", "search_replace", "strreplace", "apply_patch",
              "write_file", "replace", "create_file", "notebookedit", "edit_notebook"}
#: Shell-typed tools that only look around (a listing, a background job's output).
_LOOK_NAMES = {"ls", "list_directory", "list_dir", "taskoutput", "killshell", "bashoutput"}
_RUN_SUMMARY = re.compile(r"Run command:\s*(.+?)\s*$")
_NAMED_SUMMARY = re.compile(r"\*\*[^*]+\*\*\s*`([^`]+)`")
_INLINE = re.compile(r"^\s*`([^`].*?)`\s*$")
_BULLET = re.compile(r"^- command:\s*`\[?(.+?)\]?`\s*$")
_EDITED = re.compile(r"(?:Edit(?:ed)? file|Writ(?:e|ing) file|Creat(?:e|ed|ing) file|file):\s*`?([^`\s<]+)", re.IGNORECASE)
_UPDATED = re.compile(r"The file (\S+) has been (?:updated|created|written)")
_PATH = re.compile(r"^\s*`?(\.{0,2}/?[\w.\-/\\]+\.\w+)`?\s*$")
_QUESTION = re.compile(r"^\*\*(?!Answer:)(.+?)\*\*(?:\s*_\(select multiple\)_)?\s*$")
_OPTION = re.compile(r"^- \*\*(.+?)\*\*")
_ANSWER = re.compile(r"^\*\*Answer:\*\*\s*(.+?)\s*$")
_ERROR_MARK = re.compile(r"^\s*\**(?:Error|Failed)\**:?\**\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Fence:
    lang: str
    line: int
    text: str


def fences(lines: list[tuple[int, str]]) -> tuple[list[Fence], list[tuple[int, str]]]:
    """The fenced blocks among `lines`, and the lines outside them."""
    found: list[Fence] = []
    outside: list[tuple[int, str]] = []
    marker, lang, start, body = "", "", 0, list[str]()
    for number, line in lines:
        match = FENCE.match(line)
        if not marker:
            if match:
                marker, lang, start, body = match.group(1), match.group(2).split(":")[0].lower(), number, []
            else:
                outside.append((number, line))
        elif match and match.group(1).startswith(marker[0]) and len(match.group(1)) >= len(marker) \
                and not match.group(2):
            found.append(Fence(lang, start, "\n".join(body)))
            marker = ""
        else:
            body.append(line)
    if marker:
        found.append(Fence(lang, start, "\n".join(body)))
    return found, outside


def tool_block(turns: Turns, number: int, name: str, kind: str, summary: str,
               lines: list[tuple[int, str]]) -> None:
    """The tool block `lines` of the tool `name` (of the exporter's `kind`: shell, write…, or
    empty) that began at line `number`, with its `summary` line: a command run, with its output
    when the block shows one, or a file edited. Reads, searches and the rest add nothing."""
    low = name.lower()
    if low == "askuserquestion":
        _asked(turns, number, lines)
        return
    found, outside = fences(lines)
    if (kind == "shell" or low in SHELL_NAMES) and low not in _LOOK_NAMES:
        command, output = _command(summary, found, outside)
        rest = "\n".join(line for _, line in outside)
        code = exit_code(rest)
        error = any(_ERROR_MARK.match(line) for _, line in outside) or (code is not None and code != 0)
        turns.run(number, command, output, error=error)
    elif kind == "write" or low in EDIT_NAMES:
        path = _edited(summary, found, outside)
        if path:
            turns.edit(number, path, symbols(*(f.text for f in found)))


def _asked(turns: Turns, number: int, lines: list[tuple[int, str]]) -> None:
    """The user's answer to the questions a SpecStory block shows (`**Question?**`, its
    `- **option**` lines, then `**Answer:** …`): one choice, all questions as its target."""
    questions = [m.group(1) for _, line in lines for m in [_QUESTION.match(line.strip())] if m]
    options = tuple(m.group(1) for _, line in lines for m in [_OPTION.match(line.strip())] if m)
    answer = next((m.group(1) for _, line in lines for m in [_ANSWER.match(line.strip())] if m), "")
    if answer:
        turns.emit(Event(number, "choice", answer, tool="AskUserQuestion", target=" / ".join(questions),
                         options=options), number + 1)


def json_call(turns: Turns, number: int, name: str, text: str) -> str:
    """A tool call whose input an export shows as JSON (`text`): the command it runs, or "" (an
    edit is emitted here, anything else is passed over)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return ""
    low = name.lower()
    if low in SHELL_NAMES and low not in _LOOK_NAMES:
        raw = data.get("command") or data.get("cmd") or ""
        return " ".join(str(w) for w in raw) if isinstance(raw, list) else str(raw)
    if low in EDIT_NAMES:
        path = data.get("file_path") or data.get("path") or data.get("notebook_path")
        if isinstance(path, str) and path:
            turns.edit(number, path, symbols(*(str(data.get(k) or "") for k in ("new_string", "content"))))
    return ""


def _command(summary: str, found: list[Fence], outside: list[tuple[int, str]]) -> tuple[str, str | None]:
    shell = next((i for i, f in enumerate(found) if f.lang in SHELL_LANGS), None)
    command = ""
    if shell is not None:
        text = found[shell].text.strip()
        if text.startswith("$ "):  # `$ cmd` then its output, in one block
            first, _, rest = text.partition("\n")
            return first[2:], rest if rest.strip() else None
        command = text
    for rx in (_RUN_SUMMARY, _NAMED_SUMMARY):
        match = rx.search(summary)
        if match and not command:
            command = match.group(1)
    for _, line in outside:
        match = _INLINE.match(line) or _BULLET.match(line)
        if match and not command:
            command = match.group(1)
    after = found[shell + 1:] if shell is not None else found
    output = next((f.text for f in after if f.lang not in SHELL_LANGS), None)
    return command.removeprefix("bash -lc ").strip(), output


def _edited(summary: str, found: list[Fence], outside: list[tuple[int, str]]) -> str:
    for text in [summary] + [line for _, line in outside]:
        match = _EDITED.search(text)
        if match:
            return match.group(1)
    for fence in found:
        match = _UPDATED.search(fence.text)
        if match:
            return match.group(1)
    for _, line in outside:
        match = _PATH.match(line)
        if match:
            return match.group(1)
    return ""
