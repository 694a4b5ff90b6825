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
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memgit.agents import transcripts
from memgit.capture import judge
from memgit.capture.extract import Candidate, extract, fit
from memgit.capture.paths import Place
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
NEAR_MIN_WORDS = 6  # a shorter candidate must share most of the memory's words too
SAME_SUBSTANCE = 0.5  # the duplicate detector's similarity a restatement reaches on its own


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


def propose(ws: Workspace, path: str | Path, *, llm_cmd: str | None = None,
            format: str | None = None) -> CaptureProposal:
    """The memories the transcript at `path` (in `format`, or as sniffed) suggests; nothing is written."""
    ws.require_store()
    transcript = transcripts.read(path, format)
    repo = ws.repo
    git_files: list[str] = []
    if repo is not None and transcript.started and transcript.ended:
        git_files = [f for f in gitrepo.changed_between(repo, transcript.started, transcript.ended)
                     if not f.startswith(".memory/")]
    place = Place(str(repo.root) if repo is not None else "", transcript.cwd,
                  (lambda: gitrepo.files(repo, repo.root)) if repo is not None else (lambda: ()))
    found = extract(transcript, root=transcript.cwd or (str(repo.root) if repo else ""), git_files=git_files,
                    place=place.paths)
    place.paths(f for c in found for f in c.files)  # where the project's folder is, if it shows
    found = [place.candidate(c) for c in found]
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
            clean = [fit(place.candidate(c)) for c in _redact_all(clean, proposal)]
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
    stamp = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    # Only lasting notes make a candidate "already known" (not a checkpoint: it repeats what the
    # session did); a summary makes known only its own task's summary, or the same words.
    task = proposal.session_id
    lasting = [m for m in existing if _lasting(m)]
    pools = {"summary": [m for m in lasting if m.kind == "summary"],
             "rule": [m for m in lasting if m.kind != "summary"]}
    in_pool = {name: {m.id for m in pool} for name, pool in pools.items()}
    rules = [c for c in candidates if c.kind != "summary"]
    twins = _detected(pools["rule"], rules)
    rule_number = -1
    notes = _Notes([(m.id, m.title + "\n" + m.body) for m in pools["rule"]])
    said = _Notes()  # the rules kept so far
    for candidate in candidates:
        key = fmt.normalized_text(candidate.title, candidate.body)
        name = "summary" if candidate.kind == "summary" else "rule"
        rule_number += name == "rule"
        same = [m for m in (index.same_text(candidate.title, candidate.body) if index is not None else existing)
                if m.id in in_pool[name] and fmt.normalized_text(m.title, m.body) == key]
        if same:
            twin: str | None = same[0].id
        elif name == "summary":
            twin = next((m.id for m in pools[name] if task and m.task_id == task), None)
        else:
            twin = twins.get(rule_number) or _near(candidate, notes)
        if twin is not None:
            if (candidate, twin) not in proposal.known:  # planned again before applying: once
                proposal.known.append((candidate, twin))
            continue
        if name == "rule":
            mine = _words(candidate.title + "\n" + candidate.body)
            if said.holding(mine):
                proposal.dropped.append((candidate, "said twice in the session"))
                continue
            said.add("", mine)
        # The same proposal gets the same ids when shown and when applied, unless taken.
        stable = own_id(proposal, candidate)
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


def own_id(proposal: CaptureProposal, candidate: Candidate) -> str:
    """The id a capture of this session gives the memory it writes for `candidate`: the same
    when shown and when applied, and when the same session is captured again."""
    return "m-" + hashlib.sha1(f"{proposal.id}\n{candidate.title}".encode()).hexdigest()[:6]


def planned_against(ws: Workspace, proposal: CaptureProposal) -> bool:
    """Whether `proposal` was planned against the store as it is now (then planning it
    again would give the same memories, ids and file names)."""
    return proposal.basis is not None and proposal.basis == _basis([m for m in lookup.select(ws) if m.active]) \
        and not any((ws.memory_dir / m.path).exists() for m in proposal.memories)


def _lasting(memory: Memory) -> bool:
    """Whether `memory` is a lasting note: not a checkpoint or a hand-off (they expire, and
    repeat what a session did rather than what it learned), nor anything else that expires."""
    return memory.kind != "checkpoint" and not memory.expires and not {"checkpoint", "handoff"} & set(memory.tags)


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
        if pair.score < SAME_SUBSTANCE:
            continue  # in a small store any related note is the closest by far: not a restatement
        for probe, other in ((pair.a, pair.b), (pair.b, pair.a)):
            if probe in probes and other in known:
                found[probes[probe]] = other
    return found


def _words(text: str) -> set[str]:
    words = [w.strip(".-/").casefold() for w in _WORD.findall(text)]
    cjk = [w for w in words if "\u4e00" <= w <= "\u9fff"]
    grams = {a + b for a, b in zip(cjk, cjk[1:])}  # Chinese has no spaces: character pairs
    return {w for w in words if w and w not in _STOP and not ("\u4e00" <= w <= "\u9fff")} | grams


class _Notes:
    """The word sets of some notes, indexed by word, to find those that hold most of a
    candidate's words without comparing it with every note (a long session has thousands of
    candidates, a store thousands of memories)."""

    def __init__(self, notes: Iterable[tuple[str, str]] = ()) -> None:
        self.ids: list[str] = []
        self.words: list[set[str]] = []
        self.postings: dict[str, list[int]] = defaultdict(list)
        for key, text in notes:
            self.add(key, _words(text))

    def add(self, key: str, words: set[str]) -> None:
        for word in words:
            self.postings[word].append(len(self.ids))
        self.ids.append(key)
        self.words.append(words)

    def holding(self, mine: set[str]) -> list[tuple[float, str, set[str]]]:
        """(share of `mine` it holds, id, its words) of each note holding NEAR_DUPLICATE of them."""
        if len(mine) < 2:
            return []
        need = next(k for k in range(len(mine) + 1) if k / len(mine) >= NEAR_DUPLICATE)
        # A note holding `need` of my words holds one of any len(mine) - need + 1 of them:
        # look up only the rarest.
        rare = sorted(mine, key=lambda w: len(self.postings.get(w, ())))[: len(mine) - need + 1]
        found = {i for word in rare for i in self.postings.get(word, ())}
        out = []
        for i in sorted(found):
            shared = len(mine & self.words[i])
            if shared >= need:
                out.append((shared / len(mine), self.ids[i], self.words[i]))
        return out


def _near(candidate: Candidate, notes: _Notes) -> str | None:
    mine = _words(candidate.title + "\n" + candidate.body)
    best: tuple[float, str] = (0.0, "")
    for share, mid, theirs in notes.holding(mine):
        # A short candidate ("Run the tests first") has all its words in many a longer note
        # without saying what it says: it is known only by a note about as short.
        if len(mine) < NEAR_MIN_WORDS and not (theirs and len(theirs & mine) / len(theirs) >= NEAR_DUPLICATE):
            continue
        best = max(best, (share, mid))
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
