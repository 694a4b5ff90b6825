"""A memory's life by its use: eviction and promotion, two of `memgit reflect`'s steps.

Eviction archives what nobody needs: low-confidence memories not recalled for a while,
checkpoints past their time, and the least recalled checkpoints beyond a limit. Before it,
a memory marked wrong (`memgit feedback ID --wrong`) more often than used since its last
update gets its confidence lowered and `needs_review`. Promotion
pins memories marked used in many sessions and unpins pinned ones left unused. The
thresholds are the `[reflect]` settings; the usage comes from the local logs
(`memgit.recall.usage`) and is quoted in each proposal's evidence.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memgit.memory.format import Memory
from memgit.recall.usage import days_between, parse_time
from memgit.reflect.proposals import FileChange, Inputs, Proposal


class Lifecycle:
    """The eviction and promotion steps of the reflect engine (`memgit.reflect.reflect._Engine`)."""

    # What it uses of the engine, which defines them.
    i: Inputs
    state: dict[str, Memory]

    def active(self) -> list[Memory]:
        raise NotImplementedError

    def editable(self, *memories: Memory) -> bool:
        raise NotImplementedError

    def edit(self, memory: Memory, **fields: Any) -> FileChange:
        raise NotImplementedError

    def add(self, proposal: Proposal) -> None:
        raise NotImplementedError

    def age_days(self, memory: Memory) -> float | None:
        raise NotImplementedError

    # -- what feedback says ----------------------------------------------------------------------

    def marked_wrong(self, memory: Memory) -> int:
        """How many more times `memgit feedback ID --wrong` than `--used` was said of the memory
        since its last update (the local feedback log; 0 when used as often)."""
        if not hasattr(self, "_verdicts"):
            self._verdicts: dict[str, list[tuple[datetime, str]]] = {}
            for when, mid, verdict in self.i.usage.feedback_events:
                self._verdicts.setdefault(mid, []).append((when, verdict))
        since = parse_time(memory.updated or memory.created)
        score = sum(1 if verdict == "wrong" else -1 if verdict == "used" else 0
                    for when, verdict in self._verdicts.get(memory.id, ()) if since is None or when >= since)
        return max(0, score)

    def wrong(self) -> None:
        """A memory marked wrong: lower its confidence and flag it for a person."""
        drop = self.i.config.reflect_stale_confidence_drop
        for memory in sorted(self.active(), key=lambda m: m.id):
            times = self.marked_wrong(memory)
            if not times or memory.extra.get("needs_review") is True or not self.editable(memory):
                continue
            confidence = round(max(0.0, memory.confidence - drop), 2)
            change = self.edit(memory, confidence=confidence, needs_review=True)
            self.add(Proposal(
                "review-feedback", "eviction", (memory.id,),
                f'flag "{_short(memory.title)}" for review and lower its confidence '
                f"{memory.confidence:g} -> {confidence:g}",
                "it was marked wrong (memgit feedback --wrong) more often than used since its last update",
                (f"marked wrong {times} time(s) more than used since {_day(memory)} (local feedback)",),
                (change,),
            ))

    # -- 4. eviction ---------------------------------------------------------------------------

    def eviction(self) -> None:
        self.wrong()
        c = self.i.config
        checkpoints: list[Memory] = []
        for memory in sorted(self.active(), key=lambda m: m.id):
            if memory.pinned:
                continue
            use = self.i.usage.of(memory.id)
            age = self.age_days(memory)
            stamp = (memory.updated or memory.created or "?")[:10]
            if memory.kind == "checkpoint":
                expires = parse_time(memory.expires)
                if expires is not None and expires < self.i.now:
                    self._archive(
                        memory,
                        "eviction",
                        f"the checkpoint expired on {(memory.expires or '')[:10]}",
                        (f"expires {memory.expires}",),
                    )
                    continue
                if age is not None and age > c.reflect_checkpoint_ttl_days:
                    self._archive(
                        memory,
                        "eviction",
                        f"a checkpoint older than its {c.reflect_checkpoint_ttl_days} days TTL",
                        (f"last updated {stamp} ({age:.0f} days ago)",),
                    )
                    continue
                checkpoints.append(memory)
            if memory.confidence < c.reflect_evict_confidence:
                quiet = days_between(use.last_recalled, self.i.now)
                if use.last_recalled is None and age is not None and age > c.reflect_evict_days:
                    self._archive(
                        memory,
                        "eviction",
                        f"confidence {memory.confidence:g} is under {c.reflect_evict_confidence:g} "
                        f"and it was not recalled for {c.reflect_evict_days} days",
                        (f"recalled 0 times since {stamp} ({age:.0f} days)",),
                    )
                elif quiet is not None and quiet > c.reflect_evict_days:
                    assert use.last_recalled is not None
                    self._archive(
                        memory,
                        "eviction",
                        f"confidence {memory.confidence:g} is under {c.reflect_evict_confidence:g} "
                        f"and it was not recalled for {c.reflect_evict_days} days",
                        (
                            f"last recalled {use.last_recalled.date().isoformat()} ({quiet:.0f} days ago), "
                            f"{use.recalls} recall(s) in all",
                        ),
                    )
        live = [m for m in checkpoints if self.state.get(m.id) is not None and self.state[m.id].active]
        if len(live) > c.reflect_max_checkpoints:

            def key(m: Memory) -> tuple[int, str, str]:
                use = self.i.usage.of(m.id)
                last = use.last_recalled.isoformat() if use.last_recalled else ""
                return (use.recalls, last, m.updated or m.created or "")

            for memory in sorted(live, key=key)[: len(live) - c.reflect_max_checkpoints]:
                use = self.i.usage.of(memory.id)
                self._archive(
                    memory,
                    "eviction",
                    f"there are {len(live)} active checkpoints, over the limit of "
                    f"{c.reflect_max_checkpoints}; this one is among the least recalled",
                    (f"recalled {use.recalls} time(s)",),
                )

    def _archive(self, memory: Memory, category: str, reason: str, evidence: tuple[str, ...]) -> None:
        if not self.editable(memory):
            return
        change = self.edit(memory, status="archived")
        self.add(
            Proposal(
                "archive",
                category,
                (memory.id,),
                f'archive "{_short(memory.title)}"',
                reason,
                evidence,
                (change,),
            )
        )

    # -- 5. promotion ----------------------------------------------------------------------------

    def promotion(self) -> None:
        c = self.i.config
        for memory in sorted(self.active(), key=lambda m: m.id):
            use = self.i.usage.of(memory.id)
            sessions = len(use.used_sessions)
            pinned = memory.pinned
            if not pinned and sessions >= c.reflect_pin_sessions and use.recalls and self.editable(memory):
                change = self.edit(memory, pinned=True)
                self.add(
                    Proposal(
                        "pin",
                        "promotion",
                        (memory.id,),
                        f'pin "{_short(memory.title)}"',
                        f"it was recalled and marked used in {sessions} sessions "
                        f"(at least {c.reflect_pin_sessions})",
                        (f"recalled {use.recalls} time(s); marked used in {sessions} session(s)",),
                        (change,),
                    )
                )
            elif pinned:
                last = max((t for t in (use.last_used, use.last_recalled) if t is not None), default=None)
                idle = days_between(last, self.i.now) if last else self.age_days(memory)
                if idle is not None and idle > c.reflect_unpin_days and self.editable(memory):
                    said = (
                        f"last used or recalled {last.date().isoformat()} ({idle:.0f} days ago)"
                        if last
                        else f"not used or recalled since its update on {_day(memory)} ({idle:.0f} days ago)"
                    )
                    change = self.edit(memory, pinned=False)
                    self.add(
                        Proposal(
                            "unpin",
                            "promotion",
                            (memory.id,),
                            f'unpin "{_short(memory.title)}"',
                            f"pinned but not used or recalled for {c.reflect_unpin_days} days",
                            (said,),
                            (change,),
                        )
                    )


def _short(title: str, limit: int = 60) -> str:
    return title if len(title) <= limit else title[: limit - 1] + "…"


def _day(memory: Memory) -> str:
    return (memory.updated or memory.created or "?")[:10]
