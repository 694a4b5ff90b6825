"""Recall that knows: each recalled memory's code anchors checked against the work tree.

A memory records the code it was written against (`memgit.memory.against`); a memory that
records none (older, hand-written) is taken as written against the code of the commit that
last changed its file (found once, then cached). At recall, each hit's anchors are
fingerprinted in the work tree (`memgit.git.codeprint.Prints`, cached by file stat, so an
unchanged file is not read again) and compared:

- the same: nothing is said;
- changed: the hit says so (`CodeState.doubts`), with how many commits changed the file since
  and when the last one was; it is still returned;
- gone: said too, and the hit ranks lower (its score times `GONE_PENALTY`);
- unknown (no record, an unreadable file, a fingerprint memgit does not write): said, never
  taken for fresh.

`verify` re-records a memory's fingerprints as a commit: what an agent told to verify runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memgit.errors import MemgitError
from memgit.git import codeprint, runner
from memgit.git.repo import Repo
from memgit.index.workspace import Workspace
from memgit.memory import against, patch
from memgit.memory.format import Memory
from memgit.recall import lookup
from memgit.recall.hit import Hit

GONE_PENALTY = 0.5


@dataclass(frozen=True)
class Doubt:
    """One anchor whose code is not what the memory was written against: `state` is
    "changed", "gone" or "unknown"; `commits` changed its file since (and the `last` one's
    date), when the memory's own commit is known."""

    anchor: str
    state: str
    commits: int = 0
    last: str | None = None
    why: str = ""

    def sentence(self, memory_id: str, now: float | None = None) -> str:
        """What the agent reads."""
        if self.state == "gone":
            return f"`{self.anchor}` is gone since this was written; do not rely on it without checking"
        if self.state == "unknown":
            why = self.why or "the code it was written against is unknown"
            return f"`{self.anchor}`: {why}; verify before relying on it"
        since = (f" — {self.commits} commit{'s' if self.commits != 1 else ''}, last {_ago(self.last, now)}"
                 if self.commits else " — in the work tree, not committed")
        return (f"`{self.anchor}` changed since this was written{since}; verify before relying on it "
                f"(then `memgit verify {memory_id}`)")

    @property
    def told(self) -> bool:
        """Whether the agent is told where it reads the memory: changed or gone code (an
        unknown one is in `--json` only: hand-written memories would all say it)."""
        return self.state in ("changed", "gone")

    def to_dict(self) -> dict[str, Any]:
        return {"anchor": self.anchor, "state": self.state, "commits": self.commits, "last": self.last,
                "why": self.why}


@dataclass(frozen=True)
class CodeState:
    """What recall found of a memory's code: `status` is "fresh", "changed", "gone" or
    "unknown" (the worst of its anchors); `doubts` each anchor that is not fresh."""

    status: str
    doubts: tuple[Doubt, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "doubts": [d.to_dict() for d in self.doubts]}


_PRINTS: dict[Path, codeprint.Prints] = {}


def prints_for(repo: Repo) -> codeprint.Prints:
    """The work tree's fingerprints, one cache per repository for a long-lived process."""
    found = _PRINTS.get(repo.root)
    if found is None:
        found = _PRINTS[repo.root] = codeprint.Prints(repo.root, repo.git_dir)
    return found


def state_of(repo: Repo, memory: Memory, memory_path: str, prints: codeprint.Prints) -> CodeState | None:
    """`memory`'s code checked against the work tree; None when it has no code anchors.
    `memory_path` is its file's path from the repository root."""
    anchors = against.code_anchors(memory)
    if not anchors:
        return None
    record = against.recorded(memory)
    if record is None:
        record = derived(repo, memory_path, anchors, prints)
    doubts = []
    by_symbol = any("::" in a for a in anchors)  # `against.names_symbols`, from the anchors at hand
    for anchor in anchors:
        now = prints.of(anchor)
        then = record.get(anchor) if record is not None else None
        doubt = _compare(anchor, then, now)
        if doubt is not None and not (by_symbol and "::" not in anchor and doubt.state != "gone"):
            doubts.append(doubt)
    if any(d.state == "changed" for d in doubts):
        doubts = _with_commits(repo, memory_path, doubts, prints)
    status = next((s for s in ("gone", "changed", "unknown") if any(d.state == s for d in doubts)), "fresh")
    return CodeState(status, tuple(doubts))


