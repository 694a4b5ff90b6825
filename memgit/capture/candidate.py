"""A candidate memory (`Candidate`), and the small text helpers every capture rule shares:
titles, shortened quotes, paths made relative to the repository, files named in a text."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memgit.memory.anchors import extract_anchors
from memgit.memory.format import count_tokens

BODY_TOKENS = 300
#: What a memory file may not hold, as a transcript or a judge can bring it: a terminal's colour
#: codes (whole), other control characters, and halves of a character cut apart (lone surrogates).
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Candidate:
    """A memory a transcript suggests, before anyone has agreed to keep it."""

    kind: str
    title: str
    body: str
    source: str
    confidence: float
    evidence: tuple[int, ...]  # transcript lines
    files: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    tags: tuple[str, ...] = ("captured",)
    notes: tuple[str, ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "title": self.title, "body": self.body, "source": self.source,
                "confidence": self.confidence, "files": list(self.files), "symbols": list(self.symbols),
                "tags": list(self.tags), "evidence": {"lines": list(self.evidence)},
                "notes": list(self.notes)}


def fit(candidate: Candidate) -> Candidate:
    """Cut a body to the token budget, line by line from the end, keeping its first lines; the
    title and body cleaned of what a memory file may not hold."""
    title, body = clean(candidate.title), clean(candidate.body)
    while count_tokens(body) > BODY_TOKENS and "\n" in body:
        body = body.rsplit("\n", 1)[0]
    while count_tokens(body) > BODY_TOKENS:
        body = body[: int(len(body) * 0.8)].rstrip() + "…"
    if (title, body) == (candidate.title, candidate.body):
        return candidate
    return Candidate(candidate.kind, title, body, candidate.source, candidate.confidence,
                     candidate.evidence, candidate.files, candidate.symbols, candidate.tags, candidate.notes)


def clean(text: str) -> str:
    """`text` without colour codes and control characters (newlines and tabs kept), a lone
    surrogate replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", _CONTROL.sub("", _ANSI.sub("", text)))


def is_file(anchor: str) -> bool:
    return bool(re.fullmatch(r"[\w.-]+\.(?:py|js|ts|toml|json|ya?ml|md|cfg|ini|sh|go|rs|lock|txt)", anchor))


def make_title(text: str, limit: int = 100, *, capital: bool = True) -> str:
    text = " ".join(text.split()).rstrip(" .。")
    first = text.split(" ", 1)[0]
    if capital and first.replace("'", "").isalpha() and first.islower():
        text = text[:1].upper() + text[1:]
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def flat(groups: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f for group in groups for f in group))


def relative_paths(files: Sequence[str], base: str) -> tuple[str, ...]:
    out = []
    for path in files:
        if base and os.path.isabs(path):
            rel = os.path.relpath(path, base)
            path = path if rel.startswith("..") else rel
        out.append(path.replace(os.sep, "/"))
    return tuple(dict.fromkeys(out))


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def anchored_files(text: str) -> tuple[str, ...]:
    found = [a for a in extract_anchors(text) if "/" in a or is_file(a)]
    # extract_anchors adds a path's file name too; the path says it already.
    return tuple(a for a in found if not any(other.endswith("/" + a) for other in found))
