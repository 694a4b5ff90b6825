"""Time questions: "when did we…", "after the migration", "what do we use now", "last week".

A question about time is answered by the memories' own dates (`updated`, else `created`)
and, among memories of the same moment (one session's), by their order in the candidates.
`question(query)` says which way a query leans:

- "recent": the current state (latest, now, currently, still, switched, anymore): among the
  candidates, the newer the better (a later decision replaces an earlier one);
- "early": the beginning (first, originally, initially, used to): the older the better;
- "after" / "before" a reference ("after the migration"): memories on the wrong side of
  the reference's date count less; the reference is the best keyword match for the words
  after "after"/"before" (`Index.search`'s keyword channel);
- "window": a period relative to today (today, yesterday, this/last week, last month,
  N days ago): memories dated inside it count more;
- "when": "when did/was…": the answer is a date, already on every hit; no reordering.

`reorder` applies it to the best `TOP` of the fused ranking, among the memories about as
relevant as the best (absolute relevance at least `CLOSE` times the best's): those trade
places among their own slots by relevance times a factor between 1 - `TIME_WEIGHT` and
1 + `TIME_WEIGHT`; every other memory keeps its place. So time decides only between
memories the query cannot tell apart, never lifts a weak match. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Mapping, Sequence

from memgit.index.ranking import Ranked

#: How much time can move a score: a factor in [1 - TIME_WEIGHT, 1 + TIME_WEIGHT].
TIME_WEIGHT = 0.25
#: Only this many of the best candidates are reordered,
TOP = 30
#: and among them only those at least this relevant relative to the most relevant one.
CLOSE = 0.8

# Cues chosen to be rare in code talk: "current directory", "first element", "used to mock"
# and "before touching it" are not questions about when.
_RECENT = re.compile(
    r"\b(latest|most recent|recently|currently|nowadays|these days|anymore|any more|still|"
    r"right now|now)\b",
    re.I,
)
_EARLY = re.compile(
    r"\b(originally|original|initially|initial|at first|in the beginning|to begin with|"
    r"we used to|used to be|first (?:chose|picked|used|decided|added|introduced|set up))\b",
    re.I,
)
_RELATIVE = re.compile(
    r"\b(after|before|since|until|prior to)\s+((?:the|our|that|this|last|we|they)\s+[^?.!,;]{3,80})", re.I
)
#: "before/after X" asks about memories' time only in a question about the past.
_PAST = re.compile(r"\b(did|was|were|had|decided|chose|switched|changed|moved|replaced)\b", re.I)
_WINDOW = re.compile(
    r"\b(today|yesterday|this week|last week|this month|last month|(\d{1,3}) days? ago)\b", re.I
)
_WHEN = re.compile(r"\bwhen (did|was|were|have|had|do|does)\b", re.I)


@dataclass(frozen=True)
class TimeQuestion:
    """Which way a query leans in time (see the module docstring); `reference` is the words
    naming the event of "after"/"before"; `since`/`until` bound a "window" (UTC)."""

    kind: str
    reference: str = ""
    since: datetime | None = None
    until: datetime | None = None


def question(query: str, now: datetime | None = None) -> TimeQuestion | None:
    """The time question in `query`, or None when it asks nothing about time."""
    now = now or datetime.now(timezone.utc)
    window = _WINDOW.search(query)
    if window:
        word = window.group(1).lower()
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        if word == "today":
            return TimeQuestion("window", since=day, until=now)
        if word == "yesterday":
            return TimeQuestion("window", since=day - timedelta(days=1), until=day)
        if word in ("this week", "last week"):
            start = day - timedelta(days=day.weekday())
            return (
                TimeQuestion("window", since=start, until=now)
                if word == "this week"
                else TimeQuestion("window", since=start - timedelta(days=7), until=start)
            )
        if word in ("this month", "last month"):
            start = day.replace(day=1)
            before = (start - timedelta(days=1)).replace(day=1)
            return (
                TimeQuestion("window", since=start, until=now)
                if word == "this month"
                else TimeQuestion("window", since=before, until=start)
            )
        days = int(window.group(2))
        return TimeQuestion("window", since=day - timedelta(days=days), until=day - timedelta(days=days - 1))
    relative = _RELATIVE.search(query)
    if relative and _PAST.search(query):
        side = relative.group(1).lower()
        kind = "after" if side in ("after", "since") else "before"
        reference = re.sub(r"^(the|our|that|this|last|we|they)\s+", "", relative.group(2).strip(), flags=re.I)
        return TimeQuestion(kind, reference=reference)
    if _RECENT.search(query):
        return TimeQuestion("recent")
    if _EARLY.search(query):
        return TimeQuestion("early")
    if _WHEN.search(query):
        return TimeQuestion("when")
    return None


def stamp(value: str | None) -> float | None:
    """Seconds since the epoch of an ISO date or time (naive = UTC), or None."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def reorder(
    ranked: Sequence[Ranked], when: Mapping[str, float], q: TimeQuestion, reference: float | None = None
) -> list[Ranked]:
    """`ranked` with the best `TOP` scores moved by time (see the module docstring); `when`
    gives each memory's date (seconds), `reference` the date of an "after"/"before" event.
    A memory without a date is left as it is."""
    if q.kind == "when" or not ranked:
        return list(ranked)
    head, tail = list(ranked[:TOP]), list(ranked[TOP:])
    best = max(r.relevance for r in head)
    close = [n for n, r in enumerate(head) if r.relevance >= CLOSE * best and r.id in when]
    dated = sorted({when[head[n].id] for n in close})
    factor: dict[str, float] = {}
    for n in close:
        r, t = head[n], when[head[n].id]
        if q.kind in ("recent", "early") and len(dated) > 1:
            position = dated.index(t) / (len(dated) - 1)  # 0 oldest .. 1 newest; one moment shares one
            lean = position if q.kind == "recent" else 1.0 - position
            factor[r.id] = 1.0 + TIME_WEIGHT * (2.0 * lean - 1.0)
        elif q.kind in ("after", "before") and reference is not None:
            right = t > reference if q.kind == "after" else t < reference
            factor[r.id] = 1.0 + TIME_WEIGHT if right else 1.0 - TIME_WEIGHT
        elif q.kind == "window" and q.since is not None and q.until is not None:
            inside = q.since.timestamp() <= t < q.until.timestamp()
            factor[r.id] = 1.0 + TIME_WEIGHT if inside else 1.0 - TIME_WEIGHT
    # The close memories trade places among their own slots; every other memory keeps its place.
    order = sorted((head[n] for n in close), key=lambda r: (-r.relevance * factor.get(r.id, 1.0), r.id))
    out = list(head)
    for slot, r in zip(close, order):
        mark = {"time": round(factor[r.id], 4)} if r.id in factor else {}
        out[slot] = replace(r, score=head[slot].score, channels={**r.channels, **mark})
    return out + tail
