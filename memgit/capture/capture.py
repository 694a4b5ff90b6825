"""Turn a finished session into proposed memories: read, extract, clean, deduplicate, show.

`propose` writes nothing: it returns a `CaptureProposal` (the memory files it would add, as a diff,
and why other candidates were left out). `apply` writes them through the change set, staged
and not committed (the user commits them with their work), or commits them on a new branch
without touching the current one. The session-end hook calls `from_hook`, which keeps the
proposal under `<git-dir>/memgit/capture/` for `memgit capture --pending` and never fails
loudly.

Cleaning, in order: secrets are redacted with a marker (a candidate that is mostly a secret is
dropped), an optional judge (`[capture] llm_command` or `--llm-cmd`, `memgit.capture.judge`)
may rewrite or veto candidates — when a configured judge fails, the rules' candidates are kept
and the proposal says so — then candidates the store
already knows are dropped — exactly the same text (the index's `same_text`), the same thing in
other words (the duplicate detector `memgit reflect` uses, `memgit.reflect.duplicates`), or most of the
candidate's words already in one memory (a conservative overlap check for a short restatement
of a longer note). A restated
memory is logged to `<git-dir>/memgit/restated.jsonl` when the proposal is applied or kept:
the user had to explain it again.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from memgit.agents import transcripts
from memgit.capture import judge
from memgit.capture.extract import Candidate, extract, fit
from memgit.errors import MemgitError
from memgit.git import repo as gitrepo
from memgit.index.workspace import Workspace
from memgit.memory import format as fmt
from memgit.memory.credentials import find_secrets
from memgit.memory.format import Memory
from memgit.recall import lookup
from memgit.reflect.duplicates import Detector

MARKER = "[secret redacted]"
NEAR_DUPLICATE = 0.8  # share of a candidate's words already in one memory


@dataclass
class CaptureProposal:
    """What capturing a transcript would add, and what it left out and why."""

    id: str
    transcript: str
    format: str
    session_id: str
    lines: int
    skipped: int
    candidates: list[Candidate]
    memories: list[Memory] = field(default_factory=list)  # one per candidate, with path and id
    known: list[tuple[Candidate, str]] = field(default_factory=list)  # (candidate, existing id)
    dropped: list[tuple[Candidate, str]] = field(default_factory=list)  # (candidate, reason)
    redacted: int = 0
    #: What the optional judge (`memgit.capture.judge`) did, or why it failed; "" without one.
    judge: str = ""
    #: The store's active memories (id, path, last update) when the memories were planned.
    basis: tuple[tuple[str, str, str], ...] | None = None

    def to_dict(self, rel_path: Callable[[Memory], str] | None = None) -> dict[str, Any]:
        """As JSON; each memory's path by `rel_path` (`Memgit.rel_path`), else in the folder."""
        def entry(c: Candidate, m: Memory | None) -> dict[str, Any]:
            out = c.to_dict()
            if m is not None:
                out["id"], out["path"] = m.id, rel_path(m) if rel_path is not None else m.path
            return out

        return {"id": self.id, "transcript": self.transcript, "format": self.format,
                "session_id": self.session_id, "lines": self.lines, "skipped_lines": self.skipped,
                "candidates": [entry(c, m) for c, m in zip(self.candidates, self.memories)],
                "known": [dict(c.to_dict(), duplicate_of=mid) for c, mid in self.known],
                "dropped": [dict(c.to_dict(), reason=why) for c, why in self.dropped],
                "redacted": self.redacted, **({"judge": self.judge} if self.judge else {})}


def propose(ws: Workspace, path: str | Path, *, llm_cmd: str | None = None) -> CaptureProposal:
    """The memories the transcript at `path` suggests; nothing is written."""
    ws.require_store()
    transcript = transcripts.read(path)
    repo = ws.repo
    git_files: list[str] = []
    if repo is not None and transcript.started and transcript.ended:
        git_files = [f for f in gitrepo.changed_between(repo, transcript.started, transcript.ended)
                     if not f.startswith(".memory/")]
    found = extract(transcript, root=transcript.cwd or (str(repo.root) if repo else ""), git_files=git_files)
    digest = hashlib.sha1(f"{transcript.session_id or Path(path).resolve()}".encode()).hexdigest()[:8]
    proposal = CaptureProposal(digest, str(path), transcript.format, transcript.session_id, transcript.lines,
                        transcript.skipped, [])
    clean = _redact_all(found, proposal)
    command = llm_cmd if llm_cmd is not None else ws.config.capture_llm_command
    if judge.wanted(command) and clean:
        try:
            clean, vetoed, proposal.judge = judge.ask(command, clean, transcript, redact,
                                                      timeout=ws.config.capture_llm_timeout)
        except MemgitError as exc:
            if llm_cmd is not None:  # asked for on the command line: say so, write nothing
                raise MemgitError(f"{exc}; nothing was written") from None
            proposal.judge = f"the judge failed ({exc}); the rules' candidates are kept unjudged"
        else:
            proposal.dropped.extend(vetoed)
            clean = [fit(c) for c in _redact_all(clean, proposal)]
    plan(ws, proposal, clean)
    return proposal


