"""A capture proposal shown, applied, or kept for later (the session-end hand-off).

Applying never commits into the user's branch behind their back: by default the memory files
are written and staged (`git add`), for the user to commit with their work; with a branch
name they are committed on that new branch, built from HEAD without touching the current
branch, the index or the working tree.

Pending proposals live in `<git-dir>/memgit/capture/<id>.json`; the hook's one-line log is
`<git-dir>/memgit/capture.log`.
"""

from __future__ import annotations

import difflib
import json
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from memgit.capture import personal
from memgit.capture.capture import CaptureProposal, own_id, plan, planned_against, propose
from memgit.capture.extract import Candidate
from memgit.errors import MemgitError
from memgit.git import branches, localstate
from memgit.git import repo as gitrepo
from memgit.index.workspace import Workspace
from memgit.memory.format import KINDS

#: What a proposal id is (capture names them by a digest); a pending file edited to hold another
#: id (a path, `../`) is not listed, so no file is written or deleted by its id.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")

def render(ws: Workspace, proposal: CaptureProposal) -> str:
    """The proposal as a unified diff over the memory folder, then a Markdown summary."""
    parts = []
    for memory in proposal.memories:
        rel = ws.rel_path(memory)
        text = ws.writer.text_of(memory)
        diff = difflib.unified_diff([], text.splitlines(keepends=True), "/dev/null", "b/" + rel)
        parts.append("".join(diff))
    n = len(proposal.memories)
    lines = ["", f"## Capture of {Path(proposal.transcript).name} ({proposal.format}, {proposal.lines} lines"
             + (f", {proposal.skipped} skipped" if proposal.skipped else "") + ")", ""]
    if n:
        lines.append(f"{n} new {'memory' if n == 1 else 'memories'}:")
        lines.append("")
        for candidate, memory in zip(proposal.candidates, proposal.memories):
            where = ", ".join(map(str, candidate.evidence[:6]))
            lines.append(f"- **{candidate.kind}** {candidate.title} ({candidate.source}, line {where})"
                         + (" → the user store" if personal.is_personal(memory) else ""))
    else:
        lines.append("Nothing new to remember.")
    if proposal.known:
        lines += ["", "Already known:"]
        lines += [f"- {c.title} (line {c.evidence[0]}) is {mid}" for c, mid in proposal.known]
    if proposal.dropped:
        lines += ["", "Left out:"]
        lines += [f"- line {c.evidence[0]}: {why}" for c, why in proposal.dropped]
    if proposal.redacted:
        lines += ["", f"{proposal.redacted} likely secret(s) replaced by `[secret redacted]`."]
    if proposal.judge:
        lines += ["", f"Judge: {proposal.judge}."]
    lines += ["", "Nothing was written." if n else ""]
    return "".join(parts) + "\n".join(lines).rstrip() + "\n"


def apply(ws: Workspace, proposal: CaptureProposal, *, branch: str | None = None) -> dict[str, Any]:
    """Write the proposed files: staged, or committed on the new branch `branch`."""
    repo = ws.writer.repo()
    message = f"memory: capture {len(proposal.memories)} memories from {Path(proposal.transcript).name}"
    with ws.writer.writing():
        if not planned_against(ws, proposal):  # the store changed since proposing: plan again
            plan(ws, proposal, proposal.candidates + [])
        memories = personal.keep(ws, proposal.memories, message)  # first-person preferences: the user's store
        if not memories:
            _log_restated(ws, proposal)
            return {"written": [], "branch": None, "commit": None}
        if branch:
            files = {ws.rel_path(m): ws.writer.text_of(m).encode() for m in memories}
            sha = branches.commit_on_new_branch(repo, branch, files, message)
            _log_restated(ws, proposal)
            return {"written": sorted(files), "branch": branch, "commit": sha}
        ws.writer.add(memories, message, commit=False)
    _log_restated(ws, proposal)
    return {"written": [ws.rel_path(m) for m in memories], "branch": None, "commit": None}


def _log_restated(ws: Workspace, proposal: CaptureProposal) -> None:
    if not proposal.known or ws.repo is None:
        return
    log, stamp = localstate.restated(ws.repo.git_dir), localstate.stamp()
    for candidate, mid in proposal.known:
        if mid == own_id(proposal, candidate):
            continue  # the memory an earlier capture of this same session wrote: not said again
        localstate.append_json(log, {"time": stamp, "memory": mid, "transcript": proposal.transcript,
                                     "line": candidate.evidence[0]})