def _compare(anchor: str, then: str | None, now: str | None) -> Doubt | None:
    if now == codeprint.GONE:
        return None if then == codeprint.GONE else Doubt(anchor, "gone")
    if then is None or then == against.UNKNOWN:
        return Doubt(anchor, "unknown", why="the code it was written against is not recorded")
    if then == codeprint.GONE:
        return Doubt(anchor, "unknown", why="it was not there when this was written")
    if not codeprint.PRINT_RE.match(then):
        return Doubt(anchor, "unknown",
                     why=f"the recorded fingerprint `{then[:40]}` is not one memgit writes")
    if now is None:
        return Doubt(anchor, "unknown", why="its code cannot be fingerprinted now")
    if now == then or (len(then) >= 7 and now.startswith(then)):
        return None
    return Doubt(anchor, "changed")


def derived(repo: Repo, memory_path: str, anchors: Sequence[str],
            prints: codeprint.Prints) -> dict[str, str] | None:
    """The fingerprints of the code as of the commit that last changed the memory's file
    (cached by that file's stat); None when the file was never committed."""
    key = "memory:" + memory_path
    stat = _stat(os.path.join(repo.root, memory_path))  # a str join: no Path made a hit, every recall
    cached = prints.extra(key)
    if (cached is not None and cached.get("stat") == stat and _prints_shaped(cached)
            and all(a in cached["prints"] for a in anchors)):
        return dict(cached["prints"]) if cached["commit"] else None
    commit = _written_in(repo, memory_path)
    found = {a: p or against.UNKNOWN for a, p in codeprint.prints_at(repo.root, commit, anchors).items()} \
        if commit else {}
    prints.put_extra(key, {"stat": stat, "commit": commit, "prints": found})
    return found if commit else None


def _prints_shaped(cached: dict[str, Any]) -> bool:
    """Whether a cached `derived` answer has the shape this module writes (the cache is a file
    under the git dir that anything may have left half-written or altered: never trust it)."""
    found, commit = cached.get("prints"), cached.get("commit")
    return (isinstance(found, dict) and (commit is None or isinstance(commit, str))
            and all(isinstance(a, str) and isinstance(p, str) for a, p in found.items()))


def _commits_shaped(cached: dict[str, Any]) -> bool:
    """Whether a cached `_with_commits` answer has the shape this module writes."""
    files = cached.get("files")
    return isinstance(files, dict) and all(
        isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], list)
        and isinstance(entry[1], int) and (entry[2] is None or isinstance(entry[2], str))
        for entry in files.values())


def _stat(path: Path | str) -> list[int]:
    try:
        st = os.stat(path)
    except OSError:
        return []
    return [st.st_ino, st.st_mtime_ns, st.st_size]


