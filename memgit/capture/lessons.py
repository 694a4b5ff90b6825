"""Lessons: a command that failed and then passed after edits. The failure's key line, the
files and functions the fix changed; earlier edits that did not fix it are kept as dead ends.
A failure never fixed in the session teaches nothing certain and is left out."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgit.agents.events import EDIT_TOOLS, SHELL_TOOLS, Event
from memgit.capture.candidate import Candidate, flat, make_title, relative_paths, shorten

_KEY_LINE = re.compile(r"^\s*(?:E\s+)?(?:\w+(?:\.\w+)*(?:Error|Exception|Failure)\b.*|FAILED .*|fatal: .*"
                       r"|error(?:\[\w+\])?: .*"
                       r"|npm ERR! .*|\S+:\d+:\d*:? error.*)$", re.MULTILINE)
_TRIVIAL_COMMANDS = re.compile(r"^\s*(ls|cat|head|tail|sed -n|grep|rg|find|which|echo|pwd|cd)\b")


def _key_line(text: str) -> str:
    lines = [m.group().strip() for m in _KEY_LINE.finditer(text)]
    specific = [line for line in lines if not line.startswith("FAILED")] or lines
    if specific:
        return re.sub(r"^E\s+", "", specific[-1])[:200]
    rest = [line.strip() for line in text.splitlines()
            if line.strip() and not re.match(r"(?i)exit code|wall time|output:", line.strip())]
    return rest[-1][:200] if rest else "it failed"


def _command_key(command: str) -> str:
    return " ".join(command.split())[:300]


def lessons(events: Sequence[Event], base: str) -> list[Candidate]:
    calls = {e.call_id: e for e in events if e.role == "tool_call" and e.call_id}
    out: list[Candidate] = []
    # command → its failed runs so far: (call, failure, edits after it)
    streak: dict[str, list[tuple[Event, Event, list[Event]]]] = {}
    for event in events:
        if event.role == "tool_call" and event.tool in EDIT_TOOLS:
            for runs in streak.values():
                runs[-1][2].append(event)
            continue
        if event.role != "tool_result":
            continue
        call = calls.get(event.call_id)
        if call is None or call.tool not in SHELL_TOOLS or _TRIVIAL_COMMANDS.match(call.command or "ls"):
            continue
        key = _command_key(call.command)
        if event.error:
            streak.setdefault(key, []).append((call, event, []))
            continue
        runs = streak.pop(key, [])
        if not runs or not runs[-1][2]:
            continue  # passed without an edit: flaky, or fixed outside the session
        # A failure that an edit got past, into a different failure, taught something too.
        for i, (earlier_call, earlier, tried) in enumerate(runs[:-1]):
            if tried and _key_line(earlier.text) != _key_line(runs[i + 1][1].text):
                out.append(_lesson(earlier_call, runs[i + 1][1], [runs[i]], base,
                                   then="it failed differently"))
        out.append(_lesson(call, event, runs, base))
    return out


def _lesson(call: Event, success: Event, runs: list[tuple[Event, Event, list[Event]]], base: str,
            then: str = "it passed") -> Candidate:
    _, failure, fix = runs[-1]
    key = _key_line(failure.text)
    files = relative_paths(flat(e.files for e in fix), base)
    symbols = tuple(dict.fromkeys(s for e in fix for s in e.symbols))
    command = shorten(call.command, 80)
    lines = [f"`{command}` failed with:", f"    {key}",
             f"Fixed by changing {', '.join(files) or 'the code'}"
             + (f" ({', '.join(symbols[:6])})" if symbols else "") + f"; then {then}."]
    for i, (_, earlier, tried) in enumerate(runs[:-1]):
        if not tried:
            continue
        tried_files = ", ".join(relative_paths(flat(e.files for e in tried), base))
        before, after = _key_line(earlier.text), _key_line(runs[i + 1][1].text)
        if before == after:
            lines.append(f"Dead end: changing {tried_files} did not help (still `{shorten(before, 120)}`).")
    title = make_title(f"{command}: {key}", 110, capital=False)
    evidence = tuple(sorted({r[1].line for r in runs} | {e.line for e in fix} | {success.line}))
    anchored = tuple(f"{files[0]}::{s}" for s in symbols[:6]) if len(files) == 1 else symbols[:6]
    return Candidate("lesson", title, "\n".join(lines), "inferred", 0.6, evidence, files=files,
                     symbols=anchored)
