"""Conventions and preferences the user stated, corrections included: source `user`,
confidence 0.9.

Only the person's own words count: not the agent's, not a sub-agent's prompt, not a
compaction summary, not what tools injected (`memgit.agents.readers.noise`), not another
agent's role prompt or a quote pasted in (`memgit.capture.message`). A rule can be stated
anywhere in a sentence and in any register — "always…", "never…", "don't…", "we use X, not
Y", "i'd prefer…", "i don't want it to show…", "keep the comments", "make sure…", "X should be
displayed as Y", "remember that…", "no, it's…", a list under "Do NOT:" or "Constraints:",
lines under "add these conventions", 总是/不要/记住/我们用… — and a correction the agent
then acts on ("why didn't you…?", "how can you say X without checking Y") counts too.

Not rules: questions, hedged sentences ("maybe we should…"), talk ("never mind"), what holds
only for the task at hand ("reorder the lists, DO NOT CHANGE the contents", "…for now"), and
instructions about how an AI should behave ("do not guess"). A pasted document keeps only the
rules that are about code, and no message yields more than a few: one that would yield ten
is a pasted prompt, not a person stating how the repository works."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgit.agents.events import Event
from memgit.capture.candidate import Candidate, anchored_files, make_title
from memgit.capture.message import Message, Unit, asks, read_message
from memgit.memory.anchors import extract_anchors

CHAT_CAP = 4  # rules one chat message may yield
DOCUMENT_CAP = 8  # rules one pasted document may yield
SENTENCE_CHARS = 400  # a longer run-on is pasted text, not a rule someone typed

_FILLER = (r"(?:(?:and|also|but|so|btw|by the way|ok(?:ay)?|k|please|pls|plz|oh|hey|well|like|yeah|yes"
           r"|fyi|one more thing|just|(?:my )?(?:dude|bro|mate|buddy)|important|critical|reminder|note|ps)"
           r"[,:;!.\s]+)*")
_EN_RULE = re.compile(
    _FILLER + r"(?P<rule>"
    r"always|never|don'?t|dont|do not|avoid|from now on|going forward|henceforth|in (?:the )?future|next time"
    r"|for future reference|(?:i'?m|we'?re|i am|we are) (?:on|using) (?:windows|macos|mac|linux|wsl|ubuntu)"
    r"|in this (?:repo|repository|project|codebase)"
    r"|we (?:always|never|use|don'?t|dont|do not|prefer|require|target|support|deploy|pin|run on|only|keep"
    r"|name|put|store|write)"
    r"|our \w+ (?:is|are|uses?|lives?|goes|go|runs?)"
    r"|(?:i|we) (?:would |'d )?(?:prefer|rather)|i'd rather|prefer"
    r"|(?:i|we) (?:really )?(?:don'?t|dont|do not) (?:want|need|like) (?!to\b)"
    r"|make sure (?:to|you|that|u|we|the|all|every|each|no)"
    r"|use [^;]{1,60}? (?:instead of|rather than|not|over)"
    r"|remember(?: that|:)|keep in mind(?: that)?|note that"
    r"|(?:keep|preserve|retain) (?!it\b|this\b|that\b|them\b|up\b|on\b|me\b|in mind|\w+ing\b)"
    r"|(?:whenever|every time|each time|any ?time) (?!you'?re ready|you can|possible)"
    r"|stop (?!doing|being|trying|working|it\b|that\b)\w+ing\b"
    r"|there (?:should|must|shall) (?:be no|never|always|only|not)"
    r"|(?:no|nope|actually|wrong)[,:;!.]+\s*(?:it'?s|it is|we|the|use|that'?s|this))\b(?P<rest>.*)",
    re.IGNORECASE,
)
#: A rule inside a longer sentence.
_EN_INNER = re.compile(
    r"(?:,|;|\band|\bbut|\bso|\bthen|\bplease)\s+(?:always|never|don'?t|dont|do not)\s+"
    r"(?!see\b|know\b|understand\b|get\b|think\b|have\b|mind\b|worry\b|care\b|remember\b|like\b|want\b|need\b"
    r"|seem\b|work\b|matter\b|bother\b|really\b|just\b|even\b|show\b|appear\b|happen\b)\w+"
    r"|(?:,|;|\band|\bbut|\bso)\s+i (?:really )?(?:don'?t|dont|do not) (?:want|need|like)\b(?! to\b)"
    r"|(?:,|;|\bbut|\bso)\s+we (?:always|never|use|don'?t|dont|do not|prefer|only use)\b"
    r"|\b(?:must|shall)\s+(?:always|never|not|only)\b|\bshould\s+(?:always|never|only)\b"
    r"|\bthere (?:should|must|shall) (?:be no|never|always|only|not)\b"
    r"|\bmust\s+(?:be|use|go|live|stay|pass|run|have|follow|match|include|call)\b"
    r"|\bshould (?:always |only )?be (?:displayed|shown|formatted|rendered|written|printed|named|spelled"
    r"|sorted|stored|placed|treated|kept|wrapped) (?:as|with|in|like|using|by|on|at|without)\b"
    r"|\b(?:create|add|make|write|set) (?:a|this|the|it|that|one) (?:rule|convention|guideline)"
    r"|\bas a (?:rule|convention)\b|\bthe (?:rule|convention) is\b"
    r"|\bwithout (?:the |any |a )?(?:co-?author|generated[- ]with|signed-off|attribution)"
    r"|\bi(?:'ll| will) (?:handle|take care of|do|own) (?:the )?\w+(?: \w+)? (?:myself|part|side)\b"
    r"|(?<=\w )i(?:'ll| will) (?:handle|take care of)(?: (?:it|that|myself))?\W*$|\bleave (?:the )?\w+(?: \w+)? to me\b",
    re.IGNORECASE)
_ZH_RULE = re.compile(r"(总是|始终|永远|一律|必须|务必|不要|别再|不许|禁止|记住|记得|以后|我们用|我们使用|统一用"
                      r"|不是.{1,20}而是|应该用)")
#: A correction: the agent got something wrong, the person says what is right.
_CORRECTION = re.compile(
    _FILLER + r"(?:why (?:didn'?t|did not|did|are|aren'?t|would|wouldn'?t|haven'?t|have) you\b"
    r"|shouldn'?t (?:this|that|it|we|you)\b|isn'?t (?:it|this|that) supposed to\b"
    r"|(?=[^ ]*(?:[^\w\s]|(?-i:[a-z][A-Z])|_))[^\s]+(?: [^\s]+){0,3} (?:doesn'?t|does not|don'?t"
    r"|do not|isn'?t|is not|won'?t|can'?t|cannot) (?:create|support|exist|accept|allow|take|return|make"
    r"|produce|generate|render|mean|count|belong|apply|go)\b)", re.IGNORECASE)
#: A correction no reply needs to confirm: a claim made without the check it needed.
_UNCHECKED = re.compile(r"\bhow (?:can|could|do) you (?:say|claim|tell|know|conclude|assume|decide)\b.*"
                        r"\b(?:if you (?:haven'?t|have not|didn'?t|did not|never)|without)\b", re.IGNORECASE)
#: How an agent's reply starts when it takes a correction.
_ACK = re.compile(r"\W*(?:you'?re (?:absolutely |totally |completely |quite )?right|you are (?:absolutely )?right"
                  r"|good (?:catch|point|call)|my (?:mistake|bad|apologies)|(?:i )?apologi[sz]e|sorry|fair point"
                  r"|oops|ah,? (?:right|yes|good|i see)|correct[,.!]|right[,.!—-]|got it|understood|indeed"
                  r"|that'?s right|thanks for (?:the correction|catching)|i stand corrected|i was wrong)", re.IGNORECASE)
_HEDGE = re.compile(r"\b(maybe|perhaps|i think|i guess|i suppose|not sure|might|probably|i wonder|could we"
                    r"|would it be|is it possible)\b|可能|也许|好像|不确定", re.IGNORECASE)
#: Sentences that start like a rule but are talk ("never mind", "no, it's fine") or hold only
#: for now ("don't run the tests for now", "now deploy it").
_TALK = re.compile(r"\b(?:never ?mind|(?:don'?t|dont|do not) worry|no worries|(?:it'?s|that'?s|it is) (?:fine|ok|okay|good|right"
                   r"|alright)|don'?t bother|for now|this time|right now|today|yet|just this once|we don'?t just"
                   r"|for this (?:task|change|pr|one|step)|in this (?:task|change|pr|step)|don'?t need to)\b"
                   r"|^" + _FILLER + r"now\b|暂时|这次|先不", re.IGNORECASE)
#: "Don't change the contents", "keep the header" while asking for a change: a guard on this
#: task, not a rule.
_GUARD = re.compile(_FILLER + r"(?:(?:don'?t|dont|do not|avoid|(?:i|we) (?:don'?t|dont|do not) want (?:you |it )?to)"
                    r"\s+(?:\w+ing\s+)?(?:break|remove|delete|change"
                    r"|modify|alter|rewrite|touch|edit|drop|undo|revert|lose|mess)\w*|keep|preserve|retain"
                    r"|make sure|ensure)\b",
                    re.IGNORECASE)
_KEEP = re.compile(_FILLER + r"(?:keep|preserve|retain|make sure|ensure)\b", re.IGNORECASE)
#: What points at the thing at hand: "don't do that", "keep it as is", "i don't like this".
_THIS = re.compile(_FILLER + r"(?:(?:don'?t|dont|do not)\s+\w+\s+(?:it|this|that|these|those|them|anything)\b"
                   r"|(?:keep|leave) \w+ (?:intact|as is|as-is|unchanged|alone)\b|(?:keep|preserve) [^,;]* but\b"
                   r"|(?:i|we) (?:really )?(?:don'?t|dont|do not) (?:want|need|like) (?:this|that|these|those"
                   r"|it\b(?! to)))", re.IGNORECASE)
#: "…, i don't want that, …" inside a sentence: the person reacts to what is on the screen.
_REACTS = re.compile(r"[,;:]\s*(?:but\s+|and\s+|so\s+)?(?:i|we) (?:really )?(?:don'?t|dont|do not) (?:want|like)"
                     r" (?:that|this|these|those|it)\b(?! to\b)", re.IGNORECASE)
_GENERAL = re.compile(r"\b(?:ever|always|from now on|going forward|in this (?:repo|repository|project|codebase)"
                      r"|any ?time|every time|whenever)\b", re.IGNORECASE)
#: How an AI should work, not how the code is: "do not guess", "read all docs first".
_AI_ALWAYS = re.compile(r"\b(?:guess\w*|invent(?:s|ed|ing)?|hallucinat\w*|fabricat\w*|speculat\w*|pretend\w*"
                        r"|make (?:stuff |things |anything |something )?up)\b"
                        r"|^" + _FILLER + r"(?:(?:do not|don'?t|dont|never|always|avoid)\s+)?(?:respond|reply|answer"
                        r"|apologi[sz]e|browse|google|hesitate|read (?:all |the |every )?(?:docs|documentation|everything))\b",
                        re.IGNORECASE)
_AI_DOCUMENT = re.compile(
    r"^" + _FILLER + r"(?:(?:do not|don'?t|dont|never|always|avoid|must)\s+)?(?:ask|respond|reply|answer|explain"
    r"|summari[sz]e|apologi[sz]e|read|browse|fetch|search|google|clone|git clone|copy|borrow|reference|cite"
    r"|mention|skip|stop|hesitate|wait|proceed|begin|output|think|plan|confirm|report)\b"
    r"|\b(?:docs|documentation|your (?:response|answer|output|reply|knowledge|memory|training|own)"
    r"|yourself|the user)\b", re.IGNORECASE)
#: Headers whose list items are each a rule; a negation header ("Do NOT:") is said before each.
_RULES_HEADER = re.compile(r"(?:(?:absolute |hard |ground |house |coding |code )?(?:rules?|constraints?"
                           r"|conventions?|guidelines?|limits?|standards?))\s*:$", re.IGNORECASE)
#: Headers that mark what follows as important: their items need a rule's words or emphasis.
_NOTICE_HEADER = re.compile(r"(?:important|critical|note|notes|warning|important (?:limits|notes))\s*:$",
                            re.IGNORECASE)
_EMPHASIS = re.compile(r"\b(?:NOT|NEVER|ALWAYS|ONLY|MUST|NO)\b")
#: "It always falls back…": a description of what something does, not a rule.
_DESCRIPTION = re.compile(_FILLER + r"(?:always|never) (?:\w*[^su\W]s\b|(?:the|a|an|same|this|that|my|so|been|again)\b)",
                          re.IGNORECASE)
#: A sentence that only illustrates the one before it.
_EXAMPLE = re.compile(r"(?:(?:for example|for instance|like this|such as)\b|e\.g\.)", re.IGNORECASE)
_NEGATION_HEADER = re.compile(r"(?:do not|don'?t|never|avoid|always|must not|you must not)\s*:$", re.IGNORECASE)
#: A message that says its lines are conventions: "add these conventions to CONVENTIONS.md".
_CONVENTIONS_INTRO = re.compile(
    _FILLER + r"(?:add|write|put|create|append|include|document|record|save|here are|these are|follow|use"
    r"|remember)\b.*\b(?:conventions?|rules|guidelines|style ?guide|coding standards?)\b", re.IGNORECASE)
_REMEMBER_PREFIX = re.compile(
    r"^(?:(?:and|also|but|so|btw|by the way|ok(?:ay)?|k|please|pls|plz|oh|hey|well|like|yeah|yes|fyi|just"
    r"|(?:my )?(?:dude|bro|mate|buddy)|important|critical|reminder|ps"
    r"|one more thing|remember(?: that)?|keep in mind(?: that)?|note that|no|nope|actually|wrong)[,:;!.\s]+)+"
    r"|^(?:记住|记得)[：:，,\s]*", re.IGNORECASE)
JOINED_CHARS = 600  # a rule said again grows up to this; past it, a rule that long is a document

_COMMON = {"the", "and", "not", "don", "dont", "never", "always", "please", "you", "for", "with", "this", "that"}
_REASON = re.compile(r"(?:because|since|the |it |that |this |因为|这样)", re.IGNORECASE)
_TEAM = re.compile(r"\b(?:we|our|us|this (?:repo|project|codebase)|the team)\b|我们|项目|统一|一律",
                   re.IGNORECASE)
_CODEY = re.compile(r"`|(?<![\w-])[\w-]+\.(?:py|js|ts|toml|json|ya?ml|md|cfg|ini|sh|go|rs|lock)\b|\b[a-z]+_[a-z_]+\b"
                    r"|--?\w")
#: Signs a sentence is about code: identifiers, files, calls, versions, capitalised names.
_CODE_TOKEN = re.compile(
    r"`|\b\w+\.\w+|\w\(\)|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b[a-z]+_[a-z_]+\b|\bv\d|\w/\w|--?\w"
    r"|\b(?!(?:NOT|DO|DONT|NEVER|ALWAYS|MUST|ONLY|ALL|ANY|NO|USE|AND|OR|THE|YES|IMPORTANT|CRITICAL|NOTE|IF"
    r"|YOU|WE|ONE|EVER|SHOULD|NEED|NOW|AI)\b)[A-Z]{3,}\b")
_TECH = re.compile(
    r"\b(?:server|database|db|schema|migrations?|tests?|build|builds|deploy\w*|commits?|branch\w*|api|endpoints?"
    r"|librar(?:y|ies)|dependenc(?:y|ies)|packages?|modules?|components?|functions?|class(?:es)?|methods?"
    r"|types?|config\w*|env|secrets?|keys?|tokens?|services?|backend|frontend|ui|css|styles?|fonts?|colou?rs?"
    r"|images?|files?|folders?|director(?:y|ies)|logs?|logging|errors?|exceptions?|quer(?:y|ies)|cache|routes?"
    r"|pages?|hooks?|lint\w*|format\w*|indent\w*|imports?|exports?|variables?|constants?|contracts?"
    r"|address(?:es)?|console|production|staging|docker|containers?|ci|pipelines?|releases?|versions?|sdk|cli"
    r"|scripts?|columns?|tables?|index(?:es)?|engines?|frameworks?|animations?|layout|comments?|docs?|markdown"
    r"|lists?|headings?|code|repo|codebase|changelog|readme|pr|prs|pull requests?|merge|rebase|push)\b",
    re.IGNORECASE)


def stated(events: Sequence[Event]) -> list[Candidate]:
    out: list[Candidate] = []
    said: list[set[str]] = []  # the words of each rule proposed so far
    for i, event in enumerate(events):
        if event.role != "user" or event.sidechain:
            continue
        message = read_message(event.text)
        if message.role_prompt or message.quoted:
            continue  # another agent's instructions, someone else's words
        for unit, reason in _rules(message, _reply(events, i)):
            words = _words(unit.text)
            if any(_restates(words, earlier) for earlier in said):
                continue
            # Only a later message says a rule again: items of one list are rules of their own.
            joined = next((n for n, earlier in enumerate(said)
                           if out[n].evidence[0] < event.line and _adds_to(words, earlier)), None)
            if joined is not None and len(out[joined].body) + len(unit.text) <= JOINED_CHARS:
                # Said again with a new clause: one rule, grown, not a second memory of it.
                out[joined] = _joined(out[joined], _candidate(event, unit, reason))
                said[joined] = said[joined] | words
                continue
            said.append(words)
            out.append(_candidate(event, unit, reason))
    return out


def _words(text: str) -> set[str]:
    found = {w.lower() for w in re.findall(r"[A-Za-z0-9_]{3,}|[\u4e00-\u9fff]", text)}
    return {w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w for w in found} - _COMMON


def _restates(words: set[str], earlier: set[str]) -> bool:
    """Whether a rule is mostly one the person said earlier in the session, in other words."""
    shared = len(words & earlier)
    return shared >= 4 and shared >= 0.6 * len(words)


def _adds_to(words: set[str], earlier: set[str]) -> bool:
    """Whether a rule is about the same thing as an earlier one, adding to it: "do not start
    the dev server; do not expose secrets", later "do not expose the service role key; do not
    start the dev server". Most of the shorter one's words are in the other."""
    shared = len(words & earlier)
    return shared >= 3 and shared >= 0.4 * min(len(words), len(earlier))


