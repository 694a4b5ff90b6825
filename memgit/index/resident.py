"""The stored vectors kept in the process, for the vector channel's two stages.

Past a couple of thousand vectors the vector channel and the passages shortlist the stored
vectors by hamming distance over their sign bits, then score the shortlist by exact cosine
(`memgit.index.channels.vector`, `memgit.index.passages.best`). In SQL that is, on every
recall, a scan of every row's bits and then a B-tree lookup and a 1.5 KB read per
shortlisted row: at 10k generated memories (11k passages) most of the vector channel's
~50 ms. A process that recalls many times (the MCP server, one `memgit.open` used for many
recalls) keeps them here instead, as numpy arrays, and runs both stages on them.

The answers are the SQL's, number for number: the shortlist is the rows in the order the
SQL scans them (by rowid) ranked by hamming distance, a tie at the cut keeping the row
scanned first as SQLite's `ORDER BY … LIMIT` does; the cosine is sqlite-vec's
`vec_distance_cosine` computed the way its C loop does (float32 sums in dimension order, then
`1 - dot / (sqrt(a) * sqrt(b))` in double, returned as float32); ties are ordered as the SQL
orders them. tests/test_recall_resident.py compares the two paths.

Kept from a connection's second search on (a hook that recalls once reads nothing in), and
never stale: what is kept is tied to one connection and to a stamp of the tables it was read
from (`memgit.index.stamps`): their generations, which persistent triggers change on every
write to them by anyone, and the schema's version (a table dropped or made again). When the
stamp moved, the table is read again (~60 ms at 10k); a write elsewhere (`meta`, `files`: a
prompt hook's sync) moves nothing.

Memory: the sign bits cost 48 bytes a 384-dimension vector and are kept up to `MAX_BITS`
rows a table (~48 MB); the float32 vectors 1.5 KB each, kept while a table's come to at most
`MAX_FLOAT_BYTES` (about 43k vectors of 384 dimensions). At 10k memories that is ~35 MB in
all; at 100k only the bits (~10 MB), and the exact stage reads the shortlist from SQL.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from memgit.index import postings as postings_mod
from memgit.index import stamps
from memgit.index.sqlite import BUSY_TIMEOUT_MS
from memgit.index.stamps import Stamp, stamp

#: A table's sign bits are kept up to this many rows; past it the SQL scans them.
MAX_BITS = 1_000_000
#: A table's float32 vectors are kept while they come to at most this; past it the exact
#: stage reads the shortlisted rows from SQL.
MAX_FLOAT_BYTES = 64 * 1024 * 1024
#: Rows whose tokens are kept for `memgit.recall.coverage` at most (~2-8 KB each); then the
#: set starts again.
MAX_TOKEN_ROWS = 5_000

#: The bits table each stage shortlists from, the table its vectors are in, and how a key
#: is read: a doc, or a (doc, passage number) pair.
_TABLES = {
    "vector_bits": ("vectors", ("SELECT b.doc, b.bits, v.embedding FROM vector_bits b "
                                "LEFT JOIN vectors v ON v.doc = b.doc "
                                "WHERE b.bits IS NOT NULL ORDER BY b.rowid")),
    "passage_bits": ("passage_vectors", ("SELECT b.doc, b.n, b.bits, p.embedding FROM passage_bits b "
                                         "LEFT JOIN passage_vectors p ON p.doc = b.doc AND p.n = b.n "
                                         "WHERE b.bits IS NOT NULL ORDER BY b.rowid")),
}
_WATCHED = tuple(name for bits, (vectors, _) in _TABLES.items() for name in (bits, vectors))



@dataclass
class _Table:
    stamp: Stamp
    docs: Any = None  # int64, one a row, in scan order
    ns: Any = None  # passage numbers (passages only)
    bits: Any = None  # uint8 (rows, bytes)
    floats: Any = None  # float32 (rows, dimensions) or None: not kept, or some row has none
    norms: Any = None  # float32 a row: the sum of squares, summed as sqlite-vec sums it
    kept: bool = True


@dataclass
class Resident:
    """What is kept of the tables in `_TABLES`, for one connection at a time."""

    conn: Any = None
    tables: dict[str, _Table] = field(default_factory=dict)
    #: Searches begun on this connection (`watch`): the first reads nothing into memory, so
    #: that a process that recalls once (a hook, a CLI call) pays nothing for keeping.
    searches: int = 0
    #: The schema's version when every watched table that exists had its triggers.
    schema: int | None = None
    #: The keyword channel's postings (`memgit.index.postings`), kept under the same rules.
    postings: postings_mod.Postings = field(default_factory=postings_mod.Postings)
    #: Each FTS5 row's tokens, as far as `memgit.recall.coverage` has read them (`tokens`).
    row_tokens: dict[int, frozenset[str]] = field(default_factory=dict)
    row_tokens_stamp: Stamp | None = None

    def watch(self, conn: Any) -> None:
        """Note a search begun; from the second on, make sure the four tables and FTS5's row
        lengths have their generations (`memgit.index.stamps`). Call it outside any
        transaction: the index's read snapshots roll back what they made."""
        if conn is not self.conn:
            self.postings.stop()
            self.conn, self.tables, self.searches, self.schema = conn, {}, 0, None
            self.postings = postings_mod.Postings()
            self.row_tokens, self.row_tokens_stamp = {}, None
        self.searches += 1
        if self.searches < 2:
            return  # nothing is kept for a first search, so nothing needs counting yet
        # A watched table without its triggers (an index made before them, a table made
        # since): made now if the write lock is free, else nothing is kept this time.
        # The schema's version says when to look again (a table or trigger made or dropped).
        schema = conn.execute("PRAGMA main.schema_version").fetchone()[0]
        if schema != self.schema:
            missing = stamps.missing(conn, (*_WATCHED, postings_mod.DOCSIZE))
            if stamps.install(conn, missing, BUSY_TIMEOUT_MS):
                self.schema = schema if not missing else None  # made some: look again next time
        postings_mod.prepare(conn)

    def start(self, conn: Any, weights: Any) -> bool:
        """A long-lived process that will recall many times (the MCP server, as it starts):
        keep from its first search on, as from a second, and read every token's postings now
        on a thread (`Postings.preload` with `now`), while the process is still starting and
        nothing has been asked: its first recalls then read no postings. Call it outside any
        transaction (as `watch`); whether the postings are being read."""
        self.watch(conn)
        self.watch(conn)  # as a second search: the tables' generations made, the vocabulary
        if not self.postings.fresh(conn, weights):
            return False
        self.postings.preload(conn, now=True)
        return self.postings._loading is not None or self.postings.complete

    def close(self) -> None:
        """Let go of what is kept (the index is closed); a `preload` under way stops."""
        self.postings.stop()
        self.conn, self.tables, self.searches, self.schema = None, {}, 0, None
        self.postings = postings_mod.Postings()
        self.row_tokens, self.row_tokens_stamp = {}, None

    def shortlist(self, conn: Any, table: str, query_vector: bytes, n: int) -> list[Any] | None:
        """The keys (docs, or `[doc, n]` pairs for passages) of the `n` rows of `table` nearest
        the query by hamming distance, as the SQL takes them; None when the table is not kept
        (too large, or its writes not counted: `watch`), and the caller runs the SQL."""
        kept = self._table(conn, table)
        order = None if kept is None else _hamming_order(conn, kept, query_vector, n)
        if kept is None or order is None:
            return None
        if kept.ns is None:
            return [int(d) for d in kept.docs[order]]
        return [[int(d), int(p)] for d, p in zip(kept.docs[order], kept.ns[order])]

    def nearest(self, conn: Any, table: str, query_vector: bytes, n: int,
                k: int) -> list[tuple[Any, float]] | None:
        """The `k` nearest by exact cosine distance among the hamming shortlist of `n`, as
        `(key, distance)` ordered as the SQL orders them (by distance, then doc and passage
        number); None when the table's vectors are not kept."""
        import numpy as np  # the recall path loads numpy only when a store is this large

        kept = self._table(conn, table)
        if kept is None or kept.floats is None or len(query_vector) != 4 * kept.floats.shape[1]:
            return None
        order = _hamming_order(conn, kept, query_vector, n)
        if order is None:
            return None
        distances = _cosine(kept, order, np.frombuffer(query_vector, dtype=np.float32))
        docs = kept.docs[order]
        if kept.ns is None:
            ranked = np.lexsort((docs, distances))[:k]
            return list(zip(docs[ranked].tolist(), distances[ranked].tolist()))
        ns = kept.ns[order]
        ranked = np.lexsort((ns, docs, distances))[:k]
        return list(zip(zip(docs[ranked].tolist(), ns[ranked].tolist()), distances[ranked].tolist()))

    def book(self, conn: Any, weights: Any) -> postings_mod.Postings | None:
        """The keyword channel's postings (`memgit.index.postings`), fresh for `conn`; None
        when not kept (yet) or not certain to answer as FTS5 does."""
        if conn is not self.conn or self.searches < 2 or not self.postings.fresh(conn, weights):
            return None
        self.postings.preload(conn)  # every token's, on a thread: later queries read none
        return self.postings

    def tokens(self, conn: Any) -> dict[int, frozenset[str]] | None:
        """FTS5 rowid -> the tokens of the text `memgit.recall.coverage` reads of that row, for
        the rows it has read so far under the current stamp of FTS5's row lengths (written
        for every row inserted, changed or deleted, by anyone); the caller adds the rows it
        reads. Emptied when the stamp moves or past `MAX_TOKEN_ROWS`; None when not kept (a
        first search, another connection, no generations). Call it in the snapshot the rows
        are read in, so that they and the stamp are of one state."""
        if conn is not self.conn or self.searches < 2:
            return None
        seen = stamp(conn, (postings_mod.DOCSIZE,))
        if seen is None:
            return None
        if seen != self.row_tokens_stamp or len(self.row_tokens) > MAX_TOKEN_ROWS:
            self.row_tokens, self.row_tokens_stamp = {}, seen
        return self.row_tokens

    def _table(self, conn: Any, table: str) -> _Table | None:
        if conn is not self.conn:
            return None
        seen = stamp(conn, (table, _TABLES[table][0]))
        if seen is None or self.searches < 2:
            return None
        kept = self.tables.get(table)
        if kept is None or kept.stamp != seen:
            kept = self.tables[table] = _read(conn, table, seen)
        return kept if kept.kept else None


