"""Decisions the user made: an answer to a question the agent asked through a tool (the option
picked, the options turned down, the note the user typed), a plan the user approved, one of the
options the agent listed in text, and (from `chosen`) the choices stated in the user's words."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgit.agents.events import Event
from memgit.capture.candidate import Candidate, anchored_files, make_title, shorten
from memgit.capture.chosen import first_sentence, said

_OPTION = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?(?:[-*][ \t]*)?(?:\*\*)?(?:option[ \t]+)?(?P<label>[A-Da-d1-9]|方案[一二三四1-9])[.):：]"
                     r"[ \t]*(?:\*\*)?[ \t]*(?P<text>.+)$",
                     re.IGNORECASE | re.MULTILINE)
_OFFER = re.compile(r"which (?:one|option|do you|would you)|do you prefer|should i|shall i|would you like|"
                    r"you(?:'d)? prefer|选哪|哪个|哪种|要不要|是否", re.IGNORECASE)
_PLAN = re.compile(r"^[ \t]*(?:#+[ \t]*)?(?:\*\*)?(?:plan|here'?s (?:the|my) plan|proposed plan|计划|方案)\b",
                   re.IGNORECASE | re.MULTILINE)
_CHOICE = re.compile(r"(?:(?:go with|let'?s (?:do|use|go with)|use|pick|choose|take|prefer|选|用|就用)\s*"
                     r"(?:the\s+)?(?:option\s+|方案)?|\boption\s+|^\s*(?:the\s+)?(?=(?:first|second|third|last)\b)"
                     r"|^\s*(?=[A-Da-d1-9]\s*(?:please|pls|it is|sounds good|is (?:better|fine|good))?[.!]?\s*$))"
                     r"(?P<label>first|second|third|last|[A-Da-d1-9]|一|二|三)(?![A-Za-z0-9])", re.IGNORECASE)
_ORDINAL = {"first": "1", "second": "2", "third": "3", "一": "1", "二": "2", "三": "3"}
_APPROVE = re.compile(r"^\s*(?:yes|yep|yeah|ok(?:ay)?|sure|sounds good|looks good|lgtm|approved?|go ahead|do it"
                      r"|proceed|implement (?:the|this|it)|ship it|let'?s (?:do it|go|proceed|implement)"
                      r"|好的?|可以|同意|行|开始)(?![A-Za-z])", re.IGNORECASE)
#: A label's "(Recommended)" mark; `(?<!\s)` starts a try only where a run of spaces starts (no backtracking).
_RECOMMENDED = re.compile(r"(?<!\s)\s*[(\[]\s*recommended\s*[)\]]\s*$|(?<!\s)\s+[-—–]\s*recommended\s*$",
                          re.IGNORECASE)
_NOTE = re.compile(r"^[ \t]*(?:user[_ ]note|note|other)[ \t]*[:：][ \t]*", re.IGNORECASE | re.MULTILINE)
_WORD = re.compile(r"[a-z0-9]{3,}")
#: An answer that turns every option down and says nothing else: no choice was made.
_DECLINED = re.compile(r"\W*(?:none(?: of (?:the above|these|those|them|the options))?"
                       r"|neither(?: of (?:them|these))?|no preference|not sure|skip|n/?a|i don'?t know"
                       r"|idk|other)\W*",
                       re.IGNORECASE)


def decisions(events: Sequence[Event]) -> list[Candidate]:
    """Every decision the user made in `events` (sub-agents' events are not the user's)."""
    events = [e for e in events if not e.sidechain]
    out: list[Candidate] = []
    last_agent: Event | None = None
    for i, event in enumerate(events):
        if event.role == "choice":
            found = _answered(event)
        elif event.role == "plan":
            found = _approved(event, events[i + 1:])
        elif event.role == "assistant":
            last_agent = event
            continue
        elif event.role == "user":
            offer, last_agent = last_agent, None
            found = _picked(offer, event) if offer is not None else None
            if found is None:
                out.extend(said(event, events[i + 1:]))
        else:
            continue
        if found is not None:
            out.append(found)
    return _latest(out)


def _latest(found: list[Candidate]) -> list[Candidate]:
    """A later "use X instead" of the same kind of thing ("… font") overrides an earlier one."""
    def kind_of(c: Candidate) -> str:
        first = c.body.split("\n", 1)[0]
        return first.rsplit(" ", 1)[-1].lower() if first.startswith("Chosen: ") and " " in first[8:] else ""
    kinds = [kind_of(c) for c in found]
    return [c for i, c in enumerate(found) if not kinds[i] or kinds[i] not in kinds[i + 1:]]


# -- answers to a question asked through a tool ----------------------------------------------------

def _answered(event: Event) -> Candidate | None:
    answer = event.text.strip()
    if not answer or event.error:
        return None
    offered = [(label, _RECOMMENDED.sub("", label).strip()) for label in event.options if label.strip()]
    by_name = {form.lower(): plain for label, plain in offered for form in (label, plain)}
    first, _, after = answer.partition("\n")
    parts = [p.strip() for p in first.split(";")]
    if all(p.lower() in by_name for p in parts):  # the labels picked, then what the user typed
        picked, rest, free = [by_name[p.lower()] for p in parts], after, False
    else:
        picked, rest, free = [], answer, True
        for label, plain in sorted(offered, key=lambda o: -len(o[0])):
            for form in (label, plain):
                found = re.search(rf"(?<!\w){re.escape(form)}(?!\w)", rest, re.IGNORECASE) if form else None
                if found:
                    picked.append(plain)
                    rest = rest[:found.start()] + rest[found.end():]
                    break
    note = _NOTE.sub("", rest).strip(" \n,;:-—")
    if picked and free:  # an option named inside the user's sentence: keep the sentence, not glue words
        note = _NOTE.sub("", answer).strip() if _says_something(note) else ""
    if not picked:
        close = _closest(answer, [plain for _, plain in offered])
        picked = [close] if close else []
        note = _NOTE.sub("", answer).strip()
    if not picked and not _says_something(note):
        return None  # a bare "ok" or "other" says nothing
    question = " ".join(event.target.split())
    rejected = [plain for _, plain in offered if plain not in picked]
    lines = [f"Question: {question}"] if question else []
    if picked:
        lines.append("Chosen: " + "; ".join(picked))
    if rejected:
        lines.append("Rejected: " + "; ".join(rejected))
    if note:
        lines.append(f"The user's note: {shorten(note, 400)}")
    body = "\n".join(lines)
    if note:
        title = make_title(first_sentence(note))
    else:
        title = make_title(f"{'; '.join(picked)} — {question.rstrip('?？ ')}" if question else picked[0])
    files = anchored_files(" ".join([*picked, note]))  # not the files of the options turned down
    return Candidate("decision", title, body, "user", 0.9, (event.line,), files=files)


def _says_something(text: str) -> bool:
    if _DECLINED.fullmatch(text):
        return False
    return len(_WORD.findall(text.lower())) >= 2 or len(re.findall(r"[\u4e00-\u9fff]", text)) >= 3


def _closest(answer: str, options: list[str]) -> str | None:
    """The one option a free-text answer says in other words (most of its words), if any."""
    said = set(_WORD.findall(answer.lower()))
    scored = []
    for option in options:
        words = set(_WORD.findall(option.lower()))
        shared = len(words & said)
        if words and shared >= 2 and shared * 2 >= len(words):
            scored.append((shared, option))
    scored.sort(reverse=True)
    if not scored or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return scored[0][1]


# -- plans ------------------------------------------------------------------------------------------

def _approved(plan: Event, after: Sequence[Event]) -> Candidate | None:
    if plan.error or not plan.text.strip():
        return None
    at = next((i for i, e in enumerate(after) if e.role in ("user", "plan")), len(after))
    reply = after[at] if at < len(after) else None
    said_yes = reply is not None and reply.role == "user" and len(reply.text) < 120 \
        and bool(_APPROVE.match(reply.text))
    # A plan put through a tool (Claude Code's ExitPlanMode) that was not rejected lets the agent
    # go on: its edits before the user says anything are the plan carried out.
    carried_out = any(e.role == "tool_call" and e.action == "edit" for e in after[:at])
    if not (said_yes or plan.tool or carried_out):
        return None
    title, goal, points = _outline(plan.text)
    body = "The user approved this plan" + (f": {goal}" if goal else ".")
    if points:
        body += "\n" + "\n".join(f"- {p}" for p in points)
    evidence = (plan.line, reply.line) if said_yes and reply is not None else (plan.line,)
    return Candidate("decision", make_title(f"Approved plan: {title}"), body, "user", 0.9, evidence,
                     files=anchored_files(body))


def _outline(text: str) -> tuple[str, str, list[str]]:
    """A plan's title, its goal (the first sentence of prose) and its headings or first steps."""
    text = re.sub(r"</?proposed_plan>", "", text)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    title, goal, headings, steps = "", "", [], []
    for line in lines:
        heading = re.match(r"^#{1,6}\s+(.+)$", line)
        step = re.match(r"^(?:[-*]|\d+[.)])\s+(.+)$", line)
        if heading:
            if not title:
                title = heading.group(1).strip("* ")
            else:
                headings.append(heading.group(1).strip("* "))
        elif step:
            steps.append(shorten(step.group(1).strip("* "), 120))
        elif not goal:
            goal = shorten(first_sentence(line), 200)
    if not title:
        title = goal or (steps[0] if steps else shorten(lines[0], 80) if lines else "")
        goal = "" if title == goal else goal
    boring = {"summary", "overview", "goal", "goals", "context", "notes"}
    points = [h for h in headings if h.lower() not in boring][:6] or steps[:5]
    return title.rstrip(":"), goal, points


