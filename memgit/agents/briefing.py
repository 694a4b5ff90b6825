"""What an agent is given when a session starts, after a compaction, and with a prompt.

- Session start: pinned memories first, then the task's latest checkpoint, then the
  memories most relevant to the repository's state (the branch and the files changed since
  the default branch), all within one budget (the `[inject]` budget, 600 tokens).
- After a compaction: the task's latest checkpoint first, then relevant memories.
- With a prompt: the memories relevant to it above the floor.

Memories the session already holds (`memgit.agents.known`) are never given twice; the text never
exceeds the agents' 10,000-character cap for hook output.

At session start, capture proposals an earlier session's end left pending (`memgit capture
--pending`) are named in a few lines (`pending_note`) with the one command that accepts one, so
the agent or the user can take or drop them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from memgit.agents import checkpoint, taskid
from memgit.git import localstate, repostate
from memgit.index.workspace import Workspace
from memgit.recall import ask, codecheck, provenance
from memgit.recall.hit import Hit
from memgit.recall.inject import HEADER, Injection, fit

if TYPE_CHECKING:
    from memgit.memory.format import Memory

MAX_CHARS = 9_500  # the agents cap hook output at 10,000 characters
PENDING_SHOWN = 3  # proposals named at session start (the rest are counted)
TITLES_SHOWN = 3  # titles named per proposal
ACCEPT = ("Accept one (written and staged, not committed) with `memgit capture --pending ID --apply`, "
          "drop it with `--drop`, or read it first with `memgit capture --pending ID`.")


def _hit(ws: Workspace, memory: "Memory") -> Hit:
    return Hit(memory.id, memory.title, 1.0, 1.0, {}, ws.rel_path(memory), memory)


def _capped(given: Injection) -> Injection:
    while given.parts and len(given.text) > MAX_CHARS:
        given = Injection(given.hits[:-1], given.parts[:-1], given.tokens, given.header, given.left_out + 1)
    return given


def state_queries(ws: Workspace) -> list[str]:
    """Queries for the repository's current state: the branch's words, and the files changed
    since the default branch (asked apart: many paths in one query would drown the branch)."""
    if ws.repo is None:
        return []
    root = ws.repo.root
    branch = repostate.branch(root) or ""
    base = repostate.default_base(root)
    files = [c.path for c in repostate.changed_since(root, base)[:15]]
    words = branch.replace("/", " ").replace("-", " ").replace("_", " ")
    return [q for q in (words.strip(), " ".join(files)) if q]


def _pinned_and_checkpoints(ws: Workspace, task: str | None) -> list["Memory"]:
    """Active pinned memories and the task's checkpoints, newest first, straight from the
    index (reading all memories costs ~50 ms at 1k: a hook at session start cannot spare it)."""
    index = ws.index
    index.sync(embed="none")
    # `pinned` is kept in the extra column (see memgit.index): a LIKE narrows, the parse decides.
    ids = index.db.guard(
        lambda: [
            row[0]
            for row in index.conn.execute(
                "SELECT id FROM memories WHERE status = 'active' AND (extra LIKE '%\"pinned\": true%' "
                "OR (kind = 'checkpoint' AND task_id IS ?))",
                (task,),
            ).fetchall()
        ]
    )
    found = [m for m in index.memories(ids).values() if m.pinned or m.kind == "checkpoint"]
    return sorted(found, key=lambda m: (m.updated or m.created or "", m.id), reverse=True)


def session_start(
    ws: Workspace,
    *,
    task: str | None,
    known: Sequence[str] = (),
    budget: int | None = None,
    compact: bool = False,
) -> Injection:
    """Pinned memories (not after a compaction: they are in the compacted summary's place
    too, so they come after the checkpoint), the latest checkpoint, then relevant ones."""
    c = ws.config
    budget = c.inject_budget if budget is None else budget
    everything = _pinned_and_checkpoints(ws, task)
    pinned = [m for m in everything if m.pinned]
    point = checkpoint.latest(ws, task, [m for m in everything if m.kind == "checkpoint"]) if task else None
    first = ([point] if point else []) + pinned if compact else pinned + ([point] if point else [])
    skip = set(known)
    chosen = codecheck.annotate(ws, provenance.mark(ws, [_hit(ws, m) for m in first if m.id not in skip]),
                                rank=False)
    queries = ([point.title] if point is not None else []) + state_queries(ws)
    taken = skip | {h.id for h in chosen}
    found: dict[str, Hit] = {}
    for query in queries:
        for hit in ask.recall(  # after a compaction, deep: what the summary lost sits next to what matches
            ws, query, c.inject_k + len(taken), task_id=task, min_score=c.inject_min_score, record=False,
            deep=compact,
        ):
            if hit.id not in taken and hit.memory.kind != "checkpoint":
                found.setdefault(hit.id, hit)
    chosen += sorted(found.values(), key=lambda h: -h.relevance)[: c.inject_k]
    if point is not None and chosen and chosen[0].id == point.id:
        # A resumed task needs its whole checkpoint more than a third memory: up to 2/3 of the budget.
        lead = fit(chosen[:1], budget, max(c.inject_per_memory, budget * 2 // 3), 1, header=HEADER)
        rest = fit(chosen[1:], budget - lead.tokens - 1, c.inject_per_memory, len(chosen) - 1)
        return _capped(
            Injection(
                lead.hits + rest.hits,
                lead.parts + rest.parts,
                lead.tokens + rest.tokens + 1,
                HEADER,
                rest.left_out,
                lead.reason,
            )
        )
    return _capped(fit(chosen, budget, c.inject_per_memory, len(chosen), header=HEADER))


def for_prompt(
    ws: Workspace, prompt: str, *, task: str | None, known: Sequence[str] = (), budget: int | None = None
) -> Injection:
    """Memories relevant to `prompt`, above the floor, that the session does not hold yet. A
    prompt of several sentences is searched as a whole only: this runs on every prompt, and
    each sentence would cost one more query embedding (`memgit.recall.sentences`)."""
    return _capped(ask.inject(ws, prompt, task_id=task, budget=budget, known=known, record=False,
                              by_sentence=False))


def resume(
    ws: Workspace, *, task: str | None, budget: int | None = None, known: Sequence[str] = ()
) -> Injection:
    """`memgit resume`: the task's latest checkpoint first (the task as `memgit.agents.taskid`
    decides it), then memories relevant to it and to the repository's state."""
    if ws.repo is not None:
        task = taskid.task_for(ws.repo.root, explicit=task)
    given = session_start(ws, task=task, known=known, budget=budget, compact=True)
    if not given.parts and not given.reason:
        given = Injection((), (), 0, reason=f"no checkpoint and nothing relevant for task {task}")
    return given


