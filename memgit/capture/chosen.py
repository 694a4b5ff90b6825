"""Choices the user stated in words: a rename, a tool or technology picked over another, a scope
("focus on the backend, I'll handle the frontend"), something rejected ("I don't need X", "what if I
didn't want X" and the agent removes it), a page that should be the same as another. A sentence
`stated` finds a rule in is left to it; questions, hedges and vague objects are no choice."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgit.agents.events import SHELL_TOOLS, Event
from memgit.capture.candidate import Candidate, anchored_files, make_title, shorten
from memgit.capture.stated import stated

_FILLER = re.compile(r"^[-*>_=\s]*(?:(?:ok(?:ay)?|so|yes|yeah|well|and|also|alright|then|now|hmm+|right|great|good)"
                     r"[,.!:\s]+)*", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z@`\"'(])|(?<=[。！？；])|\n+")
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


def said(event: Event, after: Sequence[Event]) -> list[Candidate]:
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
        removing = next((s for s in _sentences(removal.text) if _REMOVED.search(s)), removal.text)
        return [f"Rejected: {what}", f"The agent: {shorten(removing, 200)}"], f"No {what}"
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


def first_sentence(text: str) -> str:
    """The first sentence of `text` (all of it when it has no sentence break)."""
    parts = [p.strip() for p in _SENTENCE.split(text) if p and p.strip()]
    return parts[0] if parts else text.strip()
