"""The secret gate on files: what a commit would add under the memory folder, and what lint
finds in the files there that are not memories.

Everything under `.memory/` is pushed with the memories, so every file there is scanned, not
only the Markdown ones: `config.toml`, `notes.txt`, a `README.md`, hidden files. The pre-commit
hook reads what git will commit (the staged blobs, not the work tree) and compares secrets by
value with the file's committed version: a secret already in HEAD does not block an unrelated
edit, a second one of the same kind does. Files over the memory size limit are refused before
they are read: they are not memories, and scanning 50 MB would hold the commit for minutes.

Binary files (a NUL byte, no UTF-16 mark) are scanned in their text runs, as `strings` shows
them: a token in a SQLite file or a pickled config is found; one inside compressed data (a zip,
a PNG) is not, and nothing claims otherwise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memgit.git import repo as gitrepo
from memgit.git import staging
from memgit.memory import format as fmt
from memgit.memory import lenient
from memgit.memory.credentials import SecretMatch, find_in_memory, find_secrets
from memgit.memory.format import Problem

__all__ = ["Found", "check_commit", "lint_files", "scan"]

MAX_BYTES = fmt.MAX_FILE_BYTES
_RUN = re.compile(rb"[\t\x20-\x7e]{8,}")  # printable ASCII, 8 or more: a binary file's text


@dataclass(frozen=True)
class Found:
    """The secrets in one file's content; `binary` when they came from its text runs."""

    matches: list[SecretMatch]
    binary: bool


