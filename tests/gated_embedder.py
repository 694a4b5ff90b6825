"""A tiny embedder for the background-embedding tests, loaded as `tests.gated_embedder:GatedEmbedder`.

Bag of hashed words, 64-d, standard library only, so a job starts fast. With
`MEMGIT_TEST_GATE=<folder>` it records every text it embeds in `<folder>/texts` and lets
only as many `embed()` batches through as `<folder>/allow` says (no file: all of them);
past that it writes `<folder>/waiting` and waits for `allow` to grow. `<folder>/fail`
makes loading fail. That lets a test stop a job between two committed batches without
any timing: it kills the job while it waits.
"""

from __future__ import annotations

import array
import hashlib
import math
import os
import time
from pathlib import Path
from typing import Any, Sequence

DIM = 64


class _Row:
    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def astype(self, *_args: Any) -> "_Row":
        return self

    def tobytes(self) -> bytes:
        return self._data


def _vector(text: str) -> _Row:
    values = [0.0] * DIM
    for word in text.lower().split():
        values[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIM] += 1.0
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return _Row(array.array("f", [v / norm for v in values]).tobytes())


def _gate() -> Path | None:
    folder = os.environ.get("MEMGIT_TEST_GATE")
    return Path(folder) if folder else None


class GatedEmbedder:
    id = "test-gated-hash-64"
    dim = DIM

    def __init__(self, **_options: Any) -> None:
        gate = _gate()
        if gate is not None and (gate / "fail").exists():
            raise RuntimeError("the gated test embedder was told to fail")

    def embed(self, texts: Sequence[str]) -> list[_Row]:
        gate = _gate()
        if gate is not None:
            batches = gate / "batches"
            done = len(batches.read_text().split()) if batches.exists() else 0
            while (gate / "allow").exists() and done >= int((gate / "allow").read_text()):
                (gate / "waiting").write_text(str(os.getpid()))
                time.sleep(0.05)
            with open(batches, "a") as handle:
                handle.write(f"{os.getpid()}\n")
            with open(gate / "texts", "a") as handle:
                handle.writelines(text.replace("\n", " ") + "\n" for text in texts)
        return [_vector(text) for text in texts]

    def embed_query(self, text: str) -> _Row:
        return _vector(text)
