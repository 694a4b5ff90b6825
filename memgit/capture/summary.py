"""The task summary: the goal (the request that led to the changes), what was changed, the
last check run, how it ended.

The goal is a request that states a task, in the person's words: greetings, "continue", "yes",
a lone word, a bare `/command`, a URL on its own, and pasted documents are not one; of a paste
(a long turn) its own title or first sentence is taken, unless it starts in the middle of a
sentence (a copied fragment); a question that asks for nothing is not one either; a pasted
error is ("Fix: <the error>"). The request whose answer first changed a file is preferred (a
session often opens with questions); a short confirmation ("yes, do it") or a follow-up ("then
give me the command") stands for the request before it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from memgit.agents.events import EDIT_TOOLS, SHELL_TOOLS, Event, Transcript
from memgit.capture.candidate import BODY_TOKENS, Candidate, flat, make_title, relative_paths, shorten
from memgit.memory.format import count_tokens

GOAL_CHARS = 160
#: A turn longer than this is a pasted document more than a request.
PASTE_CHARS = 1500
PASTE_LINES = 25

#: An agent CLI started with the prompt as its argument: `claude "…"`.
_CLI = re.compile(r"^(?:claude|codex|gemini|aider|opencode|cursor-agent)\s+(?:-p\s+)?[\"'](?P<rest>.*)$", re.DOTALL)
#: A skill's or command's text the agent put in the person's turn.
_INJECTED = re.compile(r"^(?:Base directory for this skill:|<skill|<command-|<system|<local-command|\[Image #?\d)")
_SLASH = re.compile(r"^/[A-Za-z][\w:.-]*(?:\s+|$)")
_PLEASANTRY = re.compile(
    r"^(?:hi|hello|hey|howdy|yo|good (?:morning|afternoon|evening|day)|greetings|thanks|thank you|thx|cheers"
    r"|hope (?:you|your)|how are you|how's it going)\b", re.IGNORECASE)
_CONFIRM = re.compile(r"^(?:yes|yep|yeah|yup|ok|okay|sure|right|go|great|perfect|cool|fine|nice|good|agreed"
                      r"|continue|proceed|next|go on|go ahead|keep going|carry on|do it|lgtm"
                      r"|sounds good|looks good|alright|all right|no|nope|si|sí|oui|ja|好的?|继续|是的?)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
_URL = re.compile(r"^(?:https?://|www\.)\S+$")
#: A command that checks the work: builds, tests, linters, type checkers, deploys.
_CHECK = re.compile(r"(?<![\w/.-])(?:test|tests|spec|build|compile|check|lint|typecheck|tsc|pytest|tox|nox|jest"
                    r"|vitest|mocha|cargo|go|mix|make|cmake|gradle|gradlew|mvn|dotnet|deploy|ruff|mypy|pyright"
                    r"|eslint|clippy|dialyzer|credo|rspec|phpunit|swift|xcodebuild|flutter)(?![\w/.-])")
#: ...and one that only asks, looks around, or keeps the agent's own books.
_ASKING = re.compile(r"\s(?:--version|-V|--help|-h)\b|^\s*(?:cd\s+\S+\s*&&\s*)?(?:which|type|command -v|ls|cat|head"
                     r"|tail|less|grep|rg|find|echo|printf|mkdir|touch|rm|cp|mv|wc|tree|git)\b"
                     r"|^\s*[A-Za-z_]\w*=\$[({]")
#: A shell command typed or pasted into the chat, not a request in words.
_SHELL = re.compile(r"^(?:\$\s*)?(?:sudo\s+)?(?:chmod|chown|cd|ls|git|npm|npx|yarn|pnpm|pip3?|python3?|node|cargo|go"
                    r"|make|docker|kubectl|for|while|rm|cp|mv|mkdir|curl|wget|export|source|zsh|bash|sh|brew|apt"
                    r"|apt-get|uv|poetry|pytest|mix|gradle|mvn|dotnet|cat|echo|touch|ln|tar)\s", re.IGNORECASE)
#: ...unless it reads as words: "make the button blue", "go through the PR and fix it".
_PROSE = re.compile(r"\b(?:the|a|an|to|and|for|of|in|with|from|instead|so|that|it|is|this|these|my|our|me|us|why"
                    r"|how|what|please)\b", re.IGNORECASE)
#: A request that goes on from an earlier one.
_CONTINUES = re.compile(r"^(?:then|now|also|and|next|after that|afterwards|plus)\b", re.IGNORECASE)
#: A question that asks for something to be done.
_REQUEST = re.compile(r"^(?:please\s+)?(?:can|could|would|will|may)\s+(?:you|we|u)\b|^(?:please|pls|let's|lets)\b",
                      re.IGNORECASE)
#: A compiler's or tool's error line: `e: file:///src/a.kt:27:15 Unresolved reference: x`,
#: `src/a.ts(3,5): error TS2304: …`, `Error: …`.
_ERROR = re.compile(r"^(?:(?:e|w|error|fatal)(?:\[\w-]+\])?:\s*\S*?:\d+(?::\d+)?:?\s+|\S+\(\d+,\d+\):\s*error\s+\w+:\s*"
                    r"|\S+:\d+:\d+:\s*error:\s*|[Ee]rror:\s+)(?P<message>\S.{3,})$|^(?P<named>[A-Z]\w*Error:\s+\S.{3,})$")
_PLEASE = re.compile(r"^(?:please|pls|plz|kindly)\b[,!.]?\s*", re.IGNORECASE)
_LEAD = re.compile(r"^(?:ok(?:ay)?|so|alright|well|now|right)\b[,!.]?\s+", re.IGNORECASE)


def summarize(transcript: Transcript, base: str, git_files: Sequence[str],
              place: Callable[[Sequence[str]], tuple[str, ...]] | None = None) -> Candidate | None:
    """The session's summary, or None when it changed nothing or stated no task. `place` makes
    the paths the repository's own (default: relative to `base`)."""
    where = place or (lambda paths: relative_paths(paths, base))
    events = [e for e in transcript.events if not e.sidechain or e.role == "tool_call"]
    edits = [e for e in events if e.role == "tool_call" and e.tool in EDIT_TOOLS]
    files = tuple(dict.fromkeys(where(flat(e.files for e in edits)) + where(tuple(git_files))))
    if not files:
        return None  # a conversation that changed nothing has no task to summarise
    found = goal(events)
    if found is None:
        return None  # changes, but no request saying what for: nothing to file them under
    goal_text, goal_line = found
    symbols = tuple(dict.fromkeys(s for e in edits for s in e.symbols))
    calls = {e.call_id: e for e in events if e.role == "tool_call"}
    runs = [r for r in events if r.role == "tool_result" and r.call_id in calls
            and calls[r.call_id].tool in SHELL_TOOLS]
    last_run = next((r for r in reversed(runs) if _check(calls[r.call_id].command)), None)
    last_tool = max((i for i, e in enumerate(events) if e.role == "tool_result"), default=-1)
    final = next((e for e in events[last_tool + 1:] if e.role == "assistant" and not e.sidechain
                  and len(e.text.split()) >= 3 and not e.text.rstrip().endswith(("?", "？"))), None)
    run = None
    if last_run is not None:
        command = shorten(calls[last_run.call_id].command, 80)
        run = f"Last command: `{command}` {'failed' if last_run.error else 'passed'}."
    outcome = "Outcome: " + shorten(_opening(final.text), 200) if final is not None else None
    body = _body(goal_text, files, symbols, run, outcome)
    evidence = (goal_line,) + tuple(e.line for e in edits[:20])
    return Candidate("summary", make_title(f"Session: {shorten(goal_text, 100)}", 100), body, "inferred", 0.5,
                     tuple(sorted(set(evidence))), files=files[:20])


