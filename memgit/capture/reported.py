"""Lessons from errors the user reported (a console error pasted, "X is not a function", "the
deploy failed"): the agent said what caused it — not a guess — and changed files, and the user's
next message does not say it is still broken. The lesson quotes the user's error, the agent's
diagnosis and the files the fix changed."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgit.agents.events import EDIT_TOOLS, Event
from memgit.capture.candidate import Candidate, flat, make_title, relative_paths, shorten

#: A user's words that report a failure (an error message, "it fails", "x is not a function"), not a
#: request that merely names errors ("add error handling").
_REPORT = re.compile(
    r"(?:\b\w*(?:Error|Exception)\b:|(?i:\berror:|\b(?:get|got|getting|see|seeing|throws?|threw|shows?"
    r"|says?|gives?)\b[^.\n]{0,40}\b(?:error|exception)\b|\bfail(?:s|ed|ing|ure)?\b|\bcrash(?:es|ed)?\b"
    r"|is not a function|is not defined|is undefined|not working|doesn't work|does not work|didn't work"
    r"|\bbroken\b|\btraceback\b|unresolved reference|\bblocked\b))")
#: An agent's sentence that names a cause.
_CAUSE = re.compile(
    r"(?i)\b(?:root cause|because|caused by|comes? from|coming from|is due to"
    r"|the (?:problem|issue|bug|culprit) (?:is|was)|is the (?:problem|issue|culprit)"
    r"|was (?:still )?(?:passing|sending|using|calling|reading|missing|returning|pointing)"
    r"|expects?\b[^.]*\bbut\b|requires?\b[^.]*\b(?:but|while)\b)")
#: What the agent is about to do is no diagnosis.
_INTENT = re.compile(r"(?i)\bI(?:['’]ll| will|['’]m going to| am going to|['’]d| would)\b")
#: A cause in the session's own earlier change: a slip of this session, not something about the code.
_OWN = re.compile(r"(?i)\b(?:we|I)(?:['’]ve| have| had)? (?:just |recently |earlier )?"
                  r"(?:modified|changed|added|removed|introduced|renamed|broke|were|was)\b")
#: The user's next message says the error is still there.
_STILL = re.compile(r"(?i)\b(?:still|again|same (?:error|issue|problem)|not (?:fixed|working)|doesn't work"
                    r"|didn't (?:work|help|fix)|this (?:error|issue|problem)|causing (?:this|it))\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{3,}")
_TERM = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")
_SHORT = {"the", "and", "for", "was", "has", "not", "are", "but", "you", "can", "its", "now", "all", "one",
          "two", "new", "use", "get", "set", "let", "run", "see", "why", "how", "our", "out", "too", "any",
          "may", "had", "did", "own", "off", "yet", "via", "per", "who", "him", "her", "his", "she", "got"}
_COMMON = {"this", "that", "with", "from", "have", "what", "when", "then", "there", "their", "they",
           "them", "your", "were", "been", "into", "also", "just", "only", "about", "after", "before",
           "error", "errors", "failed", "fails", "failing", "still", "again", "should", "would", "could",
           "please", "thanks", "issue", "problem", "works", "working", "work", "like", "make", "sure",
           "here", "some", "more", "file", "files", "code", "page", "line", "lines", "function"}
_MAX_REPORT = 6000  # a longer message is a brief or a paste, not a report
#: A code block headed by the file it changes (```python:app/models.py), as chat exports record an edit.
_FENCED = re.compile(r"^```[\w+#-]*:([^\s`]+\.\w+)[ \t]*$", re.MULTILINE)
#: A diagnosis is not hedged and not a plan.
_HEDGE = re.compile(r"(?i)\b(?:maybe|perhaps|probably|possibly|might|i think|i guess|i suspect|not sure"
                    r"|seems?|likely|could be|let'?s see|guess)\b")
_PLAN = re.compile(r"(?i)^(?:let me|let's|now\b|next\b|first\b|then\b|i'll|i will|i'm going|i am going"
                   r"|ok\b|okay|good|great|perfect|done|got it|all |sure|alright|right\b|i see|hmm)")


def reported(events: Sequence[Event], base: str) -> list[Candidate]:
    users = [i for i, e in enumerate(events) if e.role == "user" and not e.sidechain]
    out = []
    for n, start in enumerate(users):
        report = events[start]
        end = users[n + 1] if n + 1 < len(users) else len(events)
        if len(report.text) > _MAX_REPORT or not _REPORT.search(report.text):
            continue
        stretch = events[start + 1:end]
        edits = [e for e in stretch if e.role == "tool_call" and e.tool in EDIT_TOOLS and e.files]
        edits += [Event(e.line, "tool_call", files=tuple(_FENCED.findall(e.text)))
                  for e in stretch if e.role == "assistant" and _FENCED.search(e.text)]
        if not edits:
            continue
        said = [e.text for e in stretch if e.role == "assistant" and not e.sidechain and e.text]
        cause = _cause(said, report.text)
        if not cause:
            continue
        error = _error_line(report.text, cause)
        if not error:
            continue
        following = events[end].text if end < len(events) else ""
        still = (_STILL.search(following) and _words(following) & (_words(error) | _words(cause))
                 or _repeats(error, following))
        if not following or still:
            continue  # not confirmed, or still broken
        files = relative(flat(e.files for e in edits), base)
        body = f"Reported: {error}\nWhy: {cause}\nFixed by changing {', '.join(files[:6])}."
        evidence = tuple(sorted({report.line, *(e.line for e in edits[:6]), events[end].line}))
        out.append(Candidate("lesson", make_title(f"{error}: {cause}", 110), body, "inferred", 0.6, evidence,
                             files=files))
    return out


def _repeats(error: str, following: str) -> bool:
    """Whether the user's next message quotes the error's message again ("I get 'unable to open
    database file' when…"): the fix did not hold, whatever words come around it."""
    message = re.split(r":\s*", error)[-1].strip(" \"'{}[]()`.,;")
    return len(message) >= 12 and message.lower() in following.lower()


def _terms(text: str) -> set[str]:
    """The words of `text` that can name a thing (`.env`, `tsc`, `parse_date`), function words aside."""
    return {w.lower() for w in _TERM.findall(text)} - _COMMON - _SHORT


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _COMMON


def _cause(said: list[str], report: str) -> str:
    """The agent's sentence that names the cause of what the user reported: one that says "root
    cause" first, else the first that gives a cause and shares a word with the report."""
    reported_words = _words(report)
    found = []
    for text in said:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
            plain = diagnosis([sentence])
            if (plain and _CAUSE.search(plain) and not _INTENT.search(plain) and not _OWN.search(plain)
                    and _words(plain) & reported_words):
                found.append(plain)
    rooted = [s for s in found if re.search(r"(?i)root cause", s)]
    return (rooted or found or [""])[0]


def _error_line(report: str, cause: str) -> str:
    """The part of the user's message that states the error the cause explains."""
    cause_words = _words(cause)
    best, score = "", 0
    for line in report.splitlines():
        for part in re.split(r"\s+(?:then|and then|but|also)\s+|[;|]", line):
            part = re.sub(r"(?i)^(?:still|again|now|and|also|ok|okay)\b[\s,]*", "", part.strip(" >-*`'\""))
            shared = len(_words(part) & cause_words)
            if shared:  # an error message beats a file location
                shared += 2 * bool(_REPORT.search(part)) - bool(re.search(r"\w/\w|\(\d+:\d+\)", part))
            if 3 <= len(part) <= 200 and shared > score:
                best, score = part, shared
    return shorten(best, 160)


#: A tally of a run ("8 tests failing.", "All 32 connector tests pass now."): a status, no cause.
_TALLY = re.compile(r"(?i)^(?:now |still |only )?(?:all |\d+ |all \d+ )(?:[\w-]+ ){0,2}"
                    r"(?:tests?|checks?|errors?|failures?|specs?)\b[^.]{0,30}?\b(?:pass(?:ing|ed|es)?|fail(?:ing|ed|s)?|left|remain(?:ing)?)\b")


def diagnosis(said: list[str], about: str = "") -> str:
    """The first sentence of the agent's words that says what was wrong: not a plan ("Let me…"),
    not hedged ("maybe", "I think"), not a question, and, given `about` (the failure, the files
    changed), sharing a word with it."""
    subject = _terms(about) if about else set()
    for text in said:
        flat_text = " ".join(text.split())
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z`*])|(?<=[。！？])|:\s*$", flat_text):
            sentence = sentence.strip(" *").rstrip(":")
            plain = sentence.replace("**", "")
            if ((len(plain.split()) < 4 and len(plain) < 12) or plain.endswith(("?", "？"))
                    or _PLAN.match(plain) or _HEDGE.search(plain)
                    or (len(plain.split()) <= 10 and _TALLY.match(plain))
                    or len(plain) > 300 or (about and not _terms(plain) & subject)):
                continue
            return shorten(plain, 240)
    return ""


def relative(files: Sequence[str], base: str) -> tuple[str, ...]:
    """Paths made relative to the repository, also when the session ran on Windows (`c:/…`)."""
    out = []
    norm_base = base.replace("\\", "/").rstrip("/").lower()
    for path in relative_paths(files, base):
        norm = path.replace("\\", "/")
        if norm_base and norm.lower().startswith(norm_base + "/"):
            norm = norm[len(norm_base) + 1:]
        out.append(norm)
    return tuple(dict.fromkeys(out))
