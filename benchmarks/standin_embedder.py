"""A cheap stand-in embedder for `benchmarks/speed.py` (not for real use).

Embedding 10k-100k memories with MiniLM takes 6 to 60+ minutes on 2 cores, so at those
sizes speed.py fills the index's vector table through memgit's own plug-in interface
(`MEMGIT_INDEX_EMBEDDER=standin_embedder:StandInEmbedder`, with this folder on
PYTHONPATH): `embed()` returns seeded random unit vectors of MiniLM's width (384), so
the sqlite-vec table has the real size and the KNN search the real cost, while
`embed_query()` runs the real MiniLM model, so a recall still pays for loading the model
and embedding the query. With MEMGIT_BENCH_REAL_DOCS=1, `embed()` runs MiniLM too (used
to time re-indexing one edited memory with a real embedding).

Standard library only at import time (it is imported by every cold `memgit recall` of
the benchmark); the vectors are returned as small objects with the two methods the index
calls on numpy rows, `astype()` and `tobytes()`.
"""

from __future__ import annotations

import array
import hashlib
import math
import os
import random
from typing import Any, Sequence

DIM = 384


class _Row:
    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def astype(self, *_args: Any, **_kwargs: Any) -> "_Row":
        return self

    def tobytes(self) -> bytes:
        return self._data


def random_unit(text: str) -> _Row:
    """A unit vector seeded by the text: the same memory always gets the same vector."""
    seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).digest(), "big")
    raw = array.array("b", random.Random(seed).randbytes(DIM))
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return _Row(array.array("f", [x / norm for x in raw]).tobytes())


class StandInEmbedder:
    """Random unit vectors for memories, the real MiniLM for queries (see the module doc)."""

    id = "bench-standin-random-unit-384+minilm-query"
    dim = DIM

    def __init__(self, **_options: Any) -> None:
        self._model: Any = None
        self._threads = 1

    def use_threads(self, threads: int) -> None:
        """As MiniLM's (`OnnxEmbedder.use_threads`): the query model runs with `threads`."""
        self._threads = threads
        if self._model is not None:
            self._model.use_threads(threads)

    def _real(self) -> Any:
        if self._model is None:
            from memgit.index.embedders import load_embedder

            self._model = load_embedder("minilm")
            if self._threads > 1:  # asked only by a memgit that has `use_threads`
                self._model.use_threads(self._threads)
        return self._model

    def embed(self, texts: Sequence[str]) -> Any:
        if os.environ.get("MEMGIT_BENCH_REAL_DOCS") == "1":
            return self._real().embed(texts)
        return [random_unit(t) for t in texts]

    def embed_query(self, text: str) -> Any:
        return self._real().embed_query(text)