def _opening(text: str) -> str:
    """The start of the agent's last message: its first line, and the next when the first
    only announces it ("Everything is done. Here's the summary:")."""
    lines = [line.strip() for line in text.strip().splitlines()
             if line.strip() and not re.fullmatch(r"</?[\w.-]+>", line.strip())]  # a tool's markup
    out = lines[0].lstrip("#*- ").strip() if lines else ""
    for line in lines[1:]:
        if not out.endswith((":", "：")):
            break
        if not line.startswith("#"):  # a heading says less than the line under it
            out = f"{out} {line.lstrip('*- ').strip()}"
    return out


def _body(goal_text: str, files: tuple[str, ...], symbols: tuple[str, ...], run: str | None,
          outcome: str | None) -> str:
    """The summary's lines within the token budget: the outcome and the functions go first,
    then files beyond the first few and words of the goal; "Changed:" always stays."""
    shown_files, shown_symbols, goal_chars = 12, 12, GOAL_CHARS
    while True:
        listed = ", ".join(files[:shown_files]) + (f" … (+{len(files) - shown_files})" if len(files) > shown_files
                                                   else "")
        lines = [f"Goal: {shorten(goal_text, goal_chars)}", f"Changed: {listed}"]
        if symbols[:shown_symbols]:
            lines.append("Functions: " + ", ".join(symbols[:shown_symbols]))
        lines += [line for line in (run, outcome) if line]
        body = "\n".join(lines)
        if count_tokens(body) <= BODY_TOKENS:
            return body
        if outcome:
            outcome = None
        elif shown_symbols > 4 and len(symbols) > 4:
            shown_symbols = 4
        elif shown_files > 4 and len(files) > 4:
            shown_files = 4
        elif run:
            run = None
        elif goal_chars > 60:
            goal_chars = 60
        elif symbols and shown_symbols:
            shown_symbols = 0
        elif shown_files > 1:
            shown_files = 1
        else:
            return body


