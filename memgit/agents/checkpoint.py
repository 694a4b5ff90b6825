"""Checkpoints: a task's saved state, written before the agent's context is compacted, read
first when it resumes.

A checkpoint is a memory file like any other (kind `checkpoint`, tagged with the task id),
so it is reviewable and recalled. Its body has three parts:

- **Intent**: the user's latest request and the agent's latest stated plan (from the
  transcript), or the `--intent` given;
- **State**: the files changed since the session's starting commit, each with the functions
  its changes fall in (`memgit.git.repostate`);
- **Actions**: the agent's tool calls summarised (files read, files changed, commands run),
  failed ones as dead ends: "tried X — failed: Y".

Policy: a checkpoint is *staged*, not committed (like `--no-commit`): it rides along with the
user's next commit of their work, and memgit never makes a commit that mixes in user files
or a commit per compaction. It expires after 7 days, and it supersedes the task's previous
checkpoint, so recall gives only the latest.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from memgit.agents import known, taskid
from memgit.errors import MemgitError
from memgit.git import repostate
from memgit.index.workspace import Workspace
from memgit.memory import format as fmt
from memgit.recall import lookup

if TYPE_CHECKING:
    from memgit.agents import agentlog

TTL_DAYS = 7
MAX_LINES = 12


@dataclass(frozen=True)
class Draft:
    title: str
    body: str
    files: tuple[str, ...]
    symbols: tuple[str, ...]


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _rel(root: Path, target: str) -> str:
    try:
        return (
            Path(target).resolve().relative_to(root.resolve()).as_posix()
            if target.startswith("/")
            else target
        )
    except (ValueError, OSError):
        return target


def draft(root: Path, *, task: str, intent: str | None, start_commit: str | None, log: agentlog.Log) -> Draft:
    """The checkpoint's title and body, from the transcript and the repository."""
    request = intent or (log.prompts[-1] if log.prompts else "")
    plan = log.said[-1] if log.said and not intent else ""
    lines = [f"**Intent:** {_cut(request, 400) or 'not stated'}"]
    if plan:
        lines.append(f"**Plan:** {_cut(plan, 300)}")
    changed = repostate.changed_since(root, start_commit)
    since = f" since {start_commit[:10]}" if start_commit else ""
    lines.append(f"\n**State** (files changed{since}):")
    for item in changed[:MAX_LINES]:
        lines.append(
            f"- `{item.path}`"
            + (": " + ", ".join(f"`{f}`" for f in item.functions[:8]) if item.functions else "")
        )
    if not changed:
        lines.append("- no file changed yet")
    lines.append("\n**Actions:**")
    lines += _actions(root, log.actions) or ["- none recorded"]
    files = tuple(c.path for c in changed[:20])
    symbols = tuple(f"{c.path}::{f}" for c in changed[:20] for f in c.functions[:5] if c.path.endswith(".py"))
    title = f"Checkpoint {task}: {_cut(request, 90) or 'work in progress'}"
    return Draft(title, "\n".join(lines), files, symbols)


def _actions(root: Path, actions: Sequence[agentlog.Action]) -> list[str]:
    """Pure reads folded into one line per kind; failures kept one by one as dead ends."""
    groups: dict[str, dict[str, None]] = {"read": {}, "edit": {}, "run": {}, "delegate": {}}
    dead: list[str] = []
    for action in actions:
        target = _rel(root, action.target) if action.kind in ("read", "edit") else action.target
        if action.error:
            dead.append(f"- dead end: tried `{_cut(target, 120)}` — failed: {_cut(action.error, 160)}")
        elif action.kind in groups and target:
            groups[action.kind][target] = None
    out = []
    for kind, label in (("read", "read"), ("edit", "changed"), ("run", "ran"), ("delegate", "delegated")):
        items = list(groups[kind])
        if items:
            shown = ", ".join(f"`{_cut(t, 80)}`" for t in items[-8:])
            more = f" (+{len(items) - 8} more)" if len(items) > 8 else ""
            out.append(f"- {label}: {shown}{more}")
    return out + dead[-6:]