def _read(conn: Any, table: str, stamp: Stamp) -> _Table:
    """The table's rows into arrays made once at their size, row by row (a list of every row
    first would hold the table twice over)."""
    import numpy as np  # see `Resident.nearest`

    count = conn.execute(f"SELECT count(*) FROM {table} WHERE bits IS NOT NULL").fetchone()[0]
    rows = conn.execute(_TABLES[table][1])
    first = rows.fetchone()
    if count > MAX_BITS or first is None:
        return _Table(stamp, kept=False)
    width, size = len(first[-2]), len(first[-1] or b"")
    out = _Table(stamp, docs=np.empty(count, dtype=np.int64), bits=np.empty((count, width), dtype=np.uint8),
                 ns=np.empty(count, dtype=np.int64) if len(first) == 4 else None)
    floats = (np.empty((count, size // 4), dtype=np.float32)
              if size and size % 4 == 0 and size * count <= MAX_FLOAT_BYTES else None)
    n = 0
    for n, row in enumerate(itertools.chain([first], rows)):
        if n >= count or len(row[-2]) != width:
            return _Table(stamp, kept=False)  # bits of two lengths: the SQL, which says what is wrong
        out.docs[n] = row[0]
        if out.ns is not None:
            out.ns[n] = row[1]
        out.bits[n] = np.frombuffer(row[-2], dtype=np.uint8)
        if floats is not None:
            if row[-1] is None or len(row[-1]) != size:
                floats = None  # a row without its vector: the exact stage reads them from SQL
            else:
                floats[n] = np.frombuffer(row[-1], dtype=np.float32)
    if n + 1 != count:
        return _Table(stamp, kept=False)
    if floats is not None:
        out.floats = floats
        out.norms = np.cumsum(floats * floats, axis=1, dtype=np.float32)[:, -1].copy()  # see `_cosine`
    return out


def _hamming_order(conn: Any, kept: _Table, query_vector: bytes, n: int) -> Any:
    """Row numbers of the `n` rows nearest by hamming distance, ties in scan order; None
    when the query's bits are not as long as the stored ones (the SQL says what is wrong)."""
    import numpy as np  # see `Resident.nearest`

    query = np.frombuffer(conn.execute("SELECT vec_quantize_binary(?)", (query_vector,)).fetchone()[0],
                          dtype=np.uint8)
    if query.shape[0] != kept.bits.shape[1]:
        return None
    small = np.uint16 if kept.bits.shape[1] * 8 < 1 << 16 else np.int64
    if kept.bits.shape[1] % 8 == 0 and hasattr(np, "bitwise_count"):  # numpy 2: eight bytes at a time
        differ = kept.bits.view(np.uint64) ^ query.view(np.uint64)
        counts = np.bitwise_count(differ).sum(axis=1, dtype=small)
    elif hasattr(np, "bitwise_count"):
        counts = np.bitwise_count(kept.bits ^ query).sum(axis=1, dtype=small)
    else:
        counts = np.unpackbits(kept.bits ^ query, axis=1).sum(axis=1, dtype=small)
    # A stable sort keeps ties in scan order; on 16-bit keys numpy's is a radix sort.
    return np.argsort(counts, kind="stable")[:n]


def _cosine(kept: _Table, order: Any, query: Any) -> Any:
    """sqlite-vec's cosine distance of the rows `order` to `query`, bit for bit: float32
    products summed in dimension order, as the C loop does, the rest in double, the result a
    float32; a zero vector's (NaN, NULL in SQL) is 1.0 as `channels._COSINE` makes it. The
    products are written a dimension at a time (Fortran order) and added along the vectors:
    numpy sums in pairs only along the axis that is contiguous in memory, so along the other
    it adds one at a time (a `cumsum` along each vector, the same sums, took twice as long; a
    transposed copy of C-ordered products ~20% longer than this)."""
    import numpy as np  # see `Resident.nearest`

    products = np.multiply(kept.floats[order], query, order="F")
    dot = np.add.reduce(products, axis=1, dtype=np.float32)
    own = np.cumsum(query * query, dtype=np.float32)[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = (1.0 - dot.astype(np.float64) / (np.sqrt(kept.norms[order].astype(np.float64))
                                                     * np.sqrt(np.float64(own)))).astype(np.float32)
    return np.where(np.isnan(distance), 1.0, distance.astype(np.float64))