def scan(data: bytes) -> Found:
    """The likely secrets in a file's bytes, whatever the file is."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16, as some Windows editors save
        try:
            return Found(find_secrets(data.decode("utf-16")), False)
        except UnicodeError:
            pass
    if b"\0" in data:
        return Found(find_secrets("\n".join(run.decode("ascii") for run in _RUN.findall(data))), True)
    return Found(find_secrets(data.decode("utf-8", "replace")), False)


def _in_fields(data: bytes, path: str) -> set[str]:
    """The fingerprints of the secrets in the fields of the memory `data` holds (none if no memory)."""
    if not fmt.is_memory_file(path.rsplit("/", 1)[-1]):
        return set()
    memory = lenient.check(data, path)[0]
    return {m.fingerprint for m in find_in_memory(memory)} if memory is not None else set()


def _shown(path: str) -> str:
    """A path for a one-line message: bytes that are not UTF-8 and control characters escaped."""
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 1_000_000 else f"{n / 1000:.0f} kB"


def check_commit(repo: gitrepo.Repo, under: str, out: Callable[[str], None], *, allow_secret: bool) -> int:
    """The pre-commit check: lint problems of the staged memory files are printed (they do
    not block); a staged file over the size limit, or one that adds a secret (unless
    `allow_secret`), refuses the commit (1)."""
    staged = staging.staged(repo, under)
    sizes = staging.blob_sizes(repo, [f.blob for f in staged])
    too_big = [f for f in staged if sizes.get(f.blob, 0) > MAX_BYTES]
    for f in too_big:
        out(
            f"memgit: {_shown(f.path)}: {_size(sizes[f.blob])}, over the {_size(MAX_BYTES)} limit for files "
            f"under {under}/ (memories are short notes; it was not read). Keep it outside {under}/ and "
            f"unstage it: git restore --staged '{_shown(f.path)}'"
        )
    # `.tmp-*.md`: the half-written file of a memgit write that was killed (the next memgit
    # write removes it); `git add -A` would otherwise commit it.
    half = [f for f in staged if f.path.rsplit("/", 1)[-1].startswith(".tmp-") and f.path.endswith(".md")]
    for f in half:
        out(f"memgit: {_shown(f.path)}: a half-written file left by a memgit command that was killed, "
            f"not a memory. Unstage and remove it: git rm --cached -q '{_shown(f.path)}' && rm '{_shown(f.path)}'")
    blocked = 0
    for f in staged:  # a file's name is pushed too
        named = {m.fingerprint for m in find_secrets(f.before_path or "")}
        for match in find_secrets(f.path):
            if match.fingerprint not in named:
                blocked += 1
                out(f"memgit: {_shown(f.path)}: its name looks like a secret "
                    f"({match.pattern}: {match.excerpt})")
    readable = [f for f in staged if f not in too_big]
    contents = staging.read_blobs(repo, [f.blob for f in readable] + [f.before for f in readable if f.before])
    for f in readable:
        data = contents.get(f.blob, b"")
        is_memory = fmt.is_memory_file(f.path.rsplit("/", 1)[-1])
        memory, problems = lenient.check(data, f.path) if is_memory else (None, [])
        for problem in problems:
            out(f"memgit: {problem}")
        old = contents.get(f.before or "", b"")
        before = {m.fingerprint for m in scan(old).matches} | (_in_fields(old, f.path) if f.before else set())
        found = scan(data)
        for match in found.matches:
            if match.fingerprint in before:
                continue  # already committed: this commit does not add it
            blocked += 1
            where = (
                f"{_shown(f.path)}: in its binary content"
                if found.binary
                else f"{_shown(f.path)}:{match.line}"
            )
            out(f"memgit: {where}: this looks like a secret ({match.pattern}: {match.excerpt})")
        if memory is not None:
            # A value the text hides (a YAML escape, a line continuation) is the secret git pushes
            # and recall shows once the memory is read: scanned field by field, as lint does.
            shown = before | {m.fingerprint for m in found.matches}
            for match in find_in_memory(memory):
                if match.fingerprint not in shown:
                    shown.add(match.fingerprint)
                    blocked += 1
                    out(f"memgit: {_shown(f.path)}: in its {match.where}: this looks like a secret "
                        f"({match.pattern}: {match.excerpt})")
    if blocked and not allow_secret:
        out(
            "memgit: commit refused: memories are pushed to remotes. Remove the secret, "
            "or commit anyway with 'git commit --no-verify' (or MEMGIT_ALLOW_SECRET=1)"
        )
    elif too_big or half:
        out(
            f"memgit: commit refused: a file under {under}/ is too large or half-written (or commit anyway "
            "with 'git commit --no-verify')"
        )
    return 1 if too_big or half or (blocked and not allow_secret) else 0


def lint_files(folder: Path, repo: gitrepo.Repo | None, memories: set[str]) -> Iterator[Problem]:
    """Secrets in the files under `folder` a commit could hold (tracked, or untracked and not
    ignored) that are not read as memories (`memories`: those are scanned field by field),
    and files too large to commit there."""
    for rel in gitrepo.files(repo, folder) if repo is not None else _walk(folder):
        for match in find_secrets(rel):
            yield Problem(rel, 0, f"its name looks like a secret: {match.pattern} ({match.excerpt})")
        if rel in memories:
            continue
        path = folder / rel
        try:
            if path.is_symlink():
                if fmt.is_memory_file(path.name):  # skipped by every reader: say so, hide nothing
                    yield Problem(rel, 0, "a symbolic link, which memgit never reads as a memory (it could "
                                          "lead outside the repository): replace it with the file itself")
                continue  # a symlink's target is not committed
            if not path.is_file():
                continue  # a deleted tracked file is gone
            size = path.stat().st_size
            if size > MAX_BYTES:
                if not fmt.is_memory_file(path.name):  # a memory file's size is reported already
                    yield Problem(
                        rel,
                        0,
                        f"{_size(size)}, over the {_size(MAX_BYTES)} limit for files in the "
                        "memory folder (the pre-commit hook refuses it): keep it elsewhere",
                    )
                continue
            data = path.read_bytes()
        except OSError as exc:
            yield Problem(rel, 0, f"cannot read: {exc.strerror}")
            continue
        found = scan(data)
        for match in found.matches:
            where = "in its binary content: " if found.binary else ""
            yield Problem(
                rel,
                0 if found.binary else match.line,
                f"looks like a secret: {where}{match.pattern} ({match.excerpt})",
            )


def _walk(folder: Path) -> Iterator[str]:
    """Every file under a memory folder outside any repository."""
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            yield os.path.relpath(os.path.join(dirpath, name), folder).replace(os.sep, "/")