def _joined(first: Candidate, later: Candidate) -> Candidate:
    """`first` with what `later` adds: its clauses not already said, its lines and files."""
    have = _words(first.body)
    new = [c.strip() for c in re.split(r"(?<=[.;!])\s+", later.body) if c.strip()]
    added = [c for c in new if not _words(c) <= have]
    gap = " " if first.body.rstrip()[-1:] in ".;!?" else "; "
    body = first.body if not added else f"{first.body.rstrip()}{gap}{' '.join(added)}"
    kind = "convention" if "convention" in (first.kind, later.kind) else first.kind
    files = first.files + tuple(f for f in later.files if f not in first.files)
    return Candidate(kind, first.title, body, first.source, first.confidence,
                     tuple(sorted(set(first.evidence + later.evidence))), files, first.symbols,
                     first.tags, first.notes)


def _reply(events: Sequence[Event], i: int) -> str:
    """What the agent said first after the user's message at `i`."""
    for event in events[i + 1:]:
        if event.role == "user":
            return ""
        if event.role == "assistant" and not event.sidechain:
            return event.text
    return ""


def _rules(message: Message, reply: str) -> list[tuple[Unit, str]]:
    """The units of `message` that state a rule (a list said in one breath merged), each with
    the reason or example the person gave right after it, at most a few a message."""
    units = list(message.units)
    intro = bool(units) and bool(_CONVENTIONS_INTRO.match(units[0].text)) and len(units) > 1
    found: list[tuple[Unit, str]] = []
    for n, unit in enumerate(units):
        text, header = _said(unit), unit.header
        if unit.bullet and asks(header):
            continue  # a case the person asks about, not a rule
        listed = (intro and n > 0) or bool(header and (_RULES_HEADER.fullmatch(header) or _rule_header(unit)))
        if header and not listed and not _NEGATION_HEADER.fullmatch(header):
            if _NOTICE_HEADER.fullmatch(header):
                listed = bool(_EMPHASIS.search(text))
            elif (message.task or message.document) and not _EMPHASIS.search(text):
                continue  # a step of the task ("Improve:", "When saving:"), not a rule
        if _EXAMPLE.match(text) or not (_is_rule(text, message, reply) or (listed and _is_listed_rule(text, message))):
            continue
        if message.document and _AI_DOCUMENT.search(unit.text):
            continue  # how the AI should work, not how the code is
        following = units[n + 1].text if n + 1 < len(units) and units[n + 1].group == unit.group else ""
        reason = following if ((_REASON.match(following) or _EXAMPLE.match(following))
                                and not _is_rule(following, message, "")) else ""
        found.append((Unit(text, header, unit.group, unit.index, unit.bullet), reason))
    rated = [(unit, reason, _strength(unit.text)) for unit, reason in _merged(found)]
    cap, least = (DOCUMENT_CAP, 1) if message.document else (CHAT_CAP, 0)
    if len(rated) > CHAT_CAP and not intro and not message.document:
        # More rules than a person types in one message: a pasted prompt. Only what names code.
        rated = [r for r in rated if not _AI_DOCUMENT.search(r[0].text)]
        least = 2
    rated = [r for r in rated if r[2] >= least]  # in a pasted document only the rules about the code
    if len(rated) > cap:
        keep = sorted(rated, key=lambda r: (-r[2], r[0].index))[:cap]
        rated = [r for r in rated if r in keep]
    return [(unit, reason) for unit, reason, _ in rated]


