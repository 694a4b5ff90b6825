"""Which scope a new memory belongs in: the user's own store, or the project's.

A preference about the person — "I prefer short answers", "my machine has no Docker", "I often
forget to run the linter" — follows them into every project, so it goes to the user scope. A
preference that names the project's files or symbols, or speaks for the team ("we", "our",
"this repo"), is the project's, as is every other kind of memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgit.memory.anchors import extract_anchors

_FIRST_PERSON = re.compile(r"^\W*(?:I|I'm|I've|I'd|I'll|my|me|personally)\b|^\W*我(?!们)"
                           r"|\bmy (?:machine|laptop|computer|setup|editor|shell|terminal|keyboard|os)\b",
                           re.IGNORECASE)
_TEAM = re.compile(r"\b(?:we|our|us|this (?:repo|repository|project|codebase)|the team)\b|我们|项目",
                   re.IGNORECASE)


def scope_for(kind: str, text: str, files: Sequence[str] = (), symbols: Sequence[str] = ()) -> str:
    """`user` for a first-person preference with no project anchor, else `project`."""
    if kind != "preference" or files or symbols or _TEAM.search(text):
        return "project"
    if not _FIRST_PERSON.search(text) or extract_anchors(text):
        return "project"
    return "user"
