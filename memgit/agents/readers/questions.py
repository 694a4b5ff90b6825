"""What an agent put to the user through a tool and what the user answered: the questions with
options (Claude Code's `AskUserQuestion`, Codex's `request_user_input`, Gemini CLI's `ask_user`,
pi's ask tools) as `choice` events, one a question answered, and the plans the user approved or
rejected (Claude Code's `ExitPlanMode`, Gemini CLI's `exit_plan_mode`, Codex's `<proposed_plan>`
blocks) as `plan` events.

Every format asks the same way (`questions`: a question, an id or header, options with labels)
but answers in its own: a JSON object of answers keyed by question, id or position, or a sentence
(`"question"="answer"`, `User selected: …`). A note the user typed next to the option they
picked is kept with the answer."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memgit.agents.events import Event
from memgit.agents.readers.reader import cut

#: Tools that ask the user questions with options and return the answers.
ASK_TOOLS = {"AskUserQuestion", "request_user_input", "ask_user", "AskQuestions", "ask_questions", "ask",
             "question", "questionnaire", "AskUserQuestions"}
#: Tools that put a plan to the user for approval.
PLAN_TOOLS = {"ExitPlanMode", "exit_plan_mode"}
_NOTE = re.compile(r"^\s*(?:user[_ ]?notes?|notes?)\s*:\s*", re.IGNORECASE)
_SELECTED = re.compile(r"^[ \t]*User (?:selected|answered|chose|picked):[ \t]*(.+?)[ \t]*$",
                       re.IGNORECASE | re.MULTILINE)
#: A result that says no answer was given: the dialog was dismissed, or the tool could not ask.
_UNANSWERED = re.compile(r"dismissed|declined|cancel+ed|unavailable|without answering|did not answer"
                         r"|doesn't want to proceed|was rejected", re.IGNORECASE)
_PROPOSED = re.compile(r"<proposed_plan>\s*(.*?)\s*(?:</proposed_plan>|$)", re.DOTALL)
_REJECTED = re.compile(r"doesn't want to proceed|was rejected|rejected (?:the|your) plan|not approved|plan rejected",
                       re.IGNORECASE)
#: The words a user typed when they turned a tool call down (Claude Code puts them in the result).
_FEEDBACK = re.compile(r"the user said:\s*\n(.+)|User feedback:\s*(.+?)(?:\n\n|$)", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Question:
    key: str  # the id the answers may be keyed by
    text: str
    header: str
    options: tuple[str, ...]


def questions_of(data: Any) -> list[Question]:
    """The questions a call's input asks: a `questions` list, or one `question` with options; a
    question whose answer is secret is left out."""
    if not isinstance(data, dict):
        return []
    raw = data.get("questions")
    items = raw if isinstance(raw, list) else [data] if isinstance(data.get("question"), str) else []
    found = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("question"), str):
            continue
        if item.get("isSecret") or item.get("is_secret") or item.get("type") in ("secret", "password"):
            continue  # a token or a password typed in: never an answer to keep
        options = item.get("options")
        labels = tuple(_label(o) for o in options if _label(o)) if isinstance(options, list) else ()
        found.append(Question(str(item.get("id") or ""), item["question"].strip(),
                              str(item.get("header") or ""), labels))
    return found


def choices(number: int, tool: str, data: Any, result: str, answers: Any = None, *, error: bool = False,
            call_id: str = "", side: bool = False) -> list[Event]:
    """One `choice` event a question the call `data` asked and the user answered, read from the
    structured `answers` when the format keeps them, else from the `result` text."""
    asked = questions_of(data)
    if not asked or error:
        return []
    if answers is None:
        answers = _json_answers(result)
    if answers is None and _UNANSWERED.search(result[:300]):
        return []
    events = []
    for index, question in enumerate(asked):
        picked, notes = _answer(question, index, len(asked), answers, result)
        text = "; ".join(picked)
        if notes:
            text = (text + "\n" if text else "") + "\n".join(notes)
        if text:
            events.append(Event(number, "choice", cut(text, 2000), tool=tool, target=question.text,
                                options=question.options, call_id=call_id, sidechain=side))
    return events


def plan(number: int, text: str, result: str, *, error: bool = False, side: bool = False) -> Event | None:
    """The `plan` event of a plan put to the user (`text`), rejected when the `result` says so."""
    text = text.strip()
    if not text:
        return None
    rejected = error or bool(_REJECTED.search(result[:400]))
    return Event(number, "plan", cut(text), error=rejected, sidechain=side)


def proposed_plans(number: int, text: str) -> list[Event]:
    """The `plan` events of the `<proposed_plan>` blocks in an agent's message (Codex's plan mode)."""
    if "<proposed_plan>" not in text:
        return []
    return [Event(number, "plan", cut(m.group(1))) for m in _PROPOSED.finditer(text) if m.group(1).strip()]


def feedback(result: str) -> str:
    """What the user typed when they turned a tool call down, from the tool's result."""
    found = _FEEDBACK.search(result) if _REJECTED.search(result[:400]) else None
    return (found.group(1) or found.group(2) or "").strip() if found else ""