def _rule_header(unit: Unit) -> bool:
    """A header that is a rule itself, its items what it holds for: "Keep this style:"."""
    return unit.bullet and bool(_EN_RULE.match(unit.header)) and not _NEGATION_HEADER.fullmatch(unit.header)


def _said(unit: Unit) -> str:
    """The unit as the person meant it: an item under "Do NOT:" is "Do NOT <item>", an item
    under "Keep this style:" is "Keep this style: <item>"."""
    if unit.bullet and _NEGATION_HEADER.fullmatch(unit.header):
        return f"{unit.header.rstrip(' :')} {unit.text[:1].lower()}{unit.text[1:]}"
    if _rule_header(unit):
        return f"{unit.header} {unit.text}"
    return unit.text


def _merged(found: list[tuple[Unit, str]]) -> list[tuple[Unit, str]]:
    """One list, one rule: the items under one header, or short rules one after another that
    start alike ("Do NOT add X. Do NOT add Y.")."""
    out: list[tuple[Unit, str]] = []
    for unit, reason in found:
        if out:
            last, last_reason = out[-1]
            same_list = bool(unit.header) and unit.header == last.header and unit.bullet and last.bullet
            alike = (unit.index == last.index + 1 and len(unit.text.split()) <= 5
                     and len(last.text.split(";")[-1].split()) <= 5 and _lead(unit.text) == _lead(last.text))
            if unit.group == last.group and not last_reason and (same_list or alike):
                item = unit.text.rstrip(".")
                if same_list and _rule_header(unit) and item.startswith(unit.header):
                    item = item[len(unit.header):].strip()
                text = f"{last.text.rstrip('.;')}; {item}"
                out[-1] = (Unit(text, last.header, last.group, unit.index, last.bullet), reason)
                continue
        out.append((unit, reason))
    return out


