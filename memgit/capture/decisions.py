"""Decisions the user made: an answer to a question the agent asked through a tool (the option
picked, the options turned down, the note the user typed), a plan the user approved, one of the
options the agent listed in text, and choices stated in the user's own words — a rename, a tool
or technology picked over another, a scope ("focus on the backend, I'll handle the frontend"),
something rejected ("we don't need X", "what if I didn't want X" and the agent removes it), a page
that should be the same as another. Sentences `stated` finds a rule in are left to it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgit.agents.events import SHELL_TOOLS, Event
from memgit.capture.candidate import Candidate, anchored_files, make_title, shorten
from memgit.capture.stated import stated

_OPTION = re.compile(r"^\s*(?:#{1,6}\s*)?(?:[-*]\s*)?(?:\*\*)?(?:option\s+)?(?P<label>[A-Da-d1-9]|方案[一二三四1-9])[.):：]"
                     r"\s*(?:\*\*)?\s*(?P<text>.+)$",
                     re.IGNORECASE | re.MULTILINE)
_OFFER = re.compile(r"which (?:one|option|do you|would you)|do you prefer|should i|shall i|would you like|"
                    r"you(?:'d)? prefer|选哪|哪个|哪种|要不要|是否", re.IGNORECASE)
_PLAN = re.compile(r"^\s*(?:#+\s*)?(?:\*\*)?(?:plan|here'?s (?:the|my) plan|proposed plan|计划|方案)\b",
                   re.IGNORECASE | re.MULTILINE)
_CHOICE = re.compile(r"(?:(?:go with|let'?s (?:do|use|go with)|use|pick|choose|take|prefer|选|用|就用)\s*"
                     r"(?:the\s+)?(?:option\s+|方案)?|\boption\s+|^\s*(?:the\s+)?(?=(?:first|second|third|last)\b)"
                     r"|^\s*(?=[A-Da-d1-9]\s*(?:please|pls|it is|sounds good|is (?:better|fine|good))?[.!]?\s*$))"
                     r"(?P<label>first|second|third|last|[A-Da-d1-9]|一|二|三)(?![A-Za-z0-9])", re.IGNORECASE)
_ORDINAL = {"first": "1", "second": "2", "third": "3", "一": "1", "二": "2", "三": "3"}
_APPROVE = re.compile(r"^\s*(?:yes|yep|yeah|ok(?:ay)?|sure|sounds good|looks good|lgtm|approved?|go ahead|do it"
                      r"|proceed|implement (?:the|this|it)|ship it|let'?s (?:do it|go|proceed|implement)"
                      r"|好的?|可以|同意|行|开始)(?![A-Za-z])", re.IGNORECASE)
_RECOMMENDED = re.compile(r"\s*[(\[]\s*recommended\s*[)\]]\s*$|\s+[-—–]\s*recommended\s*$", re.IGNORECASE)
_NOTE = re.compile(r"^\s*(?:user[_ ]note|note|other)\s*[:：]\s*", re.IGNORECASE | re.MULTILINE)
_WORD = re.compile(r"[a-z0-9]{3,}")
_FILLER = re.compile(r"^[-*>_=\s]*(?:(?:ok(?:ay)?|so|yes|yeah|well|and|also|alright|then|now|hmm+|right|great|good)"
                     r"[,.!:\s]+)*", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z@`\"'(])|(?<=[。！？；])|\n+")


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
                out.extend(_said(event, events[i + 1:]))
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
        title = make_title(_first_sentence(note))
    else:
        title = make_title(f"{'; '.join(picked)} — {question.rstrip('?？ ')}" if question else picked[0])
    files = anchored_files(" ".join([*picked, note]))  # not the files of the options turned down
    return Candidate("decision", title, body, "user", 0.9, (event.line,), files=files)


def _says_something(text: str) -> bool:
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
            goal = shorten(_first_sentence(line), 200)
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


def _first_sentence(text: str) -> str:
    parts = [p.strip() for p in _SENTENCE.split(text) if p and p.strip()]
    return parts[0] if parts else text.strip()


# -- choices stated in the user's own words ---------------------------------------------------------

_NAME = r"`[^`\n]{1,80}`|[\w@~./-]{2,80}"
_P = r"(?:[^,;.!?\n]|\.(?=\w))"  # a phrase's character: no clause break, dotted names allowed
_RENAMED = re.compile(
    rf"\b(?:i|we)(?:'ve| have)?\s+renamed\s+(?:(?:this|the|our|my)\s+)?(?:[\w-]+\s+){{0,3}}?"
    rf"(?:to\s+)?(?P<new>{_NAME})\s*,?\s+from\s+(?P<old>{_NAME})"
    rf"|\b(?:i|we)(?:'ve| have| just)?\s+renamed\s+(?:(?:the|this)\s+\w+\s+)?(?P<old2>{_NAME})\s+(?:to|->|→|as)\s+"
    rf"(?P<new2>{_NAME})"
    rf"|^\s*/?(?:git\s+)?mv\s+(?P<old3>\S+)\s+(?P<new3>\S+)\s*$", re.IGNORECASE)
_INSTEAD = re.compile(
    r"\b(?:use|using|go with|switch(?:ing)? to|move to|migrate to|stick with|keep using)\s+"
    rf"(?P<new>{_P}{{2,60}}?)\s+(?:instead|rather than)(?:\s+of)?(?:\s+(?P<old>{_P}{{2,80}}))?"
    rf"|\bswitch(?:ing)?\s+from\s+(?P<old2>{_P}{{2,40}}?)\s+to\s+(?P<new2>{_P}{{2,40}})",
    re.IGNORECASE)
_GO_WITH = re.compile(rf"\b(?:let'?s|we(?:'ll| will)|i(?:'ll| will)|we should)\s+(?:go|stick)\s+with\s+"
                      rf"(?P<new>{_P}{{2,60}})", re.IGNORECASE)
_WHENEVER = re.compile(rf"\bi(?:\s+(?:want|need)|'d like|\s+would like)\s+(?P<what>{_P}{{2,80}}?)\s+to\s+"
                       r"(?:be\s+|get\s+)?\w+(?:\s+\w+)?\s+(?:whenever|every\s*time|each time|automatically"
                       r"|on every|after every|as soon as)\b", re.IGNORECASE)
_SCOPE = re.compile(r"\bfocus(?: only)? on (?:the )?[\w /-]{2,40}?[,;]?\s*(?:and |while |as )?(?:the )?[\w /-]{2,40}?"
                    r"\s+i(?:'ll| will| can| am going to)?\s+(?:handle|do|take care of|build|own|cover)\b"
                    r"|\bfocus(?: only)? on (?:the )?[\w /-]{2,40}?[,;]?\s*(?:and\s+|while\s+)?i(?:'ll| will| can)?\s+"
                    r"(?:handle|do|take care of|build|own|cover)\b"
                    r"|\bi(?:'ll| will)\s+(?:handle|do|take care of|build|own)\s+(?:the\s+)?[\w /-]{2,30}?[,;]?\s+"
                    r"(?:you\s+)?(?:just\s+)?(?:focus|work|stick)\s+on\b"
                    r"|\bscope is(?: \w+)? (?:small|limited|narrow|minimal|tight)|\b(?:is|are) out of scope\b",
                    re.IGNORECASE)
_REJECT = re.compile(r"\b(?:i|we)\s+(?:do not|don'?t|dont|no longer)\s+(?:need|want|wanna)\s+"
                     r"(?:to\s+)?(?:(?:use|have|keep|handle|support|show)\s+)?(?P<what>[^,;!?]{3,80}?)(?:[,;!?]|\.\s|\.?$)"
                     r"|\b(?P<what2>[^,;.!?]{2,60}?)\s+(?:is|are)\s+(?:no longer|not)\s+(?:needed|necessary"
                     r"|required|used)(?:\s+anymore)?\b", re.IGNORECASE)
_SAME = re.compile(r"\bshould\s+(?:be|look|work)\s+(?:exactly\s+)?(?:the\s+)?same\s+(?:as|like)\b"
                   r"|\bmake\s+(?:it|this|[^,;.!?]{2,40})\s+(?:look\s+)?(?:exactly\s+)?(?:the\s+)?same\s+as\b"
                   r"|\bkeep it (?:in )?(?:that|the same) way\b", re.IGNORECASE)
_CHANGE_TO = re.compile(r"^(?:please\s+)?(?:change|switch|convert)\s+(?:it|this|that|them)\s+to\s+"
                        r"(?:`[^`]+`|[A-Z][a-z0-9]+[A-Z]\w*|\w+\.\w+\b)")
_WHAT_IF = re.compile(r"\b(?:what if (?:i|we) (?:didn'?t|don'?t|didnt|dont|did not|do not) (?:want|need)"
                      r"|do (?:we|i) (?:really |even |actually )?need)\s+(?:an?\s+|the\s+)?"
                      r"(?P<what>[^,;.!?]{2,60}?)\s*(?:tho|though|at all|anymore|here|there)?\s*\??\s*$",
                      re.IGNORECASE)
_REMOVED = re.compile(r"\b(?:remov|delet|dropp?|took out|taken out|take out|get rid|got rid|revert)",
                      re.IGNORECASE)
_RENAME_ASK = re.compile(r"\brenam", re.IGNORECASE)
_AGENT_RENAME = re.compile(rf"\brenam\w*\s+(?P<old>{_NAME})\s+to\s+(?P<new>{_NAME})", re.IGNORECASE)
_MV = re.compile(r"(?:^|&&|;)\s*(?:git\s+)?mv\s+(?:-\w+\s+)*(?P<old>[^\s;&|]+)\s+(?P<new>[^\s;&|]+)\s*(?:$|&&|;)")
_HEDGE = re.compile(r"\b(?:maybe|perhaps|i think|i guess|not sure|might|probably|i wonder|should we|could we"
                    r"|would it|is it possible)\b", re.IGNORECASE)
#: No durable object: a pronoun, "the other one", "a different approach", or talk about the answer itself.
_PRONOUN = re.compile(r"^(?:(?:it|that|this|them|those|these|one|anything|something|any)"
                      r"(?:\s+(?:one|ones|stuff|thing|things))?\s*$|you\b|to worry\b"
                      r"|(?:an?\s+|the\s+)?(?:first|second|third|last|other|previous|same|different|another"
                      r"|new|better|simpler)(?:\s+(?:one|ones|way|approach|option|version|method))?\s*$"
                      r"|(?:option|choice|approach|number)\s+\w{1,3}\s*$|your (?:suggestion|recommendation|plan)"
                      r"|(?:an?\s+|the\s+|any\s+)?(?:explanation|details?|summary|answer|examples?|help|more"
                      r"|further|lecture|apolog\w*|reply|response|confirmation|permission)\b)", re.IGNORECASE)
#: A question, asked with or without its question mark.
_ASKED = re.compile(r"^(?:how|what|why|where|which|when|who|can|could|would|should|shall|is|are|do|does|did"
                    r"|will|any idea)\b", re.IGNORECASE)
_HEADING = re.compile(r"^\s*#{1,6}\s+(.+)$", re.MULTILINE)
_REASON_NEXT = re.compile(r"^(?:because|since|as|the reason|that way|otherwise)\b", re.IGNORECASE)
_STRUCTURE = re.compile(r"^\s*(?:#|\||>|│|```|~~~|\d+\s*\|)")
_LONG_PASTE = 3000


def _said(event: Event, after: Sequence[Event]) -> list[Candidate]:
    """Decisions the user stated in a message; `after` is what followed (the agent's reply)."""
    if len(event.text) > _LONG_PASTE:
        return []  # a pasted document or log, not the user's words
    sentences = _sentences(event.text)
    reply = []
    for e in after:
        if e.role == "user":
            break
        reply.append(e)
    rules: list[str] | None = None
    for i, sentence in enumerate(sentences):
        plain = _FILLER.sub("", sentence).strip()
        if len(plain) < 8:
            continue
        found = _stated_choice(plain, reply)
        if found is None:
            continue
        if rules is None:
            rules = [_flat(c.body) for c in stated([event])]
        if any(_flat(plain) in rule or rule in _flat(plain) for rule in rules):
            continue  # a rule the user stated is a convention, found by `stated`
        lines, title = found
        if lines and lines[0] in ("Rejected: this", "Rejected: that", "Rejected: it"):
            heading = _HEADING.search(event.text)  # "this" is the section the user quoted
            lines[0] = f"Rejected: {heading.group(1).strip()}" if heading else lines[0]
        before = sentences[i - 1] if i else ""
        following = sentences[i + 1] if i + 1 < len(sentences) else ""
        words = plain
        if re.match(r"^so\b", sentence, re.IGNORECASE) and before:
            words = f"{before} {plain}"  # "so …" draws on the sentence before: that is the why
        if following and (_REASON_NEXT.match(following) or lines[:1] and lines[0].startswith("Rejected")):
            words = f"{words} {following}"  # why, or what replaces what was turned down
        body = "\n".join([*lines, f"The user's words: {shorten(words, 400)}"])
        return [Candidate("decision", make_title(title or plain), body, "user", 0.9, (event.line,),
                          files=anchored_files(body))]
    return []


def _flat(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(" .!")


def _stated_choice(sentence: str, reply: Sequence[Event]) -> tuple[list[str], str] | None:
    """What a sentence decided (body lines, and a title when not the sentence itself), or None."""
    asked = sentence.rstrip().endswith(("?", "？")) or bool(_ASKED.match(sentence))
    if _HEDGE.search(sentence) and not _WHAT_IF.search(sentence):
        return None
    rename = _RENAMED.search(sentence)
    if rename:
        old, new = (_strip(rename.group(k)) for k in _pair(rename))
        return [f"Renamed: {old} -> {new}"], ""
    if _RENAME_ASK.search(sentence):
        done = _renamed_by(reply)
        if done:
            return [f"Renamed: {done[0]} -> {done[1]}"], f"Renamed {done[0]} to {done[1]}"
    what_if = _WHAT_IF.search(sentence)
    if what_if and asked:
        removal = next((e for e in reply if e.role == "assistant" and _REMOVED.search(e.text)), None)
        what = re.sub(r"^(?:an?|the)\s+", "", what_if.group("what").strip(), flags=re.IGNORECASE)
        if removal is None or _PRONOUN.match(what):
            return None
        said = next((s for s in _sentences(removal.text) if _REMOVED.search(s)), removal.text)
        return [f"Rejected: {what}", f"The agent: {shorten(said, 200)}"], f"No {what}"
    if asked:
        return None
    instead = _INSTEAD.search(sentence)
    if instead:
        new = instead.group("new") or instead.group("new2") or ""
        old = instead.group("old") or instead.group("old2") or ""
        if not _PRONOUN.match(new.strip()):
            return [f"Chosen: {new.strip()}"] + ([f"Rejected: {old.strip()}"] if old else []), ""
    go_with = _GO_WITH.search(sentence)
    if go_with and not _PRONOUN.match(go_with.group("new").strip()):
        return [f"Chosen: {go_with.group('new').strip()}"], ""
    if _WHENEVER.search(sentence) or _SCOPE.search(sentence) or _SAME.search(sentence) \
            or _CHANGE_TO.search(sentence):
        return [], ""
    reject = _REJECT.search(sentence)
    if reject:
        what = (reject.group("what") or reject.group("what2") or "").strip()
        if what and not _PRONOUN.match(what) or reject.group("what2"):
            return [f"Rejected: {shorten(what, 80)}"], ""
    return None


def _pair(match: re.Match[str]) -> tuple[str, str]:
    for old, new in (("old", "new"), ("old2", "new2"), ("old3", "new3")):
        if match.group(old):
            return old, new
    return "old", "new"


def _strip(name: str) -> str:
    return name.strip("`'\",;:").rstrip(".")


def _renamed_by(reply: Sequence[Event]) -> tuple[str, str] | None:
    """The rename the agent carried out after the user asked for one: a `mv` it ran, or said."""
    for e in reply:
        if e.role == "tool_call" and (e.tool in SHELL_TOOLS or e.action == "run"):
            moved = _MV.search(e.command or e.text)
            if moved:
                return _strip(moved.group("old")), _strip(moved.group("new"))
        if e.role == "assistant":
            said = _AGENT_RENAME.search(e.text)
            # Files or folders, not a function renamed in the code (a change, not a decision).
            if said and all(re.search(r"/|\.\w{1,5}$", _strip(said.group(k))) for k in ("old", "new")):
                return _strip(said.group("old")), _strip(said.group("new"))
    return None


def _sentences(text: str) -> list[str]:
    """The user's sentences, outside code blocks, tables and quoted or pasted structure."""
    kept, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or _STRUCTURE.match(line):
            continue
        kept.append(line)
    # A line break inside a paragraph is wrapping, unless the next line starts a list item.
    text = re.sub(r"\n[ \t]*(?![ \t]*(?:[-*•]|\d+[.)])\s)(?=\S)", " ", "\n".join(kept))
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]