# -- pending proposals -------------------------------------------------------------------------

def _folder(ws: Workspace) -> Path:
    return localstate.captures(ws.writer.repo().git_dir)


def _done(ws: Workspace) -> Path:
    """Where a proposal applied or dropped leaves a note (`done/<id>.json`), so that taking it
    twice says what happened instead of "not found"."""
    return _folder(ws) / "done"


def save_pending(ws: Workspace, proposal: CaptureProposal) -> Path:
    path = _folder(ws) / f"{proposal.id}.json"
    data = proposal.to_dict(ws.rel_path)
    data["created"] = localstate.stamp()
    localstate.replace(path, json.dumps(data, ensure_ascii=False, indent=1))
    return path


def _read(folder: Path) -> list[dict[str, Any]]:
    out = []
    for path in folder.glob("*.json") if folder.is_dir() else ():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            out.append(data)
    return out


def pending(ws: Workspace) -> list[dict[str, Any]]:
    """The proposals the session-end hook left, newest first, each with the candidates it
    would show now: planned again against the store, as `load_pending` does, so that the
    count listed is the count shown."""
    out = []
    for data in _waiting(ws):
        try:
            now = _planned(ws, data).to_dict(ws.rel_path)
        except (KeyError, TypeError, ValueError, AttributeError):  # a damaged file: not a proposal
            continue
        out.append(dict(data, candidates=now["candidates"], known=now["known"]))
    return out


def _waiting(ws: Workspace) -> list[dict[str, Any]]:
    """The proposal files as kept, newest first."""
    out = [d for d in _read(_folder(ws)) if isinstance(d.get("candidates"), list)
           and isinstance(d.get("id"), str) and _ID.fullmatch(d["id"])]
    return sorted(out, key=lambda d: str(d.get("created", "")), reverse=True)


def load_pending(ws: Workspace, ref: str) -> CaptureProposal:
    """A pending proposal by id (or unique id prefix), planned again against the store."""
    ref = ref.strip()
    waiting = _waiting(ws)
    matches = [d for d in waiting if str(d.get("id", "")).startswith(ref)] if ref else []
    if len(matches) != 1:
        done = [d for d in _read(_done(ws)) if ref and str(d.get("id", "")).startswith(ref)]
        if not matches and len(done) == 1:
            raise MemgitError(_already(done[0]))
        found = ", ".join(str(d.get("id")) for d in waiting) or "none"
        what = "more than one" if matches else "no"
        raise MemgitError(f"{what} pending capture proposal matches {ref!r} (pending: {found}); "
                          "'memgit capture --pending' lists them")
    return _planned(ws, matches[0])


def _planned(ws: Workspace, data: dict[str, Any]) -> CaptureProposal:
    """A kept proposal planned again against the store as it is now."""
    candidates = [c for c in map(_candidate, data["candidates"]) if c is not None]
    proposal = CaptureProposal(str(data["id"]), str(data.get("transcript", "")), str(data.get("format", "")),
                        str(data.get("session_id", "")), _count(data.get("lines")),
                        _count(data.get("skipped_lines")), [], judge=str(data.get("judge", "")))
    plan(ws, proposal, candidates)
    return proposal