def _lead(text: str) -> str:
    """The words a rule starts with, up to its verb: "do not add", "always use"."""
    words = text.lower().split()
    lead = []
    for word in words:
        lead.append(word)
        if word not in ("do", "not", "don't", "dont", "never", "always", "please", "we", "i", "you", "must"):
            break
    return " ".join(lead)


def _is_rule(sentence: str, message: Message, reply: str) -> bool:
    text = sentence.strip()
    if not 8 <= len(text) <= SENTENCE_CHARS:
        return False
    if text.endswith((":", "：")):
        return False  # it points at what follows ("don't change X except this part:"), not a rule alone
    question = text.endswith(("?", "？"))
    if "how" in text.lower() and _UNCHECKED.search(text):
        shaped = True
    elif not question and (_EN_RULE.match(text) or (_hinted(text) and _EN_INNER.search(text))):
        shaped = len(text.split()) >= 3
    elif not question and _ZH_RULE.search(text):
        shaped = len(re.findall(r"[\u4e00-\u9fff]", text)) >= 5
    else:  # a correction the agent took: "why didn't you…?", "[[x]] doesn't create links"
        shaped = bool(reply and _ACK.match(reply) and _CORRECTION.match(text) and _content(text) >= 3)
        question = False
    return (shaped and not question and not _HEDGE.search(text) and not _TALK.search(text)
            and not _AI_ALWAYS.search(text) and not _DESCRIPTION.match(text) and not _for_this_task(text, message))


