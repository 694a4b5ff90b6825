"""Reflect: memory that keeps itself healthy, proposed as a reviewable diff.

`propose()` reads the store and proposes changes, each with what, why and the evidence:

1. duplicates -> merge (the better memory is kept and gains what only the other said);
2. supersessions -> the older of a revert / "now" / always-vs-never pair is archived with
   `superseded_by`, or the pair is reported for a person when it cannot tell who is right;
3. stale anchors -> a renamed file's new path, or `needs_review` and lower confidence;
4. eviction -> low-confidence memories nobody recalls, old checkpoints, too many checkpoints;
5. promotion -> `pinned` for memories used in many sessions, unpinned when unused for long;
6. hygiene -> bodies over budget, unanchored file names, vague titles: reported only.

The values (`Proposal`, `Reflection`) and their rendering are in `memgit.reflect.proposals`.
Proposals are applied in that order to an in-memory copy of the store, so two proposals
on one memory compose and the diff shows the end result. Nothing here writes: the caller
(`Memgit.reflect`) lands the changes as commits. Malformed files are reported, never
touched; usage (recalls, feedback) is read from the local logs and quoted in evidence.

A changed file keeps everything but the lines of the fields a proposal names (and
`updated`): comments, key order, quoting and line endings stay (`memgit.memory.patch`); only a
file that cannot be patched safely is written in canonical form (`memory.dump`). A file
with a problem `memgit lint` reports is never changed: it is listed instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from memgit.errors import MemgitError
from memgit.memory import against, distinct, lenient, trust
from memgit.memory import format as fmt
from memgit.memory.anchors import extract_anchors
from memgit.memory.format import Memory
from memgit.memory.patch import patch
from memgit.recall.usage import days_between, parse_time
from memgit.reflect.anchorcheck import Checker, Finding, churned, looks_like_path
from memgit.reflect.duplicates import Detector, merge, rank
from memgit.reflect.lifecycle import Lifecycle
from memgit.reflect.proposals import FileChange, Inputs, Progress, Proposal, Reflection
from memgit.reflect.supersession import find

CATEGORIES = ("duplicates", "supersessions", "stale", "eviction", "promotion", "hygiene")


# -- the engine --------------------------------------------------------------------------------


def propose(inputs: Inputs, *, only: Sequence[str] = (), exclude: Sequence[str] = (),
            progress: Progress | None = None) -> Reflection:
    """Every proposal for the store described by `inputs`; see the module docstring. Each
    step is reported to `progress` as it starts (and "done" at the end)."""
    unknown = sorted(set(only) - set(CATEGORIES))
    if unknown:
        raise MemgitError(f"unknown kind of proposal {unknown[0]!r}; use {', '.join(CATEGORIES)}")
    return _Engine(inputs, set(only) or set(CATEGORIES), set(exclude)).run(progress)


def steps(only: Sequence[str]) -> int:
    """How many steps `propose` runs for `only`: what a progress bar counts."""
    return len(set(only) & set(CATEGORIES) or set(CATEGORIES))


class _Engine(Lifecycle):
    def __init__(self, inputs: Inputs, only: set[str], exclude: set[str]) -> None:
        self.i = inputs
        self.only = only
        self.exclude = exclude
        self.state: dict[str, Memory] = {m.id: m for m in inputs.memories}
        self.before: dict[str, str] = {}
        self.texts: dict[str, str] = {}  # each touched file's text after the proposals so far
        self.bad: set[str] = set()
        self.problems: list[str] = list(inputs.problems)
        self.proposals: list[Proposal] = []
        self.notes: list[str] = []
        self.stamp = inputs.now.isoformat(timespec="seconds")

    # -- helpers -----------------------------------------------------------------------------

    def active(self) -> list[Memory]:
        return [m for m in self.state.values() if m.active and m.id not in self.exclude]

    def _base(self, memory: Memory) -> Memory | None:
        """The memory to change: on first touch as its file says (the index's copy can
        differ in unknown fields), afterwards as earlier proposals left it. None when the
        file has a problem `memgit lint` reports: reflect leaves such files alone."""
        if memory.path in self.bad:
            return None
        if memory.path not in self.before:
            try:
                text = self.i.read(memory.path)
            except (OSError, UnicodeDecodeError, MemgitError) as exc:
                self.bad.add(memory.path)
                self.problems.append(f"{memory.path}: cannot be read ({exc})")
                return None
            parsed, problems = lenient.check(text, memory.path, self.i.config.kinds)
            if parsed is None or problems:
                self.bad.add(memory.path)
                self.problems.append(str(problems[0]) if problems else f"{memory.path}: unreadable")
                return None
            self.before[memory.path] = self.texts[memory.path] = text
            self.state[memory.id] = replace(parsed, path=memory.path)
        return self.state[memory.id]

    def _required(self, memory: Memory) -> Memory:
        """The memory as its file says (read in on first use); only for one `editable` said yes to."""
        base = self._base(memory)
        if base is None:
            raise MemgitError(f"{memory.path} cannot be read, so reflect does not change it")
        return base

    def editable(self, *memories: Memory) -> bool:
        return all(self._base(m) is not None for m in memories)

    def edit(self, memory: Memory, **fields: Any) -> FileChange:
        """Change the named fields (and `updated`); call after `editable`. Only those lines
        of the file change (`memgit.memory.patch`); the canonical text when it cannot be patched."""
        base = self._required(memory)
        extra = dict(base.extra)
        for name in list(fields):
            if name not in fmt.FIELDS and name != "body":
                value = fields.pop(name)
                if value is None:
                    extra.pop(name, None)
                else:
                    extra[name] = value
        return self._write(base, replace(base, **fields, extra=extra, updated=self.stamp))

    def _write(self, old: Memory, new: Memory) -> FileChange:
        changes = {
            name: getattr(new, name)
            for name in (*fmt.FIELDS, "body")
            if getattr(new, name) != getattr(old, name)
        }
        changes.update({k: v for k, v in new.extra.items() if old.extra.get(k) != v})
        changes.update({k: None for k in old.extra if k not in new.extra})
        patched = patch(self.texts[old.path], changes)
        text = (
            patched
            if patched is not None and lenient.check(patched, new.path, self.i.config.kinds)[0] == new
            else fmt.dump(new)
        )
        self.state[new.id] = new
        self.texts[new.path] = text
        return FileChange(new.path, text)

    def delete(self, memory: Memory) -> FileChange:
        self._required(memory)  # reads it in first: its text is what the change set replaces
        del self.state[memory.id]
        return FileChange(memory.path, None)

    def add(self, proposal: Proposal) -> None:
        self.proposals.append(proposal)

    def age_days(self, memory: Memory) -> float | None:
        return days_between(parse_time(memory.updated or memory.created), self.i.now)

    # -- run -----------------------------------------------------------------------------------

    def run(self, progress: Progress | None = None) -> Reflection:
        steps = (
            ("duplicates", self.duplicates),
            ("supersessions", self.supersessions),
            ("stale", self.stale),
            ("eviction", self.eviction),
            ("promotion", self.promotion),
            ("hygiene", self.hygiene),
        )
        self.detector: Detector | None = None
        chosen = [(name, step) for name, step in steps if name in self.only]
        for done, (name, step) in enumerate(chosen):
            if progress is not None:
                progress(name, done, len(chosen))
            step()
        if progress is not None:
            progress("done", len(chosen), len(chosen))
        return Reflection(
            tuple(self.proposals),
            tuple(dict.fromkeys(self.problems)),
            dict(self.before),
            self.i.prefix,
            tuple(self.notes),
        )

    def _detector(self) -> Detector:
        if self.detector is None:
            active = self.active()
            vectors = {k: v for k, v in self.i.vectors.items() if k in self.state}
            self.detector = Detector(active, vectors, different=[(a, b) for a, b, _, _ in self.i.reverted])
            missing = sum(1 for m in active if m.id not in vectors)
            if missing and self.i.unembedded is not None:
                self.notes.append(f"{missing} of {len(active)} memories {self.i.unembedded}")
        return self.detector

    def _code_now(self) -> Callable[[str], str | None] | None:
        """An anchor's fingerprint in the work tree, when reflect may read the code (`Inputs.root`)."""
        if self.i.root is None:
            return None
        from memgit.git.codeprint import GONE, Prints  # only when two notes record different code

        prints = Prints(self.i.root)

        def now(anchor: str) -> str | None:
            found = prints.of(anchor)
            return None if found in (None, GONE) else found

        return now

    # -- 1. duplicates -----------------------------------------------------------------------

    def duplicates(self) -> None:
        self.reverted_merges()
        detector = self._detector()
        for pair in detector.duplicates():
            a, b = self.state.get(pair.a), self.state.get(pair.b)
            if a is None or b is None or not a.active or not b.active:
                continue
            if not self.editable(a, b):
                continue
            # The one to keep: not marked wrong over one that is, then the more trusted.
            keep_a = (not self.marked_wrong(a), rank(a)) >= (not self.marked_wrong(b), rank(b))
            base, other = (a, b) if keep_a else (b, a)
            base, other = self.state[base.id], self.state[other.id]
            changes = (self._write(base, merge(base, other, updated=self.stamp)), self.delete(other))
            why = (
                "they state the same thing; the kept memory "
                f"({base.source}, confidence {base.confidence:g}) gains what only the other said, "
                f"and lists `{other.id}` in `supersedes` (its file stays in git history)"
            )
            self.add(
                Proposal(
                    "merge",
                    "duplicates",
                    (base.id, other.id),
                    f'merge "{_short(other.title)}" into "{_short(base.title)}"',
                    why,
                    (pair.evidence(),),
                    changes,
                )
            )

        vetoed = [(p, why) for p, why in detector.vetoed if why != "a person said they are different"]
        if vetoed:
            shown = "; ".join(f"`{p.a}` and `{p.b}` ({why})" for p, why in vetoed[:3])
            more = f" and {len(vetoed) - 3} more" if len(vetoed) > 3 else ""
            self.notes.append(f"{len(vetoed)} pair(s) alike in words were not merged because they say "
                              f"different things: {shown}{more}; 'memgit feedback A B --duplicate' merges "
                              "a pair that is one memory after all")

    def reverted_merges(self) -> None:
        """A merge reflect made that a revert undid: propose writing `distinct` into both
        memories, so the "no" holds where the revert is not in history (a shallow clone)."""
        seen: set[frozenset[str]] = set()
        for a_id, b_id, merged_in, reverted_by in self.i.reverted:
            a, b = self.state.get(a_id), self.state.get(b_id)
            if a is None or b is None or frozenset((a_id, b_id)) in seen:
                continue
            seen.add(frozenset((a_id, b_id)))
            missing = [(m, o) for m, o in ((a, b), (b, a)) if o.id not in distinct.ids(m)]
            if not missing or not self.editable(*(m for m, _ in missing)):
                continue
            changes = tuple(self.edit(m, **{distinct.FIELD: distinct.added(self.state[m.id], o.id)})
                            for m, o in missing)
            self.add(Proposal(
                "distinct", "duplicates", (a.id, b.id),
                f'remember that "{_short(a.title)}" and "{_short(b.title)}" are different',
                "a person reverted reflect's merge of the two; `distinct` in both files keeps reflect "
                "from proposing it again in every clone",
                (f"reflect commit {merged_in[:10]} merged them; commit {reverted_by[:10]} reverted it",),
                changes,
            ))

    # -- 2. supersessions ----------------------------------------------------------------------

    def supersessions(self) -> None:
        self.held_supersessions()
        for found in find(self.active(), self._detector(), self._code_now()):
            newer, older = self.state.get(found.newer), self.state.get(found.older)
            if newer is None or older is None or not newer.active or not older.active:
                continue
            if found.winner is None:
                self.add(
                    Proposal(
                        "conflict",
                        "supersessions",
                        (newer.id, older.id),
                        f'"{_short(newer.title)}" contradicts "{_short(older.title)}"',
                        found.reason + "; reflect cannot tell which is right, so nothing is changed",
                        found.evidence,
                    )
                )
                continue
            loser = older if found.winner == newer.id else newer
            winner = newer if loser is older else older
            if not self.editable(loser):
                continue
            change = self.edit(
                loser,
                status="archived",
                superseded_by=[*_as_list(loser.extra.get("superseded_by")), winner.id],
            )
            self.add(
                Proposal(
                    "supersede",
                    "supersessions",
                    (winner.id, loser.id),
                    f'archive "{_short(loser.title)}": superseded by "{_short(winner.title)}"',
                    found.reason,
                    found.evidence,
                    (change,),
                )
            )

    def held_supersessions(self) -> None:
        """A memory that may not hide the one it replaces (`memgit.memory.trust`): held in its
        `proposed_supersedes`, or listed in `supersedes` by a less trusted source. Recall
        keeps both memories; a person decides."""
        for memory in self.active():
            held = [*trust.proposed(memory), *memory.supersedes]
            for target in (self.state.get(target_id) for target_id in dict.fromkeys(held)):
                if target is None or not target.active or target.id == memory.id:
                    continue
                if target.id in memory.supersedes and trust.may_hide(memory.source, target.source):
                    continue
                self.add(Proposal(
                    "conflict", "supersessions", (memory.id, target.id),
                    f'"{_short(memory.title)}" proposes to replace "{_short(target.title)}"',
                    f"a memory from source '{memory.source}' may not hide one from '{target.source}', "
                    "so recall "
                    f"keeps both: if it is right, archive {target.id} ('memgit forget {target.id}'); if not, "
                    f"remove {target.id} from {memory.id}'s `{trust.PROPOSED}`/`supersedes`",
                    (f"{memory.id}: {memory.source}, {target.id}: {target.source}",),
                ))

    # -- 3. stale anchors ------------------------------------------------------------------------

    def stale(self) -> None:
        if self.i.root is None:
            return
        c = self.i.config
        for memory in sorted(self.active(), key=lambda m: m.id):
            if memory.extra.get("needs_review") is True:
                continue  # already flagged: a person is on it
            since = parse_time(memory.updated or memory.created)
            # Renames since the memory was written: an older rename is not what it meant.
            renames = [
                (old, new)
                for old, new, when in self.i.renames
                if since is None or (parse_time(when) or self.i.now) >= since
            ]
            findings = Checker(self.i.root, renames).check(memory)
            if not findings:
                moved_on = churned(memory, self.i.root, self.i.churn, since, c.reflect_churn_lines,
                                   c.reflect_churn_share)
                if moved_on and self.editable(memory):
                    self.add(Proposal("review-anchor", "stale", (memory.id,),
                                      f'flag "{_short(memory.title)}" for review',
                                      "the code it describes changed a lot since it was written",
                                      tuple(moved_on), (self.edit(memory, needs_review=True),)))
                continue
            if not self.editable(memory):
                continue
            renamed = [f for f in findings if f.new is not None and "no longer defines" not in f.why]
            gone = [f for f in findings if f not in renamed]
            evidence = tuple(dict.fromkeys(f.why for f in findings))
            if gone:
                confidence = round(max(0.0, memory.confidence - c.reflect_stale_confidence_drop), 2)
                fields: dict[str, Any] = {"confidence": confidence, "needs_review": True}
                fields.update(_renamed_fields(memory, renamed))
                change = self.edit(memory, **fields)
                self.add(
                    Proposal(
                        "review-anchor",
                        "stale",
                        (memory.id,),
                        f'flag "{_short(memory.title)}" for review and lower its confidence '
                        f"{memory.confidence:g} -> {confidence:g}",
                        "it points at code that is no longer there",
                        evidence,
                        (change,),
                    )
                )
            else:
                text = f"{memory.title}\n{memory.body}"
                evidence += tuple(
                    dict.fromkeys(
                        f"the text said `{f.path}`: it now says `{f.new}`"
                        for f in renamed
                        if f.new and _mentions(text, f.path)
                    )
                )
                change = self.edit(memory, **_renamed_fields(memory, renamed))
                self.add(
                    Proposal(
                        "rename-anchor",
                        "stale",
                        (memory.id,),
                        f'update the paths of "{_short(memory.title)}"',
                        "a file it names was renamed",
                        evidence,
                        (change,),
                    )
                )

    # -- 6. hygiene --------------------------------------------------------------------------------

    def hygiene(self) -> None:
        budget = self.i.config.memory_token_budget
        for memory in sorted(self.active(), key=lambda m: m.id):
            found: list[str] = []
            tokens = fmt.count_tokens(memory.body)
            if tokens > budget:
                found.append(
                    f"the body is about {tokens} tokens, over the budget of {budget}: split or shorten it"
                )
            if not memory.files and not memory.entity:
                named = [
                    a
                    for a in extract_anchors(memory.title, memory.body)
                    if "/" in a and looks_like_path(a) and "::" not in a
                ]
                if named:
                    found.append(
                        f"the text names {', '.join(f'`{n}`' for n in named[:3])} but the memory "
                        "has no `files` or `entity`: add them so recall and reflect can use them"
                    )
            if _vague(memory.title):
                found.append(f'the title "{memory.title}" says little: say what the memory is about')
            if found:
                self.add(
                    Proposal(
                        "hygiene",
                        "hygiene",
                        (memory.id,),
                        f'review "{_short(memory.title)}"',
                        "; ".join(found),
                    )
                )