def _head(repo: Repo) -> str:
    try:
        return (repo.git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _written_in(repo: Repo, memory_path: str) -> str | None:
    done = runner.run(["log", "-1", "--format=%H", "--", memory_path], repo.root)
    return done.stdout.strip() or None if done.ok else None


def _with_commits(repo: Repo, memory_path: str, doubts: list[Doubt], prints: codeprint.Prints) -> list[Doubt]:
    """`doubts` with the commits that changed each changed anchor's file since the memory's
    commit: asked of git once, then cached by the stat of the memory's file and the code's
    file, and where HEAD is (its file, and its reflog, which every commit and checkout extends)."""
    changed = [d.anchor.partition("::")[0] for d in doubts if d.state == "changed"]
    index = [_head(repo), *_stat(repo.git_dir / "logs" / "HEAD")]
    key = "commits:" + memory_path
    cached = prints.extra(key)
    stats = {p: _stat(repo.root / p) for p in changed}
    fresh = (cached is not None and _commits_shaped(cached) and cached.get("memory") == _stat(repo.root / memory_path)
             and cached.get("index") == index and all(cached.get("files", {}).get(p, [None])[0] == stats[p]
                                                      for p in changed))
    if not fresh:
        since = _written_in(repo, memory_path)
        files: dict[str, list[Any]] = {}
        for path in dict.fromkeys(changed):
            done = runner.run(["log", "--format=%cI", f"{since}..HEAD", "--", path], repo.root) \
                if since else None
            dates = done.stdout.split() if done is not None and done.ok else []
            files[path] = [stats[path], len(dates), dates[0] if dates else None]
        cached = {"memory": _stat(repo.root / memory_path), "index": index, "files": files}
        prints.put_extra(key, cached)
    assert cached is not None
    out = []
    for d in doubts:
        entry = cached["files"].get(d.anchor.partition("::")[0]) if d.state == "changed" else None
        out.append(replace(d, commits=entry[1], last=entry[2]) if entry else d)
    return out


def _ago(when: str | None, now: float | None = None) -> str:
    try:
        then = datetime.fromisoformat(when or "").timestamp()
    except ValueError:
        return "at an unknown time"
    seconds = max(0.0, (now if now is not None else time.time()) - then)
    day = 86400
    units = ((day * 365, "year"), (day * 30, "month"), (day, "day"), (3600, "hour"), (60, "minute"))
    for size, unit in units:
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "just now"


def annotate(ws: Workspace, hits: Sequence[Hit], *, rank: bool = True) -> list[Hit]:
    """`hits` with what recall found of their code (`Hit.code`); with `rank`, those whose anchor
    is gone rank lower. Hits of another store (the user's) are left as they are."""
    repo = ws.repo
    if repo is None or not hits:
        return list(hits)
    prints = prints_for(repo)
    prints.look_again()
    out = []
    for hit in hits:
        state = state_of(repo, hit.memory, hit.path, prints) if hit.scope == "project" else None
        if state is None:
            out.append(hit)
            continue
        score = hit.score * GONE_PENALTY if state.status == "gone" and rank else hit.score
        out.append(replace(hit, code=state, score=score))
    prints.save()
    return sorted(out, key=lambda h: -h.score) if rank else out


def verify(ws: Workspace, ref: str, commit: bool = True) -> Memory:
    """Record that a memory still holds for its code as it is now: its fingerprints recorded
    again (and `needs_review` cleared), as one commit."""
    ws.require_store()
    writer = ws.writer
    with writer.writing():
        memory = lookup.get(ws, ref)
        if not against.code_anchors(memory):
            raise MemgitError(f"{memory.id} has no anchors into code (files, a path entity, "
                                     "path::symbol): there is nothing to verify")
        _refuse_gone(ws, memory)
        extra = {k: v for k, v in memory.extra.items() if k != "needs_review"}
        now = datetime.now(UTC).replace(microsecond=0).isoformat()
        new = writer.stamped(replace(memory, extra=extra, updated=now), memory, again=True)
        writer.text_of(new)
        change = writer.change(f'memory: verify "{memory.title[:60]}" against the code', commit)
        change.write(new.path, patch.edited(ws.store, memory, new))
        writer.land(change)
    return new


def _refuse_gone(ws: Workspace, memory: Memory) -> None:
    """Refuse to verify a memory whose recorded code is gone from the work tree: its record
    would become "not there", and recall would call it fresh while it describes nothing."""
    repo = ws.repo
    if repo is None:
        return
    prints = prints_for(repo)
    prints.look_again()
    anchors = against.code_anchors(memory)
    record = against.recorded(memory)
    if record is None:
        record = derived(repo, ws.rel_path(memory), anchors, prints) or {}
    gone = [a for a in anchors if codeprint.PRINT_RE.match(record.get(a) or "")
            and prints.of(a) == codeprint.GONE]
    if gone:
        raise MemgitError(f"`{gone[0]}` is gone since {memory.id} was written, so there is nothing to verify it "
                          "against: edit the memory to name the code as it is now (`memgit reflect --apply` "
                          "fixes a renamed path) or forget it")