#: Words one of `_EN_INNER`'s rules holds: a cheap test before the costly one.
_INNER_HINTS = ("always", "never", "don't", "dont", "do not", "must", "shall", "should", "rule", "convention",
                "without", "'ll", " will ", "leave", "we ")


def _hinted(text: str) -> bool:
    low = text.lower()
    return any(hint in low for hint in _INNER_HINTS)


def _is_listed_rule(text: str, message: Message) -> bool:
    """An item of a list the person called rules or conventions: any statement will do."""
    return (len(text.split()) >= 2 and not text.endswith(("?", "？", ":")) and not _HEDGE.search(text)
            and not _TALK.search(text) and not _AI_ALWAYS.search(text) and not _for_this_task(text, message, True))


def _for_this_task(text: str, message: Message, listed: bool = False) -> bool:
    """A guard on the work asked for in the same message ("…, DO NOT CHANGE the contents"), or
    words about the thing at hand ("don't do that")."""
    if _GENERAL.search(text):
        return False
    if _THIS.match(text) or _REACTS.search(text):
        return True
    # A list the person called rules may say what to keep or ensure; a request's "keep X" is
    # about X now.
    return message.task and bool(_GUARD.match(text)) and not (listed and _KEEP.match(text))


def _content(text: str) -> int:
    return len([w for w in re.findall(r"[\w\[\]`.-]+", text) if len(w) > 3])