def _picked(offer: Event, event: Event) -> Candidate | None:
    """The user picked one of the options the agent listed in text, or approved its plan."""
    options = {_label(m.group("label")): m.group("text").strip() for m in _OPTION.finditer(offer.text)}
    chose = _CHOICE.search(event.text)
    if chose and (event.text.rstrip().endswith(("?", "？"))
                  or re.search(r"\b(?:not|n't|no|never|instead of|rather than)\W*$", event.text[:chose.start()],
                               re.IGNORECASE)):
        chose = None  # a question about an option, or an option turned down
    if len(options) >= 2 and _OFFER.search(offer.text) and chose:
        label = _label(chose.group("label"))
        if label == "last":
            label = list(options)[-1]
        if label in options:
            picked = options[label].strip("* ")
            others = [text.strip("* ") for key, text in options.items() if key != label]
            body = (f"Chosen: {picked}\nRejected: " + "; ".join(others)
                    + f"\nThe user's words: {shorten(event.text, 300)}")
            return Candidate("decision", make_title(f"Chose: {picked}"), body, "user", 0.9,
                             (offer.line, event.line), files=anchored_files(picked))
    if _PLAN.search(offer.text) and _OFFER.search(offer.text) and _APPROVE.match(event.text) \
            and len(event.text) < 120:
        steps = [m.group("text").strip() for m in _OPTION.finditer(offer.text)]
        if len(steps) >= 2:
            goal = make_title(steps[0], 80)
            numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
            body = "The user approved this plan:\n" + numbered
            return Candidate("decision", make_title(f"Approved plan: {goal}"), body, "user", 0.9,
                             (offer.line, event.line), files=anchored_files(body))
    return None


def _label(label: str) -> str:
    label = label.lower().removeprefix("方案")
    return _ORDINAL.get(label, label)

