"""What the next commit would take: the staged files under a folder, their blobs and the
blobs they replace, read from git's index in bytes (`git diff --cached`, `git cat-file`).
The pre-commit secret gate reads these, never the work tree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memgit.git import runner
from memgit.git.repo import Repo


@dataclass(frozen=True)
class Staged:
    """A file the next commit adds or changes: its path from the root, the blob staged for
    it, and the blob it replaces (HEAD's, or a rename's or copy's source; None when new) and its path."""

    path: str
    blob: str
    before: str | None
    before_path: str | None = None


_NO_BLOB = "0" * 40


def staged(repo: Repo, under: str) -> list[Staged]:
    """Files under `under` that the next commit adds or changes, read from git's index (what
    will be committed, whatever the work tree holds). Submodules are not files: left out."""
    # Bytes, not text: a file name that is not UTF-8 must not make the check fail (and pass).
    raw = _run(["diff", "--cached", "--raw", "-z", "--no-abbrev", "-M",
                      "--diff-filter=ACMRT", "--", under], repo, b"")
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    out: list[Staged] = []
    i = 0
    while i < len(fields) and fields[i].startswith(":"):
        _, new_mode, old_blob, new_blob, status = fields[i][1:].split(" ")
        paths = 2 if status[:1] in ("R", "C") else 1
        path = fields[i + paths]
        i += 1 + paths
        if new_mode != "160000":
            old = None if old_blob == _NO_BLOB else old_blob
            out.append(Staged(path, new_blob, old, fields[i - paths] if old else None))
    return out


def blob_sizes(repo: Repo, blobs: Sequence[str]) -> dict[str, int]:
    """The size in bytes of each blob, without reading any (one `git cat-file --batch-check`)."""
    result = _run(["cat-file", "--batch-check"], repo, "".join(f"{blob}\n" for blob in blobs).encode())
    sizes = {}
    for line in result.decode("utf-8", "replace").splitlines():
        parts = line.split(" ")
        if len(parts) == 3 and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    return sizes


def read_blobs(repo: Repo, blobs: Sequence[str]) -> dict[str, bytes]:
    """The content of each blob (one `git cat-file --batch`); a missing one is left out."""
    data = _run(["cat-file", "--batch"], repo, "".join(f"{blob}\n" for blob in blobs).encode())
    out: dict[str, bytes] = {}
    pos = 0
    while pos < len(data):
        end = data.index(b"\n", pos)
        header = data[pos:end].decode("utf-8", "replace").split(" ")
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit():
            continue  # `<blob> missing`
        size = int(header[2])
        out[header[0]] = data[pos: pos + size]
        pos += size + 1  # the content is followed by a newline
    return out


def _run(args: list[str], repo: Repo, stdin: bytes) -> bytes:
    return runner.run(args, repo.root, stdin=stdin).data