def pending_note(ws: Workspace) -> str:
    """A few lines naming the capture proposals waiting in `<git-dir>/memgit/capture/` (count,
    ids, first titles) and the command that accepts one; "" when none waits."""
    if ws.repo is None:
        return ""
    folder = localstate.captures(ws.repo.git_dir)
    found: list[dict[str, Any]] = []
    for path in folder.glob("*.json") if folder.is_dir() else ():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(data, dict) and isinstance(data.get("candidates"), list) and data["candidates"]:
            found.append(data)
    if not found:
        return ""
    found.sort(key=lambda d: str(d.get("created", "")), reverse=True)
    total = sum(len(d["candidates"]) for d in found)
    head = (f"## memgit: {len(found)} capture proposal{'s' if len(found) > 1 else ''} from earlier sessions "
            f"({total} memor{'ies' if total > 1 else 'y'}) wait{'' if len(found) > 1 else 's'} for review")
    lines = [head, ""]
    for data in found[:PENDING_SHOWN]:
        titles = [_short(c.get("title")) for c in data["candidates"] if isinstance(c, dict)]
        more = len(titles) - TITLES_SHOWN
        named = "; ".join(titles[:TITLES_SHOWN]) + (f"; +{more} more" if more > 0 else "")
        lines.append(f"- {data.get('id')}: {named}")
    if len(found) > PENDING_SHOWN:
        lines.append(f"- and {len(found) - PENDING_SHOWN} more: `memgit capture --pending` lists them")
    lines += ["", ACCEPT]
    return "\n".join(lines) + "\n"


def _short(title: Any, limit: int = 70) -> str:
    text = " ".join(str(title or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