_VAGUE = frozenset(
    "note notes todo misc fix fixes update updates stuff thing things info memo wip tmp test".split()
)


def _vague(title: str) -> bool:
    wordlist = re.findall(r"\w+", title.lower())
    return len(wordlist) < 2 or all(w in _VAGUE or w.isdigit() for w in wordlist)


def _renamed_fields(memory: Memory, renamed: Sequence[Finding]) -> dict[str, Any]:
    moves = {f.path: f.new for f in renamed if f.new}
    if not moves:
        return {}

    def move(anchor: str) -> str:
        path, sep, symbol = anchor.partition("::")
        return moves.get(path.strip(), path) + (sep + symbol if sep else "")

    fields: dict[str, Any] = {
        "files": tuple(dict.fromkeys(move(f) for f in memory.files)),
        "entity": move(memory.entity) if memory.entity else "",
        "symbols": tuple(move(s) for s in memory.symbols),
        "title": _moved_in_text(memory.title, moves),
        "body": _moved_in_text(memory.body, moves),
    }
    record = memory.extra.get(against.FIELD)
    if isinstance(record, list):  # the fingerprints stay what they were: the code did not change
        fields[against.FIELD] = [" ".join((move(line.rpartition(" ")[0]), line.rpartition(" ")[2]))
                                 if isinstance(line, str) and " " in line else line for line in record]
    return fields


def _path_in_text(path: str) -> re.Pattern[str]:
    """`path` as a whole path in prose: not part of a longer path or name."""
    return re.compile(rf"(?<![\w./-]){re.escape(path)}(?![\w/-]|\.\w)")


def _mentions(text: str, path: str) -> bool:
    return _path_in_text(path).search(text) is not None


def _moved_in_text(text: str, moves: dict[str, str]) -> str:
    """`text` with each renamed path written as its new path (`src/a.py::f` too)."""
    for old, new in moves.items():
        text = _path_in_text(old).sub(lambda _: new, text)
    return text


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _short(title: str, limit: int = 60) -> str:
    return title if len(title) <= limit else title[: limit - 1] + "…"
