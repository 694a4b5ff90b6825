"""Whether a command failed, read from what it printed or from the wrapper an agent put
around its output: the one place that parses exit codes."""

from __future__ import annotations

import json
import re
from typing import Any

#: An exit code stated on a line of its own near the start of the output (Codex's `Exit code: 1` and
#: `Process exited with code 1` headers, Claude Code's `Exit code 1`), not a sentence that mentions one.
_EXIT = re.compile(r"^\s*(?:error:\s*)?(?:exit code:?|(?:command |process )?exited with code|exit status:?)"
                   r"\s*(-?\d+)", re.IGNORECASE | re.MULTILINE)
#: Where an agent states the exit code at the end of the output: Gemini CLI's `Exit Code: 1` line, pi's
#: `Command exited with code 1`, a `Process exited with code 1` footer.
_EXIT_LINE = re.compile(r"^\s*(?:exit code:|(?:command|process) exited with code|exit status:?)\s*(-?\d+)\s*$",
                        re.IGNORECASE | re.MULTILINE)
#: A failure's mark at the start of a line, after the `[rank0]: `-style tag a launcher may put
#: before each line of a worker's output.
_FAILURE = re.compile(r"^(?:\[[^\]\n]{1,40}\]:?[ \t]*)?(Traceback \(most recent call last\)|FAILED |fatal: |error: "
                      r"|error\[E\d+\]|npm ERR!|BUILD FAILED|FAILURE: Build failed)", re.MULTILINE)
#: Lines that head a command's output without saying what went wrong.
_HEADER = re.compile(r"(?i)^(error: )?(exit code:? -?\d+|wall time:.*|output:)$")


def exit_code(text: str) -> int | None:
    """The exit code a command's output states: near its start (Codex's `Exit code: 1` and
    `Process exited with code 1` headers), or on a line of its own near its end (Gemini CLI's
    `Exit Code: 1`, pi's `Command exited with code 1`)."""
    found = _EXIT.search(text[:400])
    if found:
        return int(found.group(1))
    tail = _EXIT_LINE.findall(text[-400:])
    return int(tail[-1]) if tail else None


def code_of(value: Any) -> int | None:
    """An exit code a format keeps in a field of its own (`exitCode`, `exit_code`), if it is one."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    try:
        return int(value)
    except ValueError:
        return None


def failed(text: str) -> bool:
    """Whether a command's output says it failed: a non-zero exit code, or failure's marks
    (a traceback, `FAILED `, `fatal: `, `error: `, `npm ERR!`, a failed build) when no code is stated."""
    code = exit_code(text)
    if code is not None:
        return code != 0
    return bool(_FAILURE.search(text))


def unwrap(output: Any) -> tuple[Any, int | None]:
    """A tool output and the exit code of the `{"output": …, "metadata": {"exit_code": …}}`
    wrapper Codex puts around a command's output (None when there is none)."""
    if not (isinstance(output, str) and output.startswith("{")):
        return output, None
    try:
        wrapped = json.loads(output)
    except (ValueError, RecursionError):
        return output, None
    if not isinstance(wrapped, dict):
        return output, None
    metadata = wrapped.get("metadata")
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    return wrapped.get("output", output), code if isinstance(code, int) else None


def first_line(text: str, limit: int = 160) -> str:
    """The line of `text` that says most, for a person: the first one, after headers such as
    "Exit code 1" that say less than the line that follows them."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    while len(lines) > 1 and _HEADER.match(lines[0]):
        lines = lines[1:]
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
