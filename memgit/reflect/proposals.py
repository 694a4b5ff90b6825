"""What `memgit reflect` reads and proposes, and how it is shown: a Markdown summary and a diff.

`Inputs` is what reflect reads (memories with their texts, usage, git's renames and churn).

A `Proposal` is one change (or, with no file changes, a finding for a person), with what,
why and the evidence; a `Reflection` is every proposal of one run, with the files as they
were, so that its `diff()` is a unified diff over the memory folder that `git apply`
accepts and its `summary()` Markdown a pull request can carry.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from memgit.config import Config
from memgit.memory.format import Memory
from memgit.recall.usage import Usage


#: Where a reflect run is, for a progress bar: the stage starting (`"duplicates"`), how many
#: stages are done, how many there are. Reflect reports through it and never prints.
Progress = Callable[[str, int, int], None]


@dataclass
class Inputs:
    """What reflect reads: memories with their file texts, problems, vectors, usage, git."""

    memories: Sequence[Memory]
    read: Callable[[str], str]  # a memory file's text, by path in the folder
    config: Config
    usage: Usage
    now: datetime
    problems: Sequence[str] = ()
    vectors: Mapping[str, Sequence[float]] = field(default_factory=dict)
    root: Path | None = None  # the work tree, for anchors (None: not checked)
    renames: Sequence[tuple[str, str, str]] = ()  # (old, new, when), oldest first
    churn: Sequence[tuple[str, str, Mapping[str, int]]] = ()  # (sha, when, {path: lines}), oldest first
    prefix: str = ".memory/"
    #: Merges reflect made that `git revert` undid: (a, b, the reflect commit, the revert).
    reverted: Sequence[tuple[str, str, str, str]] = ()
    #: A sentence for the notes when some memories have no vector yet (None: all have one).
    unembedded: str | None = None


@dataclass(frozen=True)
class FileChange:
    """A memory file's new text (`text`), or its deletion (`text` None). `path` is
    relative to the memory folder."""

    path: str
    text: str | None


@dataclass(frozen=True)
class Proposal:
    """One change reflect proposes (or, with no `changes`, a finding for a person)."""

    kind: str  # merge, supersede, conflict, rename-anchor, review-anchor, archive, pin, unpin, hygiene
    category: str
    ids: tuple[str, ...]
    what: str
    reason: str
    evidence: tuple[str, ...] = ()
    changes: tuple[FileChange, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "category": self.category,
            "ids": list(self.ids),
            "what": self.what,
            "reason": self.reason,
            "evidence": list(self.evidence),
            "changes": [{"path": c.path, "delete": c.text is None, "text": c.text} for c in self.changes],
        }


@dataclass(frozen=True)
class Reflection:
    """Every proposal, the malformed files left alone, and the files as they are now."""

    proposals: tuple[Proposal, ...]
    problems: tuple[str, ...]
    before: Mapping[str, str] = field(default_factory=dict, compare=False)
    prefix: str = ".memory/"
    notes: tuple[str, ...] = ()

    @property
    def changes(self) -> dict[str, str | None]:
        """Each changed file's final text (None: deleted), in the order first touched."""
        out: dict[str, str | None] = {}
        for proposal in self.proposals:
            for change in proposal.changes:
                out[change.path] = change.text
        return out

    @property
    def actionable(self) -> tuple[Proposal, ...]:
        return tuple(p for p in self.proposals if p.changes)

    def diff(self) -> str:
        """A unified diff over the memory folder that `git apply` accepts."""
        return unified_diff(self.before, self.changes, self.prefix)

    def summary(self) -> str:
        """Markdown for a pull request: per proposal, what, why and the evidence."""
        lines = [
            f"## memgit reflect: {len(self.actionable)} change(s) proposed, "
            f"{len(self.proposals) - len(self.actionable)} for a person to review",
            "",
        ]
        for number, p in enumerate(self.proposals, 1):
            mark = "" if p.changes else " (no change: for review)"
            lines.append(f"{number}. **{p.kind}** {', '.join(f'`{i}`' for i in p.ids)}: {p.what}{mark}")
            lines.append(f"   - why: {p.reason}")
            for item in p.evidence:
                lines.append(f"   - evidence: {item}")
        for problem in self.problems:
            lines.append(f"- malformed, left alone: {problem} (see `memgit lint`)")
        for note in self.notes:
            lines.append(f"- note: {note}")
        if not self.proposals and not self.problems:
            lines.append("Nothing to propose: memory looks healthy.")
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "proposals": [p.to_dict() for p in self.proposals],
            "problems": list(self.problems),
            "notes": list(self.notes),
        }


def unified_diff(before: Mapping[str, str], after: Mapping[str, str | None], prefix: str) -> str:
    out: list[str] = []
    for rel, new in after.items():
        old = before.get(rel)
        if old == new:
            continue
        path = prefix + rel
        out.append(f"diff --git a/{path} b/{path}\n")
        if new is None:
            out.append("deleted file mode 100644\n")
        elif old is None:
            out.append("new file mode 100644\n")
        for line in difflib.unified_diff(
            _lines(old),
            _lines(new),
            fromfile=f"a/{path}" if old is not None else "/dev/null",
            tofile=f"b/{path}" if new is not None else "/dev/null",
            n=3,
        ):
            if not line.endswith("\n"):
                line += "\n\\ No newline at end of file\n"
            out.append(line)
    return "".join(out)


def _lines(text: str | None) -> list[str]:
    return [] if text is None else text.splitlines(keepends=True)
