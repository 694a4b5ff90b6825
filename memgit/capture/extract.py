"""What a session taught, found in its transcript by rules (no model needed).

Four kinds of candidate, each with the transcript lines it came from:

- **conventions and preferences** the user stated, corrections included ("always…", "never…",
  "we use X, not Y", "don't…", "remember that…", "no, it's…"; 总是/不要/记住/我们用…):
  source `user`, confidence 0.9. Only the person's own messages count: not the agent's, not a
  sub-agent's prompt, not a compaction summary. Questions, hedged sentences ("maybe we
  should…") and thanks are not statements.
- **lessons**: a command that failed and then passed after edits. The failure's key line, the
  files and functions the fix changed; earlier edits that did not fix it are kept as dead ends.
  A failure never fixed in the session teaches nothing certain and is left out.
- **decisions**: the user picked one of the options the agent listed, or approved its plan.
- **a summary**: the goal (the first request), what was changed, how it ended.

Everything the agent merely supposed ("I think", "probably") is ignored: precision matters
more than recall. Pure: standard library only, no I/O.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from memgit.agents.events import EDIT_TOOLS, SHELL_TOOLS, Event, Transcript
from memgit.memory.anchors import extract_anchors
from memgit.memory.format import count_tokens

BODY_TOKENS = 300


@dataclass(frozen=True)
class Candidate:
    """A memory a transcript suggests, before anyone has agreed to keep it."""

    kind: str
    title: str
    body: str
    source: str
    confidence: float
    evidence: tuple[int, ...]  # transcript lines
    files: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    tags: tuple[str, ...] = ("captured",)
    notes: tuple[str, ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "title": self.title, "body": self.body, "source": self.source,
                "confidence": self.confidence, "files": list(self.files), "symbols": list(self.symbols),
                "tags": list(self.tags), "evidence": {"lines": list(self.evidence)},
                "notes": list(self.notes)}


def extract(transcript: Transcript, *, root: str = "", git_files: Sequence[str] = ()) -> list[Candidate]:
    """Every candidate in `transcript`; paths are made relative to `root` (the repository)."""
    base = root or transcript.cwd
    found = stated(transcript.events) + lessons(transcript.events, base) + decisions(transcript.events)
    summary = summarize(transcript, base, git_files)
    if summary is not None:
        found.append(summary)
    return [fit(c) for c in found]


# -- stated conventions and preferences --------------------------------------------------------

_EN_RULE = re.compile(
    r"^(?:(?:and|also|btw|by the way|ok|okay|please|oh)[,\s]+)*"
    r"(?P<rule>(?:always|never|don'?t|do not|avoid|from now on|going forward|in this (?:repo|project)"
    r"|we (?:always|never|use|don'?t|do not|prefer|require)|our \w+ (?:is|are|uses?)|prefer"
    r"|make sure (?:to|you)|use [^;]{1,60}? (?:instead of|rather than|not)"
    r"|we (?:target|support|deploy|pin|run on)|remember(?: that|:)|keep in mind(?: that)?|note that"
    r"|(?:no|nope|actually|wrong)[,:;!.]+\s*(?:it'?s|it is|we|the|use|that'?s|this)))\b(?P<rest>.*)",
    re.I,
)
_EN_INNER = re.compile(r"(?:,|;|\band)\s+(?:always|never|don'?t)\s+\w+", re.I)
_ZH_RULE = re.compile(r"(总是|始终|永远|一律|必须|务必|不要|别再|不许|禁止|记住|记得|以后|我们用|我们使用|统一用"
                      r"|不是.{1,20}而是|应该用)")
_HEDGE = re.compile(r"\b(maybe|perhaps|i think|i guess|not sure|might|probably|i wonder)\b|可能|也许|好像|不确定",
                    re.I)
_REMEMBER_PREFIX = re.compile(
    r"^(?:(?:and|also|btw|by the way|ok|okay|please|oh|remember(?: that)?|keep in mind(?: that)?|note that"
    r"|no|nope|actually|wrong)[,:;!.\s]+)+|^(?:记住|记得)[：:，,\s]*", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])|(?<=[。！？；])|\n+")
_TEAM = re.compile(r"\b(?:we|our|us|this (?:repo|project|codebase)|the team)\b|我们|项目|统一|一律",
                   re.I)
_CODEY = re.compile(r"`|[\w-]+\.(?:py|js|ts|toml|json|ya?ml|md|cfg|ini|sh|go|rs|lock)\b|\b[a-z]+_[a-z_]+\b"
                    r"|--?\w")


def stated(events: Sequence[Event]) -> list[Candidate]:
    out: list[Candidate] = []
    for event in events:
        if event.role != "user" or event.sidechain:
            continue
        sentences = [s.strip() for s in _SENTENCE.split(event.text) if s and s.strip()]
        for i, sentence in enumerate(sentences):
            if not _is_rule(sentence):
                continue
            reason = ""
            following = sentences[i + 1] if i + 1 < len(sentences) else ""
            if _REASON.match(following) and not _is_rule(following):
                reason = following
            title = _title(_REMEMBER_PREFIX.sub("", sentence).strip() or sentence)
            body = sentence if not reason else f"{sentence} {reason}"
            anchors = extract_anchors(body)
            kind = "convention" if _CODEY.search(body) or anchors or _TEAM.search(body) else "preference"
            out.append(Candidate(kind, title, body, "user", 0.9, (event.line,),
                                 files=_anchored_files(body)))
    return out


_REASON = re.compile(r"(?:because|since|the |it |that |this |因为|这样)", re.I)


#: Sentences that start like a rule but are talk ("never mind", "no, it's fine") or hold only
#: for now ("don't run the tests for now").
_TALK = re.compile(r"\b(?:never ?mind|don'?t worry|no worries|(?:it'?s|that'?s|it is) (?:fine|ok|okay|good|right"
                   r"|alright)|don'?t bother|for now|this time|right now|today|yet|just this once)\b"
                   r"|暂时|这次|先不", re.I)


def _is_rule(sentence: str) -> bool:
    text = sentence.strip()
    if len(text) < 8 or text.endswith(("?", "？")) or _HEDGE.search(text) or _TALK.search(text):
        return False
    if _EN_RULE.match(text) or _EN_INNER.search(text):
        return len(text.split()) >= 3
    if _ZH_RULE.search(text):
        return len(re.findall(r"[\u4e00-\u9fff]", text)) >= 5
    return False


def _is_file(anchor: str) -> bool:
    return bool(re.fullmatch(r"[\w.-]+\.(?:py|js|ts|toml|json|ya?ml|md|cfg|ini|sh|go|rs|lock|txt)", anchor))


def _title(text: str, limit: int = 100, *, capital: bool = True) -> str:
    text = " ".join(text.split()).rstrip(" .。")
    first = text.split(" ", 1)[0]
    if capital and first.replace("'", "").isalpha() and first.islower():
        text = text[:1].upper() + text[1:]
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


# -- lessons: a failure, then what fixed it ----------------------------------------------------

_KEY_LINE = re.compile(r"^\s*(?:E\s+)?(?:\w+(?:\.\w+)*(?:Error|Exception|Failure)\b.*|FAILED .*|fatal: .*"
                       r"|error(?:\[\w+\])?: .*"
                       r"|npm ERR! .*|\S+:\d+:\d*:? error.*)$", re.M)
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
    files = _relative(_flat(e.files for e in fix), base)
    symbols = tuple(dict.fromkeys(s for e in fix for s in e.symbols))
    command = _short(call.command, 80)
    lines = [f"`{command}` failed with:", f"    {key}",
             f"Fixed by changing {', '.join(files) or 'the code'}"
             + (f" ({', '.join(symbols[:6])})" if symbols else "") + f"; then {then}."]
    for i, (_, earlier, tried) in enumerate(runs[:-1]):
        if not tried:
            continue
        tried_files = ", ".join(_relative(_flat(e.files for e in tried), base))
        before, after = _key_line(earlier.text), _key_line(runs[i + 1][1].text)
        if before == after:
            lines.append(f"Dead end: changing {tried_files} did not help (still `{_short(before, 120)}`).")
    title = _title(f"{command}: {key}", 110, capital=False)
    evidence = tuple(sorted({r[1].line for r in runs} | {e.line for e in fix} | {success.line}))
    anchored = tuple(f"{files[0]}::{s}" for s in symbols[:6]) if len(files) == 1 else symbols[:6]
    return Candidate("lesson", title, "\n".join(lines), "inferred", 0.6, evidence, files=files,
                     symbols=anchored)


def _flat(groups: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f for group in groups for f in group))


def _relative(files: Sequence[str], base: str) -> tuple[str, ...]:
    out = []
    for path in files:
        if base and os.path.isabs(path):
            rel = os.path.relpath(path, base)
            path = path if rel.startswith("..") else rel
        out.append(path.replace(os.sep, "/"))
    return tuple(dict.fromkeys(out))


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- decisions: the user chose among options, or approved a plan --------------------------------

_OPTION = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?(?:option\s+)?(?P<label>[A-Da-d1-9]|方案[一二三四1-9])[.):：]"
                     r"\s*(?:\*\*)?\s*(?P<text>.+)$",
                     re.I | re.M)
_OFFER = re.compile(r"which (?:one|option|do you|would you)|do you prefer|should i|shall i|would you like|"
                    r"you(?:'d)? prefer|选哪|哪个|哪种|要不要|是否", re.I)
_PLAN = re.compile(r"^\s*(?:#+\s*)?(?:\*\*)?(?:plan|here'?s (?:the|my) plan|proposed plan|计划|方案)\b",
                   re.I | re.M)
_CHOICE = re.compile(r"(?:go with|let'?s (?:do|use|go with)|use|pick|choose|take|prefer|选|用|就用)\s*"
                     r"(?:the\s+)?(?:option\s+|方案)?(?P<label>first|second|third|last|[A-Da-d1-9]|一|二|三)"
                     r"(?![A-Za-z0-9])", re.I)
_ORDINAL = {"first": "1", "second": "2", "third": "3", "一": "1", "二": "2", "三": "3"}
_APPROVE = re.compile(r"^\s*(?:yes|yep|ok(?:ay)?|sure|sounds good|lgtm|approved?|go ahead|do it|proceed"
                      r"|好的?|可以|同意|行)(?![A-Za-z])", re.I)


def decisions(events: Sequence[Event]) -> list[Candidate]:
    out: list[Candidate] = []
    last_agent: Event | None = None
    for event in events:
        if event.sidechain:
            continue
        if event.role == "assistant":
            last_agent = event
            continue
        if event.role != "user" or last_agent is None:
            continue
        offer, last_agent = last_agent, None
        options = {_label(m.group("label")): m.group("text").strip() for m in _OPTION.finditer(offer.text)}
        chose = _CHOICE.search(event.text)
        if len(options) >= 2 and _OFFER.search(offer.text) and chose:
            label = _label(chose.group("label"))
            if label == "last":
                label = list(options)[-1]
            if label in options:
                picked = options[label].strip("* ")
                others = [text.strip("* ") for key, text in options.items() if key != label]
                body = (f"Chosen: {picked}\nRejected: " + "; ".join(others)
                        + f"\nThe user's words: {_short(event.text, 300)}")
                out.append(Candidate("decision", _title(f"Chose: {picked}"), body, "user", 0.9,
                                     (offer.line, event.line), files=_anchored_files(picked)))
                continue
        if _PLAN.search(offer.text) and _OFFER.search(offer.text) and _APPROVE.match(event.text) \
                and len(event.text) < 120:
            steps = [m.group("text").strip() for m in _OPTION.finditer(offer.text)]
            if len(steps) >= 2:
                goal = _title(steps[0], 80)
                numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
                body = "The user approved this plan:\n" + numbered
                out.append(Candidate("decision", _title(f"Approved plan: {goal}"), body, "user", 0.9,
                                     (offer.line, event.line), files=_anchored_files(body)))
    return out


def _label(label: str) -> str:
    label = label.lower().removeprefix("方案")
    return _ORDINAL.get(label, label)


def _anchored_files(text: str) -> tuple[str, ...]:
    found = [a for a in extract_anchors(text) if "/" in a or _is_file(a)]
    # extract_anchors adds a path's file name too; the path says it already.
    return tuple(a for a in found if not any(other.endswith("/" + a) for other in found))


# -- the task summary ------------------------------------------------------------------------

def summarize(transcript: Transcript, base: str, git_files: Sequence[str]) -> Candidate | None:
    users = [e for e in transcript.events if e.role == "user" and not e.sidechain]
    if not users:
        return None
    goal_event = users[0]
    goal = _short(goal_event.text.strip().splitlines()[0], 160)
    edits = [e for e in transcript.events if e.role == "tool_call" and e.tool in EDIT_TOOLS]
    files = tuple(dict.fromkeys(_relative(_flat(e.files for e in edits), base) + tuple(git_files)))
    if not files:
        return None  # a conversation that changed nothing has no task to summarise
    symbols = tuple(dict.fromkeys(s for e in edits for s in e.symbols))
    results = [e for e in transcript.events if e.role == "tool_result"]
    calls = {e.call_id: e for e in transcript.events if e.role == "tool_call"}
    last_run = next((r for r in reversed(results) if calls.get(r.call_id) is not None
                     and calls[r.call_id].tool in SHELL_TOOLS), None)
    last_tool = max((i for i, e in enumerate(transcript.events) if e.role == "tool_result"), default=-1)
    final = next((e for e in transcript.events[last_tool + 1:] if e.role == "assistant" and not e.sidechain
                  and len(e.text.split()) >= 3 and not e.text.rstrip().endswith(("?", "？"))), None)
    lines = [f"Goal: {goal}", "Changed: " + ", ".join(files[:12]) + (" …" if len(files) > 12 else "")]
    if symbols:
        lines.append("Functions: " + ", ".join(symbols[:12]))
    if last_run is not None:
        command = _short(calls[last_run.call_id].command, 80)
        lines.append(f"Last command: `{command}` {'failed' if last_run.error else 'passed'}.")
    if final is not None:
        lines.append("Outcome: " + _short(final.text.strip().splitlines()[0], 200))
    evidence = (goal_event.line,) + tuple(e.line for e in edits[:20])
    return Candidate("summary", _title(f"Session: {goal}", 100), "\n".join(lines), "inferred", 0.5,
                     tuple(sorted(set(evidence))), files=files[:20])


def fit(candidate: Candidate) -> Candidate:
    """Cut a body to the token budget, line by line from the end, keeping its first lines."""
    body = candidate.body
    while count_tokens(body) > BODY_TOKENS and "\n" in body:
        body = body.rsplit("\n", 1)[0]
    while count_tokens(body) > BODY_TOKENS:
        body = body[: int(len(body) * 0.8)].rstrip() + "…"
    if body == candidate.body:
        return candidate
    return Candidate(candidate.kind, candidate.title, body, candidate.source, candidate.confidence,
                     candidate.evidence, candidate.files, candidate.symbols, candidate.tags, candidate.notes)
