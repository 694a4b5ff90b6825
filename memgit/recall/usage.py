"""Usage: which memories were recalled, and which were marked used, ignored or wrong.

Both logs live in `<git-dir>/memgit/` and are never committed: `recalls.jsonl` (written
by every recall, see `memgit.recall.recall.record_recall`) and `feedback.jsonl` (written by
`memgit feedback`). Usage is local to one clone; what `memgit reflect` relies on is
copied into a proposal's evidence, so a reviewer sees it without the logs.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from memgit.errors import MemgitError
from memgit.git import localstate
from memgit.memory.format import Memory, parse_time

VERDICTS = ("used", "ignored", "wrong")


def _lines(path: Path) -> Iterator[dict]:  # type: ignore[type-arg]
    """Records of a JSON Lines log and its rotated predecessor; bad lines are skipped."""
    for one in (localstate.rotated(path), path):
        try:
            handle = open(one, encoding="utf-8", errors="replace")
        except OSError:
            continue
        with handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a line cut by a crash
                if isinstance(record, dict):
                    yield record


@dataclass
class MemoryUsage:
    """What the logs say about one memory."""

    recalls: int = 0
    last_recalled: datetime | None = None
    verdicts: Counter[str] = field(default_factory=Counter)
    used_sessions: set[str] = field(default_factory=set)
    last_used: datetime | None = None


@dataclass
class Usage:
    """Recalls and feedback by memory id, from the local logs."""

    by_id: dict[str, MemoryUsage] = field(default_factory=lambda: defaultdict(MemoryUsage))
    recall_events: list[tuple[datetime, tuple[str, ...]]] = field(default_factory=list)
    feedback_events: list[tuple[datetime, str, str]] = field(default_factory=list)
    #: (when, memory id, transcript): a capture found the user saying again what the memory held
    restated_events: list[tuple[datetime, str, str]] = field(default_factory=list)

    def of(self, memory_id: str) -> MemoryUsage:
        return self.by_id.get(memory_id) or MemoryUsage()


def load(git_dir: Path | None) -> Usage:
    """Read the recall and feedback logs of this git dir (None: no usage known)."""
    usage = Usage()
    if git_dir is None:
        return usage
    for record in _lines(localstate.recalls(git_dir)):
        when = parse_time(str(record.get("ts", "")))
        ids = record.get("ids")
        if when is None or not isinstance(ids, list):
            continue
        ids_t = tuple(str(i) for i in ids)
        usage.recall_events.append((when, ids_t))
        for mid in ids_t:
            one = usage.by_id[mid]
            one.recalls += 1
            if one.last_recalled is None or when > one.last_recalled:
                one.last_recalled = when
    for record in _lines(localstate.feedback(git_dir)):
        when = parse_time(str(record.get("ts", "")))
        found_id, verdict = record.get("id"), record.get("verdict")
        if when is None or not isinstance(found_id, str) or verdict not in VERDICTS:
            continue
        usage.feedback_events.append((when, found_id, str(verdict)))
        one = usage.by_id[found_id]
        one.verdicts[str(verdict)] += 1
        if verdict == "used":
            one.used_sessions.add(str(record.get("session") or when.date().isoformat()))
            if one.last_used is None or when > one.last_used:
                one.last_used = when
    usage.restated_events = restated(git_dir)
    return usage


def recall_records(git_dir: Path) -> list[dict]:  # type: ignore[type-arg]
    """The recall log's records, oldest first (bad lines skipped)."""
    return list(_lines(localstate.recalls(git_dir)))


def restated(git_dir: Path) -> list[tuple[datetime, str, str]]:
    """`restated.jsonl` (written by capture): each time a user said again what a memory held,
    as (when, memory id, transcript), oldest first. One line of a transcript is one
    restatement, however often it was logged: a session captured again, or applied after
    being kept pending, finds the same line again (and the memory its first capture wrote from
    that line), which the user did not say twice."""
    seen: dict[tuple[str, str], tuple[datetime, str]] = {}
    for record in _lines(localstate.restated(git_dir)):
        when = parse_time(str(record.get("time", "")))
        mid, transcript, line = record.get("memory"), record.get("transcript"), record.get("line")
        if when is None or not isinstance(mid, str) or not mid:
            continue
        key = (str(transcript or ""), str(line))
        if key not in seen:
            seen[key] = (when, mid)
    return sorted(((when, mid, transcript) for (transcript, _), (when, mid) in seen.items()), key=lambda e: e[0])


