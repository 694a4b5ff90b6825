"""A vector as the index keeps it: float32 of unit length, or refused.

sqlite-vec computes cosines in float32: an embedder's huge but finite components (a plug-in
that gives 1e30) overflow its dot products and norms into inf and NaN, and a zero or NaN
vector has no direction at all. So every vector an embedder gives memgit, for a memory, a
passage, a title or a query, comes through `unit`: its norm is taken in float64 (overflow-safe,
`math.hypot`), it is divided by it, and then stored as float32. A vector that has no
direction to keep (zero, not finite, a norm past float64's range, the wrong length) is refused:
`unit` gives None, and its memory is found by keywords and anchors only.

Pure Python (`array`, `math`): the query path of a hook that asks the warm embedder never
imports numpy for this (384 floats: ~30 us).
"""

from __future__ import annotations

import math
from array import array
from typing import Any

#: What memgit says when it refuses an embedder's vector, after "the embedder {name} gave".
REFUSED = "no usable vector (zero, not finite, or too large to normalise)"


def unit(vector: Any, dim: int | None = None) -> bytes | None:
    """`vector` (an embedder's array, a list of numbers, or float32 bytes) scaled to length 1, as
    float32 bytes; None when it has no direction to keep or is not `dim` long."""
    floats = _floats(vector)
    if not floats or (dim is not None and len(floats) != dim):
        return None
    if not all(map(math.isfinite, floats)):
        return None
    norm = math.hypot(*floats)
    if norm == 0.0 or not math.isfinite(norm):
        return None
    scaled = array("f", [x / norm for x in floats])
    return scaled.tobytes() if any(scaled) else None


def _floats(vector: Any) -> array[float] | None:
    """The numbers of `vector` as float64, or None when it is not a flat vector of numbers."""
    try:
        if isinstance(vector, (bytes, bytearray, memoryview)):
            data = bytes(vector)
            return array("d", array("f", data)) if len(data) % 4 == 0 else None
        astype = getattr(vector, "astype", None)
        if callable(astype):  # an array: its own conversion, no numpy import here
            if getattr(vector, "ndim", 1) != 1:
                return None
            if getattr(vector, "dtype", None) is None:  # array-like: float32 bytes, as it always gave
                return _floats(astype("float32").tobytes())
            data = astype("=f8").tobytes()  # numpy: float64, so that 1e300 keeps its direction
            out = array("d")
            out.frombytes(data[: len(data) - len(data) % 8])
            return out
        return array("d", (float(x) for x in vector))
    except (TypeError, ValueError, OverflowError):
        return None