def _strength(text: str) -> int:
    """2 when a rule names code (an identifier, a file, a call), 1 when it speaks of code, else 0."""
    return 2 if _CODE_TOKEN.search(text) else 1 if _TECH.search(text) else 0


#: A sentence that opens with when or why the rule holds: "When I upload X, it should…".
_CLAUSE = re.compile(r"(?:when|whenever|if|after|before|once|while|as|since|for)\b[^,]{3,120},\s*(?P<rule>.{12,})",
                     re.IGNORECASE)


def _title(sentence: str) -> str:
    text = _REMEMBER_PREFIX.sub("", sentence).strip() or sentence
    clause = _CLAUSE.match(text)
    if clause and len(text) > 80 and (_EN_RULE.match(clause["rule"]) or _EN_INNER.search(clause["rule"])):
        text = clause["rule"]
    return make_title(text)


def _candidate(event: Event, unit: Unit, reason: str) -> Candidate:
    sentence = unit.text
    title = _title(sentence)
    body = sentence if not reason else f"{sentence} {reason}"
    anchors = extract_anchors(body)
    code = _CODEY.search(body) or _CODE_TOKEN.search(body) or anchors or _TEAM.search(body)
    kind = "convention" if code else "preference"
    return Candidate(kind, title, body, "user", 0.9, (event.line,), files=anchored_files(body))