# -- the goal -------------------------------------------------------------------------------------

def goal(events: Sequence[Event]) -> tuple[str, int] | None:
    """The task the session worked on, in the person's words, and its line; None if no turn
    states one."""
    turns = [i for i, e in enumerate(events) if e.role == "user" and not e.sidechain]
    tasks = [(i, task(events[i].text)) for i in turns]
    bounds = turns[1:] + [len(events)]
    changed = next((n for n, (start, end) in enumerate(zip(turns, bounds))
                    if any(e.role == "tool_call" and e.tool in EDIT_TOOLS for e in events[start:end])), None)
    if changed is not None:
        # The request that led to the first change; one that only goes on from an earlier
        # request ("then give me the command") stands for that one.
        stated = [(i, t) for i, t in tasks[:changed + 1] if t]
        found = next(((i, t) for i, t in reversed(stated) if not _CONTINUES.match(t)), None) or \
            (stated[0] if stated else None)
        if found is not None:
            return found[1], events[found[0]].line
    found = next(((i, t) for i, t in tasks if t), None)
    return (found[1], events[found[0]].line) if found is not None else None


def task(text: str) -> str:
    """The task a user turn states, shortened; empty when it states none."""
    text = text.strip()
    if _INJECTED.match(text):
        return ""
    cli = _CLI.match(text)
    if cli:
        text = cli.group("rest").strip().rstrip("\"'").strip()
    if _SLASH.match(text):  # a command or skill: only its arguments can say what for
        text = _SLASH.sub("", text, count=1).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    error = _ERROR.match(lines[0])
    if error:  # a pasted error: what to fix
        return _clean("Fix: " + (error.group("message") or error.group("named")))
    if len(text) > PASTE_CHARS or len(lines) > PASTE_LINES:
        return _pasted(lines)
    for line in lines:
        if _URL.match(line):
            continue
        found = _stated(line)
        if found:
            return found
        if _CONFIRM.match(line) or len(_words(line)) >= 3 and not _polite(line):
            return ""  # a confirmation, or a first sentence that asks for nothing
        # a link, a label ("Context:"), a pleasantry on its own: the next line may say it
    return ""


def _pasted(lines: list[str]) -> str:
    """A pasted document's own title, or its first sentence; the person's request after it if
    the paste starts in the middle of something."""
    first = lines[0]
    heading = re.match(r"^#{1,6}\s+(.+)$", first)
    if heading:
        return _clean(heading.group(1).strip("# "))
    if _fragment(first):
        last = lines[-1]
        return _stated(last) if len(last) < 300 else ""
    return _stated(_SENTENCE.split(first, 1)[0])


def _fragment(line: str) -> bool:
    """Whether `line` starts in the middle of a sentence: lower case, a bracket it never
    opened, a continuation mark."""
    if line[:1].islower() or line.startswith(("...", "…", ",", ";", ")", "]", "}")):
        return True
    return any(line.count(close) > line.count(open_) for open_, close in ("()", "[]", "{}"))


def _stated(line: str) -> str:
    """`line` as a goal, pleasantries left out; empty unless it says something to do."""
    if _URL.match(line):
        return ""
    sentences = [s for s in _SENTENCE.split(line.strip()) if s]
    while sentences and _PLEASANTRY.match(sentences[0]):
        sentences.pop(0)
    rest = " ".join(sentences)
    confirm = _CONFIRM.match(_PLEASE.sub("", rest, count=1))
    if confirm and len(_words(rest)) >= 8:  # "ok, I renamed this folder…": the rest says it
        rest = _LEAD.sub("", rest, count=1)
    words = _words(rest)
    if confirm and len(words) < 8:
        return ""  # "yes, do it", "continue please": the task is the turn before
    if len(words) < 3 or len(rest) < 12 or (_SHELL.match(rest) and not _PROSE.search(rest)):
        return ""
    if rest.rstrip().endswith(("?", "？")) and not _REQUEST.match(rest):
        return ""  # a question ("why is it X?"), not a request ("can you fix X?")
    return _clean(rest)


def _check(command: str) -> bool:
    """Whether `command` checks the work (a test, a build…) rather than looks around."""
    return bool(_CHECK.search(command)) and not _ASKING.search(command)


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]{2,}", text)


def _polite(line: str) -> bool:
    """Whether every sentence of `line` is a greeting, thanks or small talk."""
    return all(_PLEASANTRY.match(s) for s in _SENTENCE.split(line.strip()) if s)


def _clean(text: str) -> str:
    """`text` as a goal: a line that introduced a list ("Build X with:") without its colon and
    dangling last word."""
    text = text.strip()
    if text.endswith((":", "：")):
        text = re.sub(r"\s+(?:with|and|or|the|to|for|of|in|as|like|using|including|following)$", "",
                      text.rstrip(":：").strip(), flags=re.IGNORECASE)
    return shorten(text, GOAL_CHARS)