def plan(ws: Workspace, proposal: CaptureProposal, candidates: list[Candidate]) -> None:
    """Drop what the store already knows; give the rest ids and file names."""
    existing = [m for m in lookup.select(ws) if m.active]
    proposal.basis = _basis(existing)
    index = ws.synced()
    taken: set[str] = set()
    ids: set[str] = {m.id for m in existing}
    proposal.candidates, proposal.memories = [], []
    kept: list[Candidate] = []
    stamp = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    twins = _detected(existing, candidates)
    for number, candidate in enumerate(candidates):
        key = fmt.normalized_text(candidate.title, candidate.body)
        same = (index.same_text(candidate.title, candidate.body) if index is not None
                else [m for m in existing if fmt.normalized_text(m.title, m.body) == key])
        twin = same[0].id if same else twins.get(number) or _near(candidate, existing)
        if twin is not None:
            proposal.known.append((candidate, twin))
            continue
        if any(_overlap(candidate, other.title + "\n" + other.body) >= NEAR_DUPLICATE for other in kept):
            proposal.dropped.append((candidate, "said twice in the session"))
            continue
        kept.append(candidate)
        # The same proposal gets the same ids when shown and when applied, unless taken.
        stable = "m-" + hashlib.sha1(f"{proposal.id}\n{candidate.title}".encode()).hexdigest()[:6]
        memory = Memory(id=stable if stable not in ids else fmt.new_id(ids), title=candidate.title,
                        body=candidate.body, kind=candidate.kind,
                        confidence=candidate.confidence, source=candidate.source,
                        task_id=(proposal.session_id or None) if candidate.kind == "summary" else None,
                        created=stamp, updated=stamp, tags=candidate.tags, files=candidate.files,
                        symbols=candidate.symbols)
        ids.add(memory.id)
        rel = ws.store.new_path(memory, taken)
        taken.add(rel)
        proposal.candidates.append(candidate)
        proposal.memories.append(replace(memory, path=rel))


def planned_against(ws: Workspace, proposal: CaptureProposal) -> bool:
    """Whether `proposal` was planned against the store as it is now (then planning it
    again would give the same memories, ids and file names)."""
    return proposal.basis is not None and proposal.basis == _basis([m for m in lookup.select(ws) if m.active]) \
        and not any((ws.memory_dir / m.path).exists() for m in proposal.memories)


def _basis(existing: list[Memory]) -> tuple[tuple[str, str, str], ...]:
    return tuple(sorted((m.id, m.path, m.updated or m.created or "") for m in existing))


# -- duplicates ------------------------------------------------------------------------------

_STOP = set("a an the to of in on for and or is are be it its this that we use with by as at here "
            "repo repository project codebase remember that please always never don't do not no it's".split())
_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/]*|[\u4e00-\u9fff]")


def _detected(existing: list[Memory], candidates: list[Candidate]) -> dict[int, str]:
    """Candidate number → the memory reflect's duplicate detector pairs it with (words only:
    a candidate has no vector yet). One detector over the store and the candidates."""
    if not existing or not candidates:
        return {}

    probes = {f"capture-candidate-{n}": n for n in range(len(candidates))}
    memories = [Memory(id=pid, title=c.title, body=c.body, kind=c.kind, files=c.files, symbols=c.symbols)
                for pid, c in zip(probes, candidates)]
    known = {m.id for m in existing}
    found: dict[int, str] = {}
    for pair in Detector([*existing, *memories]).duplicates(list(probes)):
        for probe, other in ((pair.a, pair.b), (pair.b, pair.a)):
            if probe in probes and other in known:
                found[probes[probe]] = other
    return found


def _words(text: str) -> set[str]:
    words = [w.strip(".-/").casefold() for w in _WORD.findall(text)]
    cjk = [w for w in words if "\u4e00" <= w <= "\u9fff"]
    grams = {a + b for a, b in zip(cjk, cjk[1:])}  # Chinese has no spaces: character pairs
    return {w for w in words if w and w not in _STOP and not ("\u4e00" <= w <= "\u9fff")} | grams


def _overlap(candidate: Candidate, text: str) -> float:
    mine = _words(candidate.title + "\n" + candidate.body)
    if len(mine) < 2:
        return 0.0
    return len(mine & _words(text)) / len(mine)


def _near(candidate: Candidate, existing: list[Memory]) -> str | None:
    best = max(((_overlap(candidate, m.title + "\n" + m.body), m.id) for m in existing), default=(0.0, ""))
    return best[1] if best[0] >= NEAR_DUPLICATE else None


# -- secrets -----------------------------------------------------------------------------------

def redact(text: str) -> tuple[str, int]:
    """`text` with each likely secret replaced by MARKER, and how many were."""
    found = find_secrets(text)
    if not found:
        return text, 0
    lines = text.split("\n")
    for number in sorted({m.line for m in found}):
        line = lines[number - 1]
        words = []
        for word in line.split(" "):
            if find_secrets(word):
                key, sep, _ = word.partition("=")
                word = f"{key}={MARKER}" if sep and not find_secrets(key) else MARKER
            words.append(word)
        line = " ".join(words)
        lines[number - 1] = line if not find_secrets(line) else MARKER
    return "\n".join(lines), len(found)


def _redact_all(candidates: list[Candidate], proposal: CaptureProposal) -> list[Candidate]:
    out = []
    for candidate in candidates:
        title, in_title = redact(candidate.title)
        body, in_body = redact(candidate.body)
        if not in_title + in_body:
            out.append(candidate)
            continue
        proposal.redacted += in_title + in_body
        left = _words(body.replace(MARKER, "")) - {"remember", "my", "key", "token", "password", "is"}
        if len(left) < 3 or len(body.replace(MARKER, "")) < len(candidate.body) / 3:
            proposal.dropped.append((replace(candidate, title=title, body=body), "mostly a secret"))
            continue
        out.append(replace(candidate, title=title, body=body))
    return out
