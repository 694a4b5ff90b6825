"""Decisions: the user picked one of the options the agent listed, or approved its plan."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgit.agents.events import Event
from memgit.capture.candidate import Candidate, anchored_files, make_title, shorten

_OPTION = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?(?:option\s+)?(?P<label>[A-Da-d1-9]|方案[一二三四1-9])[.):：]"
                     r"\s*(?:\*\*)?\s*(?P<text>.+)$",
                     re.IGNORECASE | re.MULTILINE)
_OFFER = re.compile(r"which (?:one|option|do you|would you)|do you prefer|should i|shall i|would you like|"
                    r"you(?:'d)? prefer|选哪|哪个|哪种|要不要|是否", re.IGNORECASE)
_PLAN = re.compile(r"^\s*(?:#+\s*)?(?:\*\*)?(?:plan|here'?s (?:the|my) plan|proposed plan|计划|方案)\b",
                   re.IGNORECASE | re.MULTILINE)
_CHOICE = re.compile(r"(?:go with|let'?s (?:do|use|go with)|use|pick|choose|take|prefer|选|用|就用)\s*"
                     r"(?:the\s+)?(?:option\s+|方案)?(?P<label>first|second|third|last|[A-Da-d1-9]|一|二|三)"
                     r"(?![A-Za-z0-9])", re.IGNORECASE)
_ORDINAL = {"first": "1", "second": "2", "third": "3", "一": "1", "二": "2", "三": "3"}
_APPROVE = re.compile(r"^\s*(?:yes|yep|ok(?:ay)?|sure|sounds good|lgtm|approved?|go ahead|do it|proceed"
                      r"|好的?|可以|同意|行)(?![A-Za-z])", re.IGNORECASE)


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
                        + f"\nThe user's words: {shorten(event.text, 300)}")
                out.append(Candidate("decision", make_title(f"Chose: {picked}"), body, "user", 0.9,
                                     (offer.line, event.line), files=anchored_files(picked)))
                continue
        if _PLAN.search(offer.text) and _OFFER.search(offer.text) and _APPROVE.match(event.text) \
                and len(event.text) < 120:
            steps = [m.group("text").strip() for m in _OPTION.finditer(offer.text)]
            if len(steps) >= 2:
                goal = make_title(steps[0], 80)
                numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
                body = "The user approved this plan:\n" + numbered
                out.append(Candidate("decision", make_title(f"Approved plan: {goal}"), body, "user", 0.9,
                                     (offer.line, event.line), files=anchored_files(body)))
    return out


def _label(label: str) -> str:
    label = label.lower().removeprefix("方案")
    return _ORDINAL.get(label, label)