def record_feedback(
    git_dir: Path, memory_id: str, verdict: str, *, session: str | None = None, now: datetime | None = None
) -> dict[str, str]:
    """Append one verdict on a memory to `feedback.jsonl`; returns the record written.

    `session` groups feedback from one agent session ($MEMGIT_SESSION by default, else the
    day), so that "used in many sessions" means many, not one busy afternoon.
    """
    if verdict not in VERDICTS:
        raise MemgitError(f"unknown verdict {verdict!r}; use one of {', '.join(VERDICTS)}")
    when = (now or datetime.now(timezone.utc)).replace(microsecond=0)
    record = {
        "ts": localstate.stamp(when.timestamp()),
        "id": memory_id,
        "verdict": verdict,
        "session": session or os.environ.get("MEMGIT_SESSION") or when.date().isoformat(),
    }
    path = localstate.feedback(git_dir)
    try:
        localstate.append_json(path, record)
    except OSError as exc:
        raise MemgitError(f"cannot write {path} ({exc.strerror or exc}); check permissions") from None
    return record


def parse_since(value: str | None, now: datetime) -> datetime | None:
    """`30d`, `12h`, `2w` or an ISO date as the start of a period; None for no limit."""
    if value is None or not value.strip():
        return None
    text = value.strip().lower()
    units = {"h": 3600, "d": 86400, "w": 7 * 86400}
    if text[-1:] in units and text[:-1].isdigit():
        return datetime.fromtimestamp(now.timestamp() - int(text[:-1]) * units[text[-1]], timezone.utc)
    found = parse_time(value.strip())
    if found is None:
        raise MemgitError(f"--since {value!r}: use a period like 30d, 12h, 2w, or a date like 2026-11-01")
    return found


def stats(
    memories: Sequence[Memory],
    usage: Usage,
    *,
    since: datetime | None,
    now: datetime,
    repeats: Iterable[tuple[str, str]] = (),
) -> dict[str, object]:
    """Health figures for `memgit stats` (docs/reflect.md says what each means)."""
    recalled: set[str] = set()
    for when, ids in usage.recall_events:
        if since is None or when >= since:
            recalled.update(ids)
    used: dict[str, datetime] = {}
    for when, mid, verdict in usage.feedback_events:
        if verdict == "used" and (since is None or when >= since):
            used[mid] = max(when, used.get(mid, when))
    hit = len(recalled & set(used))
    by_id = {m.id: m for m in memories}
    ages = []
    for mid, when in used.items():
        memory = by_id.get(mid)
        stamp = parse_time(memory.updated or memory.created) if memory is not None else None
        if stamp is not None:
            ages.append(max(0.0, (when - stamp).total_seconds() / 86400))
    ages.sort()
    new = [m for m in memories if since is None or (parse_time(m.created) or now) >= since]
    repeat_ids = {a for a, _ in repeats}
    restated = [(mid, transcript) for when, mid, transcript in usage.restated_events
                if since is None or when >= since]
    most = Counter(mid for mid, _ in restated).most_common(5)
    counts: Mapping[str, Counter[str]] = {
        "kind": Counter(m.kind for m in memories),
        "source": Counter(m.source for m in memories),
        "status": Counter(m.status for m in memories),
    }
    return {
        "since": since.isoformat(timespec="seconds") if since else None,
        "memories": len(memories),
        "recalled": len(recalled),
        "recalled_then_used": hit,
        "hit_rate": round(hit / len(recalled), 3) if recalled else None,
        "used_age_days_median": round(ages[len(ages) // 2], 1) if ages else None,
        "new_memories": len(new),
        "repeats": len(repeat_ids),
        "repeat_rate": round(len(repeat_ids) / len(new), 3) if new else None,
        "restated": len(restated),
        "restated_memories": len({mid for mid, _ in restated}),
        "restated_sessions": len({transcript for _, transcript in restated}),
        "most_restated": dict(most),
        **{f"by_{name}": dict(sorted(c.items())) for name, c in counts.items()},
    }


def days_between(earlier: datetime | None, later: datetime) -> float | None:
    return None if earlier is None else (later - earlier).total_seconds() / 86400


def utc_now() -> datetime:
    return datetime.fromtimestamp(time.time(), timezone.utc).replace(microsecond=0)
