"""Conventions and preferences the user stated, corrections included ("always…", "never…",
"we use X, not Y", "don't…", "remember that…", "no, it's…"; 总是/不要/记住/我们用…): source
`user`, confidence 0.9. Only the person's own messages count: not the agent's, not a
sub-agent's prompt, not a compaction summary. Questions, hedged sentences ("maybe we
should…") and thanks are not statements."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgit.agents.events import Event
from memgit.capture.candidate import Candidate, anchored_files, make_title
from memgit.memory.anchors import extract_anchors

_EN_RULE = re.compile(
    r"^(?:(?:and|also|btw|by the way|ok|okay|please|oh)[,\s]+)*"
    r"(?P<rule>(?:always|never|don'?t|do not|avoid|from now on|going forward|in this (?:repo|project)"
    r"|we (?:always|never|use|don'?t|do not|prefer|require)|our \w+ (?:is|are|uses?)|prefer"
    r"|make sure (?:to|you)|use [^;]{1,60}? (?:instead of|rather than|not)"
    r"|we (?:target|support|deploy|pin|run on)|remember(?: that|:)|keep in mind(?: that)?|note that"
    r"|(?:no|nope|actually|wrong)[,:;!.]+\s*(?:it'?s|it is|we|the|use|that'?s|this)))\b(?P<rest>.*)",
    re.IGNORECASE,
)
_EN_INNER = re.compile(r"(?:,|;|\band)\s+(?:always|never|don'?t)\s+\w+", re.IGNORECASE)
_ZH_RULE = re.compile(r"(总是|始终|永远|一律|必须|务必|不要|别再|不许|禁止|记住|记得|以后|我们用|我们使用|统一用"
                      r"|不是.{1,20}而是|应该用)")
_HEDGE = re.compile(r"\b(maybe|perhaps|i think|i guess|not sure|might|probably|i wonder)\b|可能|也许|好像|不确定",
                    re.IGNORECASE)
_REMEMBER_PREFIX = re.compile(
    r"^(?:(?:and|also|btw|by the way|ok|okay|please|oh|remember(?: that)?|keep in mind(?: that)?|note that"
    r"|no|nope|actually|wrong)[,:;!.\s]+)+|^(?:记住|记得)[：:，,\s]*", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])|(?<=[。！？；])|\n+")
_TEAM = re.compile(r"\b(?:we|our|us|this (?:repo|project|codebase)|the team)\b|我们|项目|统一|一律",
                   re.IGNORECASE)
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
            title = make_title(_REMEMBER_PREFIX.sub("", sentence).strip() or sentence)
            body = sentence if not reason else f"{sentence} {reason}"
            anchors = extract_anchors(body)
            kind = "convention" if _CODEY.search(body) or anchors or _TEAM.search(body) else "preference"
            out.append(Candidate(kind, title, body, "user", 0.9, (event.line,),
                                 files=anchored_files(body)))
    return out


_REASON = re.compile(r"(?:because|since|the |it |that |this |因为|这样)", re.IGNORECASE)


#: Sentences that start like a rule but are talk ("never mind", "no, it's fine") or hold only
#: for now ("don't run the tests for now").
_TALK = re.compile(r"\b(?:never ?mind|don'?t worry|no worries|(?:it'?s|that'?s|it is) (?:fine|ok|okay|good|right"
                   r"|alright)|don'?t bother|for now|this time|right now|today|yet|just this once)\b"
                   r"|暂时|这次|先不", re.IGNORECASE)


def _is_rule(sentence: str) -> bool:
    text = sentence.strip()
    if len(text) < 8 or text.endswith(("?", "？")) or _HEDGE.search(text) or _TALK.search(text):
        return False
    if _EN_RULE.match(text) or _EN_INNER.search(text):
        return len(text.split()) >= 3
    if _ZH_RULE.search(text):
        return len(re.findall(r"[\u4e00-\u9fff]", text)) >= 5
    return False
