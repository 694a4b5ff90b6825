"""A stand-in embedder for the tests of the vector paths, loaded as
`tests.hash_embedder:HashEmbedder`: a unit vector seeded by the text's hash, 32-d, no model.
The same text always gets the same vector, so two ways of ranking can be compared exactly.
`seed_notes` writes the store those tests share: long notes (passages) among short ones."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from memgit.memory.format import Memory
from memgit.store.folder import Store

EMBEDDER = f"{__name__}:HashEmbedder"


class HashEmbedder:
    """Text -> a unit vector seeded by the text's hash; 32-d."""

    id = "hash-32"
    dim = 32

    def _one(self, text: str) -> Any:
        seed = int.from_bytes(hashlib.sha1(text.encode()).digest()[:4], "big")
        vector = np.random.default_rng(seed).normal(size=self.dim)
        return (vector / np.linalg.norm(vector)).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> Any:
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> Any:
        return self._one(text)


def seed_notes(store: Store, n: int) -> None:
    """`n` notes on 12 topics; every third is 12 lines long (several passages), the rest one line."""
    for i in range(n):
        lines = [f"Line {j} of note {i}: the module mod_{j}.py retries {j} times before it gives up."
                 for j in range(12)] if i % 3 == 0 else [f"A short note {i}."]
        store.write(Memory(id=f"m-{i:03d}", title=f"Note {i} on topic {i % 12}", body="\n".join(lines),
                           path=f"n{i:03d}.md"))
