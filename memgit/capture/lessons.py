"""Lessons: a command that failed and then passed after a fix — an edit, a file written by the
shell, a dependency installed, or the same command with a new flag or variable. Runs are matched
by the command their wrappers hide (`memgit.capture.commands`). A lesson says what failed (the
line of the output that names the error), why (the agent's own diagnosis, said between the
failure and the fix, hedges left out) and what made it pass; earlier edits that changed nothing
are kept as dead ends, and a dependency change that got the command past its first error is a
lesson of its own. A failure never fixed in the session, a one-off network or quota error, and a
test the session wrote and then corrected teach nothing certain and are left out."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memgit.agents.events import EDIT_TOOLS, SHELL_TOOLS, Event
from memgit.capture import commands
from memgit.capture.candidate import Candidate, flat, make_title, shorten
from memgit.capture.reported import diagnosis, relative, reported

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
#: Lines a tool or runner puts around the output; they say nothing about the error.
_NOISE = re.compile(
    r"(?i)^(?:exit code:?\s*-?\d+|command exited with code.*|process exited with code.*|exit status \d+"
    r"|wall time:.*|chunk id:.*|original token count:.*|output:|\(no output\)|total output lines:.*"
    r"|(?:npm (?:err!|error)|error)\s*(?:code \w+)?|(?:for more (?:info|information)|see|to learn more)\b.*"
    r"|.*\b(?:run with|rerun with) --\S+.*|at .+[:(].*\d+\)?|file \".*\", line \d+.*|\^+|[~^\s|]+"
    r"|[\[\](){}<>,;.:\s'\"`]*|.*\d+%\|.*|.*[█▏▎▍▌▋▊▉]{2,}.*|error: process completed with exit code.*"
    r"|.*(?:build worker )?exited with code:? \d+.*|failed to compile\.?|compilation failed\.?"
    r"|.*error command failed with exit code.*|make(?:\[\d+\])?: \*\*\*.*|found \d+ errors?.*"
    r"|total errors: .*|\d+ (?:failed|errors?)(?:, .*)?|=+.*=+|-{3,}|elifecycle.*|npm (?:err!|error) .*log.*"
    r"|warning: .*is deprecated.*|done in .*)$")
_HEADER = re.compile(r"(?i)^(?:exit code:?\s*-?\d+|(?:command|process) exited with code.*|wall time:.*"
                     r"|chunk id:.*|original token count:.*|output:|\(no output\))$")
#: At most this many commands wait for their passing run, each with at most this many failures.
_MAX_OPEN, _MAX_RUNS = 64, 16
#: Flags that change what a run prints, not whether it passes; flags that pick fewer tests.
_NEUTRAL = frozenset({"-q", "-v", "-vv", "-vvv", "--quiet", "--verbose", "-s", "--silent", "--tb",
                      "--color", "--no-color", "--json", "--format", "--reporter", "--no-cov", "-rA",
                      "-ra", "--durations", "--log-level", "--progress", "--no-progress"})
_SELECTING = frozenset({"--", "-k", "-t", "-m", "-p", "-x", "--exitfirst", "--grep", "--filter", "--only",
                        "--lf", "--last-failed", "--bail", "--package", "--testNamePattern",
                        "--testPathPattern", "--spec", "--files", "--workspace", "--lib", "--bin",
                        "--example", "--deselect", "--ignore", "--maxfail"})
_LINE, _LINES = 400, 300  # what of an output key_line reads: each line's start, the first and last lines
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE)
_EXCEPTION = re.compile(r"^(?:\[[^\]]*\]:?\s*)?[A-Za-z_][\w.]*"
                        r"(?:Error|Exception|Exit|Interrupt|Failure)\b:?.*")
_PYTEST_E = re.compile(r"^E\s+[\w.]*(?:Error|Exception)\b")
_RAISED = re.compile(r"^(?:\[[^\]]*\]:?\s*)?[A-Za-z_][\w.]*(?:Error|Exception)(?::\s|$)")
_FAILED = re.compile(r"^(?:FAILED|FAIL|ERROR)\s+\S+.*")
_NAMED_WORDS = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b|\berror\b\s*(?:\[\w+\]|TS\d+|[A-Z]+\d+)?:|\bERR!|\bfatal:|\bpanic:"
    r"|Cannot find module|Unresolved reference|cannot find symbol"
    r"|undefined reference|is not defined|is not a function|No module named|command not found"
    r"|Could not resolve|not assignable|has no attribute|unable to resolve", re.IGNORECASE)
_NAMED_CODE = re.compile(r"\b(?:HH\d+\b|[A-Z]{1,4}\d{2,5}\b:)", re.IGNORECASE)
#: Words one of `_NAMED_WORDS`' alternatives needs (lower case): a line without any is not tried.
_NAMED_HINTS = ("error", "exception", "err!", "fatal:", "panic:", "cannot find", "unresolved", "undefined",
                "is not", "no module", "not found", "could not", "not assignable", "has no attribute",
                "unable to")


class _Named:
    """A line that names its error ("TypeError", "error TS2304:", "fatal:", "HH8", "Cannot find
    module"…). The words are looked for only in a line holding one of their hints, the codes only
    in a line with a digit: one alternation over every line of a long log cost most of capture's
    time."""

    @staticmethod
    def search(line: str) -> bool:
        low = line.lower()
        if any(hint in low for hint in _NAMED_HINTS) and _NAMED_WORDS.search(line):
            return True
        return any(c.isdigit() for c in line) and _NAMED_CODE.search(line) is not None


_NAMED = _Named()
_RULER = re.compile(r"^[_=\-]{5,}")
_DIAGNOSTIC = re.compile(r"^\S+\.\w+:\d+(?::\d+)?:?\s*\S*")
_ENVIRONMENT = re.compile(
    r"(?i)\b(?:EADDRINUSE|address already in use|EPERM|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN"
    r"|rate.?limit|too many requests|\b429\b|quota|temporary failure in name resolution"
    r"|network is unreachable"
    r"|could not resolve host|connection (?:refused|reset)|overloaded|credit balance)")
_FAILURE_MARK = re.compile(r"^(?:Traceback \(most recent call last\)|FAILED |fatal: |error(?:\[\w+\])?: "
                           r"|npm ERR!|[\w.]*(?:Error|Exception): )", re.MULTILINE)
#: A checker's or runner's count of what is still wrong ("found 4 errors", "2 failed"): not a pass.
_FAILURE_COUNT = re.compile(r"(?i)\b[1-9]\d* (?:errors?|failed|failures?|failing)\b(?! (?:fixed|resolved))")
#: A formatter's or style checker's complaint: the tool fixes it, nothing to remember.
_STYLE = re.compile(r"(?i)not (?:properly )?formatted|would reformat|would be reformatted"
                    r"|formatting (?:issues|check)|prettier|code style issues")
_PATCHED = re.compile(r"\*\*\* (?:Update|Add|Delete) File: ([^\s\\\\\"]+)")
#: The agent's tool refused the call itself (a sibling call failed, a file not read first): the
#: command never ran, so its "failure" teaches nothing about the code.
_TOOL_REFUSED = re.compile(r"\s*<tool_use_error>")
_MISSING = re.compile(r"(?i)failed to spawn|no module named|cannot find module|command not found"
                      r"|is not installed|not found in path|could not find (?:a version|module)"
                      r"|module not found")
_TEST_RUN = re.compile(r"\b(?:test|tests|pytest|jest|vitest|mocha|rspec|phpunit|spec|ctest|tox|nox)\b")
_TEST_FILE = re.compile(r"(?:^|/)(?:tests?|spec|__tests__)/|(?:^|/)test_[^/]+$|_test\.\w+$"
                        r"|\.(?:test|spec)\.\w+$")


@dataclass
class _Failure:
    call: Event
    result: Event
    command: commands.Command
    fixes: list[str] = field(default_factory=list)  # besides edits: "installing `…`", "adding the flag …"
    edits: list[Event] = field(default_factory=list)
    said: list[str] = field(default_factory=list)  # the agent's words after it, before the fix

    @property
    def fixed_by_something(self) -> bool:
        return bool(self.fixes or self.edits)


def lessons(events: Sequence[Event], base: str) -> list[Candidate]:
    """The lessons of a session: commands that failed and then passed after a fix, and errors the
    user reported that the agent explained and fixed; paths relative to `base`."""
    calls = {e.call_id: e for e in events if e.role == "tool_call" and e.call_id}
    out: list[Candidate] = []
    streak: dict[str, list[_Failure]] = {}  # command key → its failed runs so far
    for event in events:
        if event.role == "assistant" and event.text and not event.sidechain:
            for runs in streak.values():
                if not runs[-1].fixed_by_something:
                    runs[-1].said.append(event.text)
            continue
        if event.role == "tool_call" and event.tool in EDIT_TOOLS:
            if not event.files:
                patched = tuple(_PATCHED.findall(event.text))
                event = Event(event.line, "tool_call", tool=event.tool, files=patched)
            for runs in streak.values():
                runs[-1].edits.append(event)
            continue
        if event.role != "tool_result":
            continue
        call = calls.get(event.call_id)
        if call is None or not _is_shell(call) or not call.command or _TOOL_REFUSED.match(event.text):
            continue
        command = commands.parse(call.command)
        if command.piped and not _output(event.text):
            continue  # a filter that matched nothing: the command's own status is unknown
        failed = _failed(event, command)
        if not failed and command.writes:  # a file written by the shell (`cat > f <<EOF`) is an edit
            for runs in streak.values():
                runs[-1].edits.append(Event(event.line, "tool_call", files=command.writes))
        if not failed and commands.is_install(command) and streak:
            # An install is for the failure seen last, of the same ecosystem.
            latest = max(streak.values(), key=lambda runs: runs[-1].result.line)[-1]
            if commands.family(latest.command) in {"", commands.family(command)}:
                latest.fixes.append(f"installing `{shorten(_shown(call.command), 120)}`")
        if (commands.is_trivial(command) or commands.is_install(command) or not command.key
                or command.background):
            continue
        if failed:
            runs = streak.pop(command.key, [])  # re-inserted last: the dict runs oldest first
            streak[command.key] = [*runs[-_MAX_RUNS + 1:], _Failure(call, event, command)]
            if len(streak) > _MAX_OPEN:  # commands that failed long ago and never ran again
                del streak[next(iter(streak))]
            continue
        runs = streak.pop(command.key, [])
        if not runs:
            continue
        last = runs[-1]
        changed = _changed_options(last.command, command)
        if changed:
            last.fixes.append(changed)
        if not last.fixed_by_something:
            continue  # passed with nothing changed: flaky, or fixed outside the session
        out.extend(_streak_lessons(runs, call, event, base))
    return out + reported(events, base)


def _is_shell(call: Event) -> bool:
    return (call.tool in SHELL_TOOLS or call.action == "run"
            or call.tool.lower() in {"bash", "shell", "terminal"})


def _output(text: str) -> str:
    """What a command printed, without the headers a tool puts around it."""
    lines = (line.strip() for line in _clean(text).splitlines())
    return "\n".join(line for line in lines if line and not _HEADER.match(line))


def _failed(result: Event, command: commands.Command) -> bool:
    """Whether a run failed: its tool says so, or its status was hidden by a pipe into a filter
    and its output shows a failure's marks."""
    if result.error:
        return True
    text = _clean(result.text)
    return command.piped and bool(_FAILURE_MARK.search(text) or _FAILURE_COUNT.search(text))


def _changed_options(before: commands.Command, after: commands.Command) -> str:
    added = sorted(after.options - before.options - _NEUTRAL)
    if not added or any(a in _SELECTING or a.startswith("--test") for a in added):
        return ""  # nothing changed, or the passing run ran fewer tests
    kinds = "variable" if all(a.endswith("=") for a in added) else "flag"
    return (f"adding the {kinds}{'s' if len(added) > 1 else ''} "
            + ", ".join(f"`{a.rstrip('=')}`" for a in added[:4]))


def _streak_lessons(runs: list[_Failure], call: Event, success: Event, base: str) -> list[Candidate]:
    last = runs[-1]
    key = key_line(last.result.text)
    if _STYLE.search(key) or commands.is_lint(last.command) \
            or any(_ENVIRONMENT.search(key_line(r.result.text)) for r in runs):
        return []
    files = relative(flat(e.files for e in last.edits), base)
    test_run = bool(_TEST_RUN.search(last.command.key))
    out = []
    # "No module named x", then installing x: the error said what to do.
    missing_installed = (bool(_MISSING.search(key)) and not last.edits and bool(last.fixes)
                         and all(f.startswith("installing") for f in last.fixes))
    fixed_tests_only = test_run and files and not last.fixes and all(_TEST_FILE.search(f) for f in files)
    # An edit says what changed, not why: it needs the agent's diagnosis to teach something.
    explained = bool(last.fixes) or bool(diagnosis(last.said, _subject(last)))
    if explained and not fixed_tests_only and not missing_installed:
        out.append(_lesson(call, success, runs, base))
    # An edit that got the command past one error into another, when the agent said why.
    for i, earlier in enumerate(runs[:-1]):
        later = runs[i + 1]
        if earlier.edits and not earlier.fixes and diagnosis(earlier.said, _subject(earlier)) \
                and _got_past(earlier, later):
            out.append(_lesson(later.call, later.result, runs[: i + 1], base, then="it failed differently"))
    # A dependency change that got the command past its first error, into another one.
    installs = [f for r in runs[:-1] for f in r.fixes if f.startswith("installing")]
    first = key_line(runs[0].result.text)
    seen = list(dict.fromkeys(key_line(r.result.text) for r in runs[:-1]))[:2]
    # Installing what the error said was missing teaches nothing.
    if installs and first != key and not all(_MISSING.search(k) for k in seen):
        command = shorten(_shown(last.command), 80)
        lines = [f"`{command}` failed with:", *(f"    {shorten(k, 200)}" for k in seen)]
        why = diagnosis(runs[0].said, _subject(runs[0]))
        if why:
            lines.append(f"Why: {why}")
        lines.append(f"Fixed by {installs[-1]}; then it got past that error.")
        evidence = tuple(sorted({r.result.line for r in runs[:-1]} | {runs[-1].result.line}))
        out.append(Candidate("lesson", make_title(f"{command}: {seen[0]}", 110, capital=False),
                             "\n".join(lines), "inferred", 0.6, evidence))
    return out


def _subject(failure: _Failure) -> str:
    """What a diagnosis of `failure` speaks of: its output, the command, the files and functions
    the fix changed."""
    changed = " ".join(f"{' '.join(e.files)} {' '.join(e.symbols)}" for e in failure.edits)
    return f"{_clean(failure.result.text)[:20_000]} {failure.command.core} {changed}".replace("_", " ")


def _same(one: str, other: str) -> bool:
    """Whether two error lines say the same thing (line numbers aside)."""
    return _unnumbered(one) == _unnumbered(other)


def _unnumbered(text: str) -> str:
    return re.sub(r"\d+(?:[:.,]\d+)*", "#", text)


def _got_past(earlier: _Failure, later: _Failure) -> bool:
    key = key_line(earlier.result.text)
    if key == "it failed" or _same(key, key_line(later.result.text)) or _STYLE.search(key):
        return False
    return _unnumbered(key) not in _unnumbered(" ".join(_clean(later.result.text).split()))


def _lesson(call: Event, success: Event, runs: list[_Failure], base: str,
            then: str = "it passed") -> Candidate:
    last = runs[-1]
    key = key_line(last.result.text)
    files = relative(flat(e.files for e in last.edits), base)
    symbols = tuple(dict.fromkeys(s for e in last.edits for s in e.symbols))
    command = shorten(_shown(last.command), 80)
    how = list(last.fixes)
    if files:
        changed = f" ({', '.join(symbols[:6])})" if symbols else ""
        how.insert(0, f"changing {', '.join(files[:6])}{changed}")
    lines = [f"`{command}` failed with:", f"    {key}"]
    why = diagnosis(last.said, _subject(last))
    if why:
        lines.append(f"Why: {why}")
    lines.append(f"Fixed by {' and '.join(dict.fromkeys(how))}; then {then}.")
    for i, earlier in enumerate(runs[:-1]):
        tried = relative(flat(e.files for e in earlier.edits), base)
        before, after = key_line(earlier.result.text), key_line(runs[i + 1].result.text)
        if tried and _same(before, after):
            lines.append(f"Dead end: changing {', '.join(tried[:4])} did not help "
                         f"(still `{shorten(before, 120)}`).")
    title = make_title(f"{command}: {key}", 110, capital=False)
    evidence = tuple(sorted({r.result.line for r in runs} | {e.line for e in last.edits} | {success.line}))
    anchored = tuple(f"{files[0]}::{s}" for s in symbols[:6]) if len(files) == 1 else symbols[:6]
    return Candidate("lesson", title, "\n".join(lines), "inferred", 0.6, evidence, files=files,
                     symbols=anchored)


@functools.lru_cache(maxsize=512)
def key_line(text: str) -> str:
    """The line of a failed command's output that names the error: a traceback's exception, a
    failed test's id, an `error:`/`Error` line, a compiler's `file:line:` diagnostic, else the
    first line that is not a header, a hint, a stack frame or a progress bar. A line ending in
    `:` takes the next one with it."""
    lines = [line.strip()[:_LINE] for line in _clean(text).splitlines()]
    if len(lines) > 2 * _LINES:  # a long log: its start and its end say what failed
        lines = lines[:_LINES] + lines[-_LINES:]
    useful = [i for i, line in enumerate(lines) if line and not _NOISE.match(line)]
    chosen = None
    tracebacks = [m.start() for m in _TRACEBACK.finditer("\n".join(lines))]
    if tracebacks:
        start = "\n".join(lines)[: tracebacks[-1]].count("\n")
        chosen = next((i for i in useful if i > start and _EXCEPTION.match(lines[i])
                       and not lines[i].startswith("File ")), None)
    # The error itself first; a failed test's summary line when that is all there is.
    for pattern in (_PYTEST_E, _RAISED, _NAMED, _FAILED, _DIAGNOSTIC):
        if chosen is None:
            chosen = next((i for i in useful if pattern.search(lines[i]) and not _warning(lines[i])
                           and (pattern is _FAILED or not _FAILED.match(lines[i]))), None)
    if chosen is None:
        chosen = useful[0] if useful else None
    if chosen is None:
        return "it failed"
    line = lines[chosen]
    if line.endswith(":") or _DIAGNOSTIC.fullmatch(line):
        # The line after, unless it is a runner's separator (pytest's "____ test_name ____").
        following = next((lines[i] for i in useful if i > chosen and not _RULER.match(lines[i])), "")
        line = f"{line} {following.lstrip('*-• ')}".strip()
    return re.sub(r"^(?:E\s+|\[[^\]]*\]:?\s*)", "", line)[:200]


def _warning(line: str) -> bool:
    return bool(re.match(r"(?i)^(?:⚠\s*)?warn(?:ing)?\b", line)) and not re.search(r"(?i)\berror\b", line)


def _clean(text: str) -> str:
    text = _ANSI.sub("", text)
    if "\\n\\n" in text:  # a hook's output quoted with escaped newlines
        text = text.replace("\\n", "\n")
    return text


def _shown(command: str | commands.Command) -> str:
    """The command as a reader should see it: its core with flags, or its key when the core
    holds a script or a message."""
    parsed = commands.parse(command) if isinstance(command, str) else command
    return parsed.core if "\n" not in parsed.core and len(parsed.core) <= 120 else parsed.key
