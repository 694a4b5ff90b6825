"""The background embedding job's process, by the name it is started with: `python -I -m
memgit.embedjob DB EMBEDDER` (`memgit.index.embedjob.start`). It embeds every pending memory of
one index, holding the index's embed lock, and fails open into `embed.log`."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from memgit.index import embedjob
from memgit.index.db import Database
from memgit.index.vectors import Vectors


def run(db_path: Path, embedder_name: str) -> int:
    """Embed every pending memory of the index at `db_path`; returns how many (0 when another
    process embeds for this index already)."""
    with embedjob.hold(db_path) as mine:
        return _embed(db_path, embedder_name) if mine else 0


def _embed(db_path: Path, embedder_name: str) -> int:
    embedjob.lower_priority()
    if not db_path.is_file():
        return 0  # the index was deleted: the next recall rebuilds it and starts again

    db = Database(db_path, lambda message: None)  # what goes wrong is raised below
    vectors = Vectors(db, embedder_name)
    db.on_connect = vectors.attach
    total = 0
    try:
        db.open()
        if db.in_memory:
            raise RuntimeError(db.memory_reason or "the index cannot be opened")
        while vectors.on:
            embedded, pending = db.guard(lambda: vectors.embed_pending("all", None))
            total += embedded
            if pending == 0 or embedded == 0:
                break  # done, or another process embeds the rest
        if not vectors.on:
            raise RuntimeError(vectors.reason() or "vectors are off")
    finally:
        db.close()
        vectors.close()
    return total


def main(argv: list[str]) -> int:
    db_path, name = Path(argv[0]), argv[1]
    for path in reversed(os.environ.get(embedjob.SYSPATH_ENV, "").split(os.pathsep)):
        if path and path not in sys.path:
            sys.path.insert(0, path)
    started = time.monotonic()
    try:
        done = run(db_path, name)
    except BaseException as exc:  # fail open: one line, exit 0
        message = " ".join(str(exc).split()) or type(exc).__name__
        embedjob.log(db_path, f"embedding in the background failed (embedder {name}): {message}")
        try:
            embedjob.failed_path(db_path).touch()
        except OSError:
            pass
        return 0
    if done:
        embedjob.failed_path(db_path).unlink(missing_ok=True)
        embedjob.log(db_path, f"embedded {done} memories in the background in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