def latest(
    ws: Workspace, task: str | None, memories: Sequence[fmt.Memory] | None = None
) -> fmt.Memory | None:
    """The task's newest active checkpoint that has not expired."""
    now = datetime.now(timezone.utc).isoformat()
    pool = memories if memories is not None else lookup.select(ws, kind="checkpoint", task_id=task)
    replaced = {old for m in pool for old in m.supersedes}  # two in one second: the newer replaced the older
    found = [
        m
        for m in pool
        if m.kind == "checkpoint"
        and m.active
        and (task is None or m.task_id == task)
        and not (m.expires and m.expires < now)
        and m.id not in replaced
    ]
    return found[0] if found else None


def write(
    ws: Workspace,
    *,
    task: str,
    intent: str | None = None,
    start_commit: str | None = None,
    transcript: str | None = None,
    commit: bool = False,
    transcript_end: int | None = None,
) -> fmt.Memory:
    """Write the task's checkpoint (staged unless `commit`); returns the memory. `transcript_end`:
    read the transcript's first that many bytes (as it was when a hook handed it off)."""
    from memgit.agents import agentlog  # every transcript reader: not in a hook that only recalls
    from memgit.memory.credentials import find_in_memory  # secret rules: not in a hook that only recalls

    ws.require_store()
    repo = ws.writer.repo()
    log = agentlog.read(transcript, end=transcript_end)
    if not intent and not log.prompts and not log.actions and not repostate.changed_since(repo.root, start_commit):
        raise MemgitError("nothing to checkpoint yet: no request, no action and no changed file")
    made = draft(repo.root, task=task, intent=intent, start_commit=start_commit, log=log)
    body = made.body
    budget = ws.config.memory_token_budget
    while fmt.count_tokens(body) > budget and "\n" in body:
        body = body.rsplit("\n", 1)[0]  # from the end: intent and state matter most
    stamp = datetime.now(timezone.utc).replace(microsecond=0)

    with ws.writer.writing():
        previous = latest(ws, task)
        memory = fmt.Memory(
            id=fmt.new_id({m.id for m in lookup.select(ws, status=None)}),
            title=made.title,
            body=body,
            kind="checkpoint",
            source="inferred",
            confidence=fmt.DEFAULT_CONFIDENCE["inferred"],
            task_id=task,
            created=stamp.isoformat(),
            updated=stamp.isoformat(),
            tags=("checkpoint",),
            files=made.files,
            symbols=made.symbols,
            supersedes=(previous.id,) if previous else (),
            expires=(stamp + timedelta(days=TTL_DAYS)).isoformat(),
        )
        if find_in_memory(memory) and "\n**Actions:**" in body:
            # A command line with a credential in it: keep intent and state, drop the actions.
            memory = replace(memory, body=body.split("\n**Actions:**")[0].rstrip())
        found = find_in_memory(memory)
        if found:
            raise MemgitError(f"the checkpoint would hold a secret in {found[0].where}; not written")
        (memory,), _ = ws.writer.add([memory], f'memory: checkpoint "{_cut(made.title, 60)}"', commit)
    return memory


def save(
    ws: Workspace, *, intent: str | None, task: str | None, session: str | None, commit: bool
) -> fmt.Memory:
    """`memgit checkpoint`: the task from `--task`, `MEMGIT_TASK` or the rule of
    `memgit.agents.taskid`; the session (given, or the agent's own from `CLAUDE_CODE_SESSION_ID`)
    supplies the starting commit and the transcript when memgit has seen it start."""

    repo = ws.writer.repo()
    session = session or os.environ.get("CLAUDE_CODE_SESSION_ID") or None
    state = known.load(repo.git_dir, session) if session else None
    if task is None and state is not None and not os.environ.get("MEMGIT_TASK"):
        task = state.task
    task = taskid.task_for(repo.root, explicit=task, session_id=session)
    start = state.start_commit if state is not None else None
    if start is None:  # no session seen: what the branch changed since the default branch
        start = repostate.default_base(repo.root)
    return write(
        ws,
        task=task,
        intent=intent,
        start_commit=start,
        transcript=state.transcript if state is not None else None,
        commit=commit,
    )