def _candidate(raw: Any) -> Candidate | None:
    """A candidate as a pending file keeps it, or None when the file was edited out of shape
    (a field missing or of the wrong type, a kind memgit does not know)."""
    if not isinstance(raw, dict):
        return None
    texts = [raw.get(key) for key in ("kind", "title", "body", "source")]
    if not all(isinstance(t, str) and t.strip() for t in texts) or raw["kind"] not in KINDS:
        return None
    confidence = raw.get("confidence", 0.9)
    evidence = raw.get("evidence")
    lines = evidence.get("lines") if isinstance(evidence, dict) else None

    def strings(key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = raw.get(key, default)
        return tuple(v for v in value if isinstance(v, str)) if isinstance(value, (list, tuple)) else default

    return Candidate(raw["kind"], raw["title"], raw["body"], raw["source"],
                     min(max(float(confidence), 0.0), 1.0) if isinstance(confidence, (int, float)) else 0.9,
                     tuple(n for n in lines if isinstance(n, int))[:50] if isinstance(lines, list) else (),
                     strings("files"), strings("symbols"), strings("tags", ("captured",)))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _already(note: dict[str, Any]) -> str:
    written = note.get("written") or []
    if note.get("done") == "applied":
        where = f"on branch {note['branch']}" if note.get("branch") else "staged"
        return (f"capture proposal {note.get('id')} was already applied at {note.get('time')} ({where}: "
                f"{', '.join(map(str, written)) or 'nothing new'}); there is nothing left to apply")
    return f"capture proposal {note.get('id')} was dropped at {note.get('time')}; nothing to apply"


def apply_pending(ws: Workspace, ref: str, *, branch: str | None = None) -> dict[str, Any]:
    """Apply the pending proposal `ref` as `apply` does (`branch=""`: `memory/capture-<id>`),
    then set it aside as applied."""
    proposal = load_pending(ws, ref)
    result = apply(ws, proposal, branch=(branch or f"memory/capture-{proposal.id}") if branch is not None else None)
    _set_aside(ws, proposal.id, "applied", result)
    return dict(result, id=proposal.id)


def drop_pending(ws: Workspace, ref: str) -> str:
    """Set the pending proposal `ref` aside unapplied; its id. The session-end hook does not
    propose its memories again."""
    proposal = load_pending(ws, ref)
    _set_aside(ws, proposal.id, "dropped", {"titles": [c.title for c in proposal.candidates]})
    return proposal.id


def _set_aside(ws: Workspace, proposal_id: str, done: str, details: dict[str, Any]) -> None:
    note = {"id": proposal_id, "done": done, "time": localstate.stamp(), **details}
    localstate.replace(_done(ws) / f"{proposal_id}.json", json.dumps(note, ensure_ascii=False, indent=1))
    (_folder(ws) / f"{proposal_id}.json").unlink(missing_ok=True)


def _dropped_titles(ws: Workspace, proposal_id: str) -> set[str]:
    path = _done(ws) / f"{proposal_id}.json"
    try:
        note = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return set()
    return set(note.get("titles") or ()) if isinstance(note, dict) and note.get("done") == "dropped" else set()


def from_hook(open_workspace: Callable[[], Workspace], transcript: str, start: str = ".") -> int:
    """The session-end hand-off: propose, keep the proposal as pending, log one line. Never
    raises; returns the number of memories proposed (-1 on failure)."""
    started = time.monotonic()
    git_dir: Path | None = None
    try:
        found = gitrepo.find(Path(start).resolve())
        git_dir = found.git_dir if found is not None else None
    except Exception:  # noqa: BLE001 - not even a repository: nowhere to log
        pass
    try:
        ws = open_workspace()
        git_dir = ws.writer.repo().git_dir
        proposal = propose(ws, transcript)
        refused = _dropped_titles(ws, proposal.id)  # the session went on after its proposal was dropped
        if refused:
            kept = [(c, m) for c, m in zip(proposal.candidates, proposal.memories) if c.title not in refused]
            proposal.candidates, proposal.memories = [c for c, _ in kept], [m for _, m in kept]
        if proposal.memories:
            save_pending(ws, replace(proposal))
        else:  # the session's earlier proposal holds nothing new now: none waits
            (_folder(ws) / f"{proposal.id}.json").unlink(missing_ok=True)
        _log(git_dir, f"{transcript}: {len(proposal.memories)} proposed, {len(proposal.known)} known, "
                      f"{len(proposal.dropped)} left out ({time.monotonic() - started:.1f}s)"
                      + (f"; {proposal.judge}" if proposal.judge else "")
                      + (f"; see 'memgit capture --pending {proposal.id}'" if proposal.memories else ""))
        return len(proposal.memories)
    except BaseException as exc:  # noqa: BLE001 - a hook fails open, whatever happened
        if git_dir is not None:
            _log(git_dir, f"{transcript}: capture failed: {exc}")
        return -1


def _log(git_dir: Path, line: str) -> None:
    try:
        localstate.append(localstate.capture_log(git_dir), f"{localstate.stamp()} {' '.join(line.split())}")
    except OSError:
        pass
