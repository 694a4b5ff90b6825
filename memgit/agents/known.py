"""What one agent session already holds: its task, its starting commit, and the memories
memgit gave it (the "known" set), so that later injections give only what is new.

Local state in the git dir, never committed: `<git-dir>/memgit/sessions/<session id>.json`,
one small JSON file per session, replaced atomically. A compaction wipes the agent's context,
so it also empties the known set. Files of sessions idle for 30 days are removed.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memgit.git import localstate

MAX_KNOWN = 2000
STALE_SECONDS = 30 * 86400


@dataclass
class SessionState:
    session_id: str
    agent: str = ""
    task: str = ""
    start_commit: str | None = None
    transcript: str | None = None
    started: str = ""
    known: list[str] = field(default_factory=list)

    def add(self, ids: list[str]) -> None:
        for mid in ids:
            if mid not in self.known:
                self.known.append(mid)
        del self.known[:-MAX_KNOWN]


def folder(git_dir: Path) -> Path:
    return localstate.sessions(git_dir)


def path_of(git_dir: Path, session_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:80].lstrip(".") or "session"
    if safe != session_id:  # two odd ids must not share a file
        safe += "-" + hashlib.sha1(session_id.encode("utf-8", "replace")).hexdigest()[:8]
    return folder(git_dir) / f"{safe}.json"


def load(git_dir: Path, session_id: str) -> SessionState | None:
    try:
        data = json.loads(path_of(git_dir, session_id).read_text(encoding="utf-8"))
        state = SessionState(**{k: v for k, v in data.items() if k in SessionState.__dataclass_fields__})
    except (OSError, ValueError, TypeError):
        return None
    if not isinstance(state.known, list) or state.session_id != session_id:
        return None
    state.known = [str(mid) for mid in state.known]
    return state


def save(git_dir: Path, state: SessionState) -> None:
    localstate.replace(path_of(git_dir, state.session_id), json.dumps(asdict(state), ensure_ascii=False))


def prune(git_dir: Path, now: float | None = None) -> None:
    """Remove the files of sessions untouched for 30 days."""
    cutoff = (now or time.time()) - STALE_SECONDS
    try:
        for path in folder(git_dir).glob("*.json"):
            if path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
    except OSError:
        pass
