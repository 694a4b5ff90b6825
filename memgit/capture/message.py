"""A user's message as capture reads it: its sentences (`Unit`s, each with the list header it
falls under) and its shape — chat, a task request, a pasted document, a quote, or another
agent's role prompt pasted in (`Message`).

The shape decides how much of a message can be the person's rule for this repository: chat
can state one in any sentence; a long, headed, listed document is mostly a plan, with a few
rules about the code in it; a role prompt ("You are a senior engineer…") is another agent's
instructions, and a quote or a pasted transcript is someone else's words. Code blocks are
never sentences."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

DOCUMENT_CHARS = 1500  # a message shorter than this is chat, however it is laid out


@dataclass(frozen=True)
class Unit:
    """One sentence of a message: `header` is the list header it is under ("Do NOT:",
    "Constraints:"), `group` numbers its paragraph or list, `index` its place in the message."""

    text: str
    header: str
    group: int
    index: int
    bullet: bool = False


@dataclass(frozen=True)
class Message:
    text: str
    units: tuple[Unit, ...]
    role_prompt: bool = False  # another agent's instructions ("You are a …")
    document: bool = False  # long, with headings or many list items
    quoted: bool = False  # mostly quoted lines, or the agent's own plan: someone else's words
    task: bool = False  # asks for work to be done now


_FENCE = re.compile(r"^\s*(```|~~~)")
_CUT = re.compile(r"^\[… \d+ characters cut …\]$")
_BULLET = re.compile(r"^\s*(?:[-*•+▪◦]|\d{1,2}[.)]|\(?[a-z][.)]|\[[ xX]\])\s+")
_RULER = re.compile(r"^\s*[-=*_─━#~]{3,}\s*$")
_HEADING = re.compile(r"^\s*#{1,6}\s|^\s*(?:SECTION|PART|TASK|PHASE|STEP|STAGE|CHAPTER)\s+\w+", re.IGNORECASE)
_EMPHASIS = re.compile(r"(?<![^\s(\[])(\*\*|\*)(?=\S)(.+?)(?<=\S)\1(?![\w*])")  # **bold**, *it*; never __init__
#: A sentence ends at . ! ? (not after "e.g.", "i.e.", "vs.": the sentence goes on) or at 。！？；
_SENTENCE = re.compile(r"(?<=[.!?])(?<![eE]\.[gG]\.)(?<![iI]\.[eE]\.)(?<![vV][sS]\.)\s+(?=[A-Za-z`\"'(])"
                       r"|(?<=[。！？；])")
#: A line of pasted output: a log level, a stack frame, a file:line position, a lint rule id.
_OUTPUT_LINE = re.compile(r"^\s*(?:\d+:\d+\s|at\s+\S+\s*\(|(?:error|warning|warn|info|debug|fatal|trace)\s*:"
                          r"|\[\w+\]|\w*(?:Error|Exception|Warning):)|\S+\.\w{1,5}:\d+",
                          re.IGNORECASE)
_QUOTE_LINE = re.compile(r"^\s*(?:>|│|┃|⏺|●|⎿|(?:user|assistant|human|ai|system)\s*:)", re.IGNORECASE)
#: A plan the agent wrote, handed back as the user's message when it is approved.
_AGENT_PLAN = re.compile(r"\s*Implement the following plan\s*:", re.IGNORECASE)
_ROLE = re.compile(r"^\W*(?:role\s*:|you are (?:a|an|the|my)\b|you're (?:a|an)\b|act as (?:a|an)\b"
                   r"|your role\b|as an? (?:ai|expert|senior))", re.IGNORECASE | re.MULTILINE)
#: Another agent's role prompt pasted after the person's own words ("… follow the prompt below: You
#: are the reviewer agent…"): what follows it is that agent's brief.
_ROLE_INSIDE = re.compile(r"(?:^|[.:!?>\-–—]\s*)you are (?:a|an|the|my)\s+(?:[\w-]+\s+){0,4}?"
                          r"(?:agent|assistant|engineer|expert|architect|developer|reviewer|analyst"
                          r"|specialist|consultant|programmer|bot)\b", re.IGNORECASE | re.MULTILINE)
#: A line that asks about the list after it ("why…? what happens in each of these cases:"): its
#: items are cases asked about, not statements.
_ASKS = re.compile(r"\?|\b(?:cases|scenarios|examples|options|alternatives|which (?:one|of))\b",
                   re.IGNORECASE)
_TASK = re.compile(
    r"^(?:(?:ok(?:ay)?|so|now|and|also|then|please|pls|hey|hi)[,\s]+|(?:in|for|on) [^,]{1,60},\s*)*"
    r"(?:can you|could you|would you|will you|i need you to|i want you to|help me|let'?s|we need to|go ahead"
    r"|(?:we|i) (?:are|am|'re|'m) (?:implementing|building|adding|fixing|working on)"
    r"|add|fix|create|make(?! sure)|build|implement|write|update|change|rename|move|remove|delete|refactor|reorder"
    r"|replace|convert|migrate|port|install|run|deploy|review|check|look|find|scan|search|improve|optimi[sz]e"
    r"|generate|set up|setup|wire|finish|continue|start|clean up|audit|analy[sz]e|test|debug|investigate|sort"
    r"|format|tidy|clean|split|merge|extract|simplify|translate|document|explain|show|tell|give|list|summari[sz]e"
    r"|compare|open|bump|upgrade|downgrade|revert|undo|commit|push|publish|release|verify|fetch|download"
    r"|configure|enable|disable|connect|link|style|center|centre|align|resize|rewrite|edit|modify|adjust|tweak"
    r"|restructure|reorgani[sz]e|port|prepare|draft|insert|append|drop|rework|polish|handle|support)\b",
    re.IGNORECASE)


def read_message(text: str) -> Message:
    """The units and shape of a user's message."""
    units: list[Unit] = []
    header, group, in_fence, under = "", 0, False, 0  # under: units read since the header
    headings = bullets = quoted = lines = 0
    task = False
    pasted = _ROLE_INSIDE.search(text)
    own = text[:pasted.start()] if pasted and len(text) - pasted.start() >= 300 else text
    rows = own.splitlines()
    for number, raw in enumerate(rows):
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        line = raw.strip()
        if in_fence or _CUT.match(line):
            continue
        if not line:
            group += 1
            if (under and not units[-1].bullet) or (not under and not _bullet_next(rows, number)):
                header = ""  # a paragraph under a header ends at a blank line; a list may start after one
            continue
        lines += 1
        quote = bool(_QUOTE_LINE.match(line))
        quoted += quote
        if quote or _OUTPUT_LINE.match(line):
            continue  # someone else's words, or what a program printed
        if _RULER.match(line) or _HEADING.match(line) or _shouting(line):
            headings += 1
            header, group = "", group + 1
            continue
        bullet = _BULLET.match(line)
        body = _EMPHASIS.sub(r"\2", line[bullet.end():] if bullet else line).strip()
        bullets += bool(bullet)
        if body.endswith(":") and len(body.split()) <= 8:
            task = task or bool(_TASK.match(body))
            header, group, under = body, group + 1, 0
            continue
        if not bullet and header and under and units[-1].bullet:
            header, group = "", group + 1  # the list under the header has ended
        for sentence in _SENTENCE.split(body):
            if sentence.strip():
                units.append(Unit(sentence.strip(), header, group, len(units), bool(bullet)))
                task = task or bool(_TASK.match(units[-1].text))
                under += 1
        if body.endswith(":") and not bullet and _ASKS.search(body):
            header, group, under = body, group + 1, 0  # the list after it is what is asked about
    long = len(text) >= DOCUMENT_CHARS
    return Message(
        text, tuple(units),
        role_prompt=len(text) >= 300 and bool(_ROLE.search("\n".join(text.lstrip().splitlines()[:3]))),
        document=long and (headings >= 3 or bullets >= 10),
        quoted=(lines >= 3 and quoted * 2 > lines) or bool(_AGENT_PLAN.match(text)),
        task=task,
    )


def asks(header: str) -> bool:
    """Whether a list header asks about its items ("what happens in each of these cases:")."""
    return bool(_ASKS.search(header))


def _bullet_next(rows: list[str], number: int) -> bool:
    """Whether the next line that is not blank, after `number`, is a list item."""
    return next((bool(_BULLET.match(row)) for row in itertools.islice(rows, number + 1, None) if row.strip()), False)


def _shouting(line: str) -> bool:
    """A heading typed in capitals ("IMPORTANT LIMITS"), not a rule in capitals ("DO NOT X.")."""
    if len(line) > 80 or line.rstrip().endswith((".", "!", ":")) or len(line.split()) > 8:
        return False
    letters = [c for c in line if c.isalpha()]
    return len(letters) >= 4 and sum(c.isupper() for c in letters) >= 0.9 * len(letters)
