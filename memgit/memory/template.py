"""The starting text for `memgit remember --edit`, from the project's `templates/` folder.

A wheel carries `templates/` as `memgit/_templates/`; an editable install reads the source
tree's `templates/`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from memgit.errors import MemgitError

_HEADINGS = {
    "fact": "<what is true about the project>",
    "preference": "<how the user wants things done>",
    "convention": "<the rule the code follows>",
    "decision": "<what was decided>\n\nWhy: <the reason; the options that were rejected>",
    "lesson": "<the pitfall>\n\nFix: <what works>; dead end: <what was tried and failed>",
    "skill": "<the workflow>\n\n1. <step>\n2. <step>",
    "checkpoint": "<intent: action + object + purpose>\n\nState: <functions changed, with paths>",
    "summary": "<what the task did>",
}


def templates_dir() -> Path:
    here = Path(__file__).resolve().parent.parent  # the memgit package
    for candidate in (here / "_templates", here.parent / "templates"):
        if (candidate / "memory.md").is_file():
            return candidate
    raise MemgitError("memgit's templates are missing from this installation; reinstall memgit")


def template(kind: str) -> str:
    text = (templates_dir() / "memory.md").read_text(encoding="utf-8")
    return text.format(kind=kind, heading=_HEADINGS.get(kind, "<title>"))


def strip_template(edited: str, kind: str) -> str:
    """What the user wrote: the edited text without `#:` comments and untouched placeholders."""
    untouched = {line for line in template(kind).splitlines() if line.strip()}
    kept = [line for line in edited.splitlines() if not line.startswith("#:") and line not in untouched]
    return "\n".join(kept).strip()


def save_draft(text: str) -> Path:
    """Keep text the user typed in $EDITOR that could not be saved, so it is not lost."""
    fd, name = tempfile.mkstemp(prefix="memgit-draft-", suffix=".md")
    with open(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return Path(name)