def _label(option: Any) -> str:
    if isinstance(option, str):
        return option.strip()
    if isinstance(option, dict):
        return str(option.get("label") or option.get("value") or "").strip()
    return ""


def _json_answers(result: str) -> Any:
    """The answers of a result that is a JSON object `{"answers": …}` (Codex, Gemini CLI)."""
    text = result.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data.get("answers") if isinstance(data, dict) else None


def _answer(question: Question, index: int, count: int, answers: Any, result: str) -> tuple[list[str], list[str]]:
    """The labels picked and the notes typed for one question."""
    value: Any = None
    if isinstance(answers, dict):
        keys = [question.text, question.key, str(index), question.header]
        value = next((answers[k] for k in keys if k and k in answers), None)
        if value is None and count == 1 and len(answers) == 1:
            value = next(iter(answers.values()))
    elif isinstance(answers, list):
        value = next((a for a in answers if isinstance(a, dict) and _matches(a, question, index)), None)
        if value is None and index < len(answers) and not isinstance(answers[index], dict):
            value = answers[index]
    if value is not None:
        return _split(value)
    return _split(_from_text(question, count, result))


def _matches(answer: dict[str, Any], question: Question, index: int) -> bool:
    key = answer.get("id") or answer.get("questionId") or answer.get("question")
    if key is not None:
        return str(key) in (question.key, question.text)
    return answer.get("index") == index


def _split(value: Any) -> tuple[list[str], list[str]]:
    """Labels and notes from an answer: a string, a list of them, or an object holding them."""
    if isinstance(value, dict):
        picked, notes = _split(next((value[k] for k in ("answers", "answer", "labels", "label", "selected",
                                                        "value") if k in value), None))
        for key in ("note", "notes", "user_note", "custom", "other"):
            if isinstance(value.get(key), str) and value[key].strip():
                notes.append(value[key].strip())
        return picked, notes
    items = value if isinstance(value, list) else [value] if value is not None else []
    picked, notes = [], []
    for item in items:
        if isinstance(item, dict):
            more, extra = _split(item)
            picked += more
            notes += extra
            continue
        text = str(item).strip() if isinstance(item, (str, int, float)) else ""
        if not text:
            continue
        note = _NOTE.match(text)
        if note:
            notes.append(text[note.end():].strip())
        else:
            picked.append(text)
    return picked, notes


def _from_text(question: Question, count: int, result: str) -> str:
    """A question's answer in a sentence: `"question"="answer"` (Claude Code), `User selected: X`
    (one question), or a `question: answer` line."""
    quoted = f'"{question.text}"="'
    at = result.find(quoted)
    if at >= 0:
        rest = result[at + len(quoted):]
        end = re.search(r'"(?:, "|\.\s|\.?\s*$)', rest)
        return rest[: end.start()] if end else rest
    selected = _SELECTED.findall(result)
    if count == 1 and len(selected) == 1:
        return str(selected[0])
    for name in (question.text, question.key, question.header):
        if not name:
            continue
        line = re.search(rf"^[ \t]*(?:Q:[ \t]*)?{re.escape(name)}[ \t]*(?::|→|->|=)[ \t]*(.+?)[ \t]*$", result,
                         re.MULTILINE)
        if line:
            return line.group(1)
    return ""
