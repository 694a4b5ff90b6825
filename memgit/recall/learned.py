"""Channel weights learned from this clone's own feedback, per kind of query.

`memgit feedback ID --used` / `--wrong` says a recalled memory helped or misled; the recall
log (`recalls.jsonl`) says, for each memory a recall returned, the query's kind
(`memgit.recall.adaptive`) and which channels found it (keyword, vector, anchor). `learn`
joins the two: each verdict is matched to the latest recall at or before it that returned
that memory (within `MATCH_HOURS`), and counted for the query's kind and for every channel
that found the memory. Per kind, with U used and W wrong verdicts, p = U / (U + W) is how
often a recalled memory of that kind was right; per channel, p_c is the same over the
memories that channel found, drawn towards p by `PRIOR` verdicts (p_c = (u_c + PRIOR p) /
(u_c + w_c + PRIOR)), so a channel seen a few times stays near 1. Its multiplier is
p_c / p, held within `BOUNDS`: a channel that finds what gets used more often than the
others counts more, one that finds what is marked wrong counts less.

Nothing moves before a kind has `MIN_VERDICTS` verdicts: with 20 yes/no outcomes the
standard error of a share is at most sqrt(0.25 / 20) = 0.11, so a gap between channels
smaller than that is noise, and 20 verdicts are a few working sessions, not months. The
bounds keep one sort of query from switching a channel off or letting it drown the others
(the adaptive multipliers, 0.5 to 1.5, span the same range). `PRIOR` = 4 verdicts is a
fifth of the minimum: with a handful of verdicts a channel moves at most a little. These
constants were chosen by reasoning, not fitted: the development sets hold no feedback, and
their labels are never used to learn anything.

The result is local state, `<git-dir>/memgit/weights.json`, rewritten after every
`memgit feedback` (never committed: one clone's habits must not steer another clone's
recall), read by every recall (`multipliers`: one small file, absent until feedback is
given, and then nothing changes), and shown by `memgit stats` (`summary`).
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memgit.git import localstate
from memgit.memory.format import parse_time

#: The channels a weight exists for (`memgit.index.ranking.CHANNELS`).
CHANNELS = ("keyword", "vector", "anchor")
#: Verdicts of one query kind before its multipliers move (see the module docstring).
MIN_VERDICTS = 20
#: Pseudo-verdicts at the kind's own rate that every channel's rate starts from.
PRIOR = 4.0
#: A learned multiplier stays within these.
BOUNDS = (0.5, 1.5)
#: A verdict belongs to the latest recall of its memory at most this long before it.
MATCH_HOURS = 24.0
#: The name of the local file (`<git-dir>/memgit/weights.json`).
FILE = "weights.json"

Multipliers = dict[str, tuple[float, float, float]]


def path(git_dir: Path) -> Path:
    return localstate.folder(git_dir) / FILE


def multipliers(git_dir: Path | None) -> Multipliers:
    """Per query kind, the learned (keyword, vector, anchor) multipliers; {} when none were
    learned (no file, too few verdicts, or a file memgit cannot read: recall goes on)."""
    out: Multipliers = {}
    kinds = _kinds(git_dir)
    for kind, entry in (kinds.items() if isinstance(kinds, dict) else ()):
        values = entry.get("multipliers") if isinstance(entry, dict) else None
        if not isinstance(values, dict):
            continue
        try:
            triple = tuple(_bounded(float(values.get(c, 1.0))) for c in CHANNELS)
        except (TypeError, ValueError, OverflowError):  # OverflowError: a 400-digit integer
            continue
        out[str(kind)] = (triple[0], triple[1], triple[2])
    return out


def _kinds(git_dir: Path | None) -> object:
    """The file's "kinds" as read (checked by the caller), None without a readable file."""
    if git_dir is None:
        return None
    try:
        data = json.loads(path(git_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("kinds") if isinstance(data, dict) else None


def _bounded(value: float) -> float:
    if math.isnan(value):  # from a hand-edited file
        return 1.0
    return min(BOUNDS[1], max(BOUNDS[0], value))


def learn(recalls: list[dict[str, Any]], verdicts: list[tuple[datetime, str, str]]) -> dict[str, Any]:
    """What the logs teach, per query kind (see the module docstring): verdict counts, each
    channel's counts and, from `MIN_VERDICTS` verdicts on, its multiplier. `recalls` are the
    recall log's records; `verdicts` are (when, memory id, verdict), "ignored" ones left out."""
    seen: dict[str, list[tuple[datetime, str, list[str]]]] = {}
    for record in recalls:
        when = _time(record.get("ts"))
        kind, found = record.get("kind"), record.get("channels")
        if when is None or not isinstance(kind, str) or not isinstance(found, dict):
            continue  # a recall logged before memgit kept channels
        for mid, names in found.items():
            if isinstance(names, list):
                seen.setdefault(str(mid), []).append((when, kind, [c for c in names if c in CHANNELS]))
    for events in seen.values():
        events.sort(key=lambda e: e[0])
    counts: dict[str, dict[str, Any]] = {}
    for when, mid, verdict in verdicts:
        if verdict not in ("used", "wrong"):
            continue
        match = None
        for event in seen.get(mid, ()):
            if event[0] > when:
                break
            if when - event[0] <= timedelta(hours=MATCH_HOURS):
                match = event
        if match is None:
            continue
        entry = counts.setdefault(match[1], {"used": 0, "wrong": 0,
                                             "channels": {c: {"used": 0, "wrong": 0} for c in CHANNELS}})
        entry[verdict] += 1
        for channel in match[2]:
            entry["channels"][channel][verdict] += 1
    for entry in counts.values():
        total = entry["used"] + entry["wrong"]
        entry["verdicts"] = total
        rate = entry["used"] / total if total else 0.0
        if total < MIN_VERDICTS or rate <= 0:
            continue  # too few to tell; or nothing was ever used: no channel did better
        entry["multipliers"] = {}
        for channel, c in entry["channels"].items():
            shrunk = (c["used"] + PRIOR * rate) / (c["used"] + c["wrong"] + PRIOR)
            entry["multipliers"][channel] = round(_bounded(shrunk / rate), 3)
    return counts


def update(git_dir: Path) -> dict[str, Any]:
    """Learn from this clone's logs and write `weights.json` (atomically); returns what was
    written. Raises OSError when the file cannot be written."""
    from memgit.recall import usage  # only feedback and stats read the logs

    data = {"learned": localstate.stamp(), "min_verdicts": MIN_VERDICTS,
            "kinds": learn(usage.recall_records(git_dir), usage.load(git_dir).feedback_events)}
    localstate.replace(path(git_dir), json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data


def summary(git_dir: Path | None) -> dict[str, Any]:
    """For `memgit stats`: per query kind, its verdicts and multipliers (1.0 until learned)."""
    kinds = _kinds(git_dir)
    learned = multipliers(git_dir)
    out: dict[str, Any] = {}
    for kind, entry in sorted(kinds.items() if isinstance(kinds, dict) else ()):
        if not isinstance(entry, dict):
            continue
        values = learned.get(kind, (1.0, 1.0, 1.0))
        out[kind] = {"verdicts": entry.get("verdicts", 0), "used": entry.get("used", 0),
                     "wrong": entry.get("wrong", 0), "learned": kind in learned,
                     "multipliers": dict(zip(CHANNELS, values))}
    return out


def _time(value: object) -> datetime | None:
    return parse_time(str(value)) if isinstance(value, str) else None
