"""FTS5's bm25 for the keyword channel, computed on postings a recalling process keeps.

The keyword channel ranks with FTS5's `bm25()` over an OR of the query's terms
(`memgit.index.channels.keyword`). A question's common words ("should", "store", "old") match
most of a store, and FTS5 scores every matching row, reading each row's positions: at 10k
generated memories ~6k rows a query, ~15-20 ms. A process that recalls many times (the MCP
server, one `memgit.open` used for many recalls) keeps, for each token it has been asked
about, the rows that hold it and how often (weighted by column), and each row's length, and
computes the same bm25 on those in numpy.

The same numbers, as fts5_aux.c computes them: idf = ln((N - n + 0.5) / (n + 0.5)), floored
at 1e-6; for each row, per phrase in the query's order, score += idf * (f * (k1 + 1)) /
(f + k1 * (1 - b + b * D / avgdl)) in double, f the column weights of the phrase's hits in
the row, D the row's tokens, avgdl the table's tokens over its rows (FTS5's own totals); the
answer is -score, ordered as `ORDER BY score` orders it (ties by rowid). Only where that is
certain: one token a phrase (no prefix query), integer column weights (so a row's f is the
same whatever order its hits are added in); otherwise the caller runs the SQL.
tests/test_recall_resident.py compares the two.

Kept from a connection's second search on, as the vectors are (`memgit.index.resident`,
which holds these postings), and never stale: read again when the stamp
(`memgit.index.stamps`) over FTS5's `docsize` table moves, which every insert or delete of a
row writes. Memory: each row's length
(16 bytes a row) and the postings asked for, at most `MAX_POSTINGS` entries (16 bytes each,
~32 MB); past it they are dropped and read again as asked for.

Every token's at once (`Postings.preload`): once the process has answered no query for
`IDLE_SECONDS`, a thread with its own connection reads every token's postings in one snapshot
and hands them over only if that snapshot has the same stamp; a query meanwhile makes it let
go of its snapshot and wait again. At 10k memories ~1.5 s of one core and ~20 MB, taken
between an agent's prompts; then no query reads postings. Not when they come to more than
`MAX_POSTINGS` (100k memories). The MCP server has them read as it starts instead
(`preload(now=True)`, from `memgit.index.workspace.Workspace.start`), while the MCP SDK loads:
that read neither waits for quiet nor lets go for a query, and a query that comes before it
ends waits for it (`START_WAIT` at most) rather than read its own tokens beside it.
"""

from __future__ import annotations

import math
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memgit.index import stamps

#: FTS5's bm25 constants (fts5_aux.c).
K1 = 1.2
B = 0.75
#: Postings kept at most (a row holding a token is one); then they are read again as asked for.
MAX_POSTINGS = 2_000_000
#: Whether a `preload` thread reads every token's postings in a process's quiet seconds. Only
#: the MCP server turns it on (`memgit.mcpserver.serve`): the long-lived process with quiet
#: seconds between an agent's prompts. A library user or a test that recalls a few times
#: starts no thread that would then compete with it for the CPU.
PRELOAD = False
#: Seconds without a query before a `preload` reads (and goes on reading) postings.
IDLE_SECONDS = 1.0
#: Seconds a query waits at most for the postings read as the process starts (`preload` with
#: `now`) before it reads its tokens' itself; ~1.5 s at 10k memories, on a loaded machine ~3.
START_WAIT = 3.0
#: Seconds the `preload` thread's connection waits for a lock.
BUSY_SECONDS = 5.0
#: Row counts of tokens kept at most (`Postings.counted`); then they are asked for again.
MAX_COUNTS = 100_000
#: The FTS5 table's shadow table of row lengths, written for every row inserted or deleted.
DOCSIZE = "memories_fts_docsize"
#: The per-instance vocabulary the postings are read from (made by `Resident.watch`).
INSTANCES = "temp.resident_fts_i"


@dataclass
class Postings:
    """Row lengths and the postings of the tokens asked for, as of one stamp."""

    stamp: Any = None
    docs: Any = None  # int64 rowids, ascending
    norms: Any = None  # float64 a row, same order: k1 * (1 - b + b * D / avgdl)
    valid: bool = True
    n_rows: int = 0
    n_tokens: int = 0
    weights: tuple[float, ...] = ()
    columns: dict[str, int] = field(default_factory=dict)
    terms: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # token -> (rowids, f)
    #: How many rows hold a token whose postings are not kept (asked of FTS5's vocabulary:
    #: a very common word is counted, never ranked), as of the same stamp.
    counts: dict[str, int] = field(default_factory=dict)
    held: int = 0
    #: Every token's postings are kept (`preload`): a token not in `terms` is in no row.
    complete: bool = False
    #: (stamp, [postings or None once done], let go, done or None) of a `preload` begun; the
    #: last is set once a `preload(now=True)` has ended, which `fresh` waits for.
    _loading: Any = None
    asked: float = 0.0  # `time.monotonic()` of the last `fresh`: a `preload` waits for quiet

    def fresh(self, conn: Any, weights: Sequence[float]) -> bool:
        """Whether the postings can answer for `conn` with these column weights now (read
        again first if the index changed); False when that is not certain (see the module
        docstring) or nothing is counted, and the caller runs the SQL."""
        if not all(float(w).is_integer() for w in weights):
            return False
        self.asked = time.monotonic()
        seen = stamps.stamp(conn, (DOCSIZE,))
        if seen is None or conn.execute(
                "SELECT 1 FROM temp.sqlite_master WHERE name = 'resident_fts_i'").fetchone() is None:
            return False
        if seen != self.stamp or tuple(float(w) for w in weights) != self.weights:
            self._read(conn, seen, tuple(float(w) for w in weights))
        elif self._loading is not None and self._loading[3] is not None:
            # Every token's postings are being read as the process starts (`preload` with
            # `now`): wait for them rather than read this query's beside that read.
            self._loading[3].wait(START_WAIT)
            self._take_loaded()
        return self.n_rows > 0 and self.valid

    def count(self, token: str) -> int | None:
        """How many rows hold `token`, if its postings are kept (after `fresh`)."""
        kept = self.terms.get(token)
        if kept is None and self._take_loaded():
            kept = self.terms.get(token, ((), ()))
        return self.counts.get(token) if kept is None else len(kept[0])

    def counted(self, token: str, rows: int) -> None:
        """Note how many rows hold `token` (read from FTS5 under the current stamp)."""
        if len(self.counts) >= MAX_COUNTS:
            self.counts.clear()
        self.counts[token] = rows

    def ranked(self, conn: Any, phrases: Sequence[Sequence[str]],
               limit: int) -> list[tuple[int, float]] | None:
        """`SELECT rowid, bm25(memories_fts, *weights) AS score FROM memories_fts WHERE
        memories_fts MATCH <the phrases OR'd> ORDER BY score LIMIT limit`, computed on what is
        kept (after `fresh`); None for a phrase of other than one token (the SQL then)."""
        import numpy as np  # see `memgit.index.resident.Resident.nearest`

        if not phrases or any(len(tokens) != 1 for tokens in phrases):
            return None
        lists = [self._posting(conn, tokens[0]) for tokens in phrases]
        if not self.valid:
            return None
        score = np.zeros(len(self.docs), dtype=np.float64)
        matched = np.zeros(len(self.docs), dtype=bool)
        for at, freqs in lists:
            idf = math.log((self.n_rows - len(at) + 0.5) / (len(at) + 0.5))
            # Only the rows that hold the phrase: the others would add idf * 0.0. Positions
            # are distinct (`_parse`), so `+=` adds each once, in the phrases' order.
            score[at] += (idf if idf > 0.0 else 1e-6) * ((freqs * (K1 + 1.0)) / (freqs + self.norms[at]))
            matched[at] = True
        rows = np.flatnonzero(matched)
        docs, score = self.docs[rows], -1.0 * score[rows]
        if 0 < limit < len(rows):  # the best `limit` and every row tied with the last of them
            near = score <= np.partition(score, limit - 1)[limit - 1]
            docs, score = docs[near], score[near]
        order = np.lexsort((docs, score))[:limit]
        return list(zip(docs[order].tolist(), score[order].tolist()))

    def holding(self, conn: Any, tokens: Sequence[str], rows: Sequence[int]) -> dict[int, set[str]] | None:
        """Which of `tokens` each row of `rows` (rowids) holds, in any column, from the postings
        (after `fresh`; a token's read now if not kept, and kept); None when that is not certain
        (see `_posting`) or a row has no length, and the caller reads the rows' text instead."""
        import numpy as np  # see `memgit.index.resident.Resident.nearest`

        if not self.valid or self.docs is None:
            return None
        self._take_loaded()
        wanted = np.array(list(rows), dtype=np.int64)
        at = np.searchsorted(self.docs, wanted)
        if len(wanted) and (at.max() >= len(self.docs) or not np.array_equal(self.docs[at], wanted)):
            return None
        out: dict[int, set[str]] = {int(row): set() for row in wanted}
        for token in tokens:
            positions = self._posting(conn, token)[0]
            if not self.valid:
                return None
            if not len(positions):
                continue
            # A token's positions ascend (`_parse`): a binary search each for the few rows asked
            # about, not `np.isin`'s sort of thousands.
            near = np.minimum(np.searchsorted(positions, at), len(positions) - 1)
            for row in wanted[positions[near] == at].tolist():
                out[row].add(token)
        return out

    def _read(self, conn: Any, seen: Any, weights: tuple[float, ...]) -> None:
        import numpy as np  # see `memgit.index.resident.Resident.nearest`

        sizes = conn.execute(f"SELECT id, sz FROM {DOCSIZE} ORDER BY id").fetchall()
        self.docs = np.array([r[0] for r in sizes], dtype=np.int64)
        lengths = np.array([float(sum(_varints(r[1]))) for r in sizes], dtype=np.float64)
        totals = conn.execute("SELECT block FROM memories_fts_data WHERE id = 1").fetchone()
        counts = (_varints(totals[0]) if totals and totals[0] else []) or [0]  # an empty table: no block
        self.n_rows, self.n_tokens = counts[0], sum(counts[1:])
        # k1 * (1 - b + b * D / avgdl), each row's, evaluated as fts5_aux.c writes it
        avgdl = float(self.n_tokens) / float(self.n_rows) if self.n_rows else 1.0
        self.norms = K1 * (1 - B + B * lengths / avgdl)
        names = [r[1] for r in conn.execute("PRAGMA table_info(memories_fts)")]
        self.columns = {name: n for n, name in enumerate(names)}
        self.stamp, self.weights, self.terms, self.held, self.valid = seen, weights, {}, 0, True
        self.counts, self.complete = {}, False
        self._let_go()
        if len(self.docs) and max(abs(int(self.docs[0])), abs(int(self.docs[-1]))) >= 1 << 58:
            self.valid = False  # rowids too large to carry a column number (`_posting`)

    def _posting(self, conn: Any, token: str) -> tuple[Any, Any]:
        """The rows (as positions in `docs`) that hold `token` and its weighted hits in each."""
        import numpy as np  # see `memgit.index.resident.Resident.nearest`

        kept = self.terms.get(token)
        if kept is not None:
            return kept
        if self._take_loaded() and token in self.terms:
            return self.terms[token]
        if self.complete:  # every token is kept: this one is in no row
            return np.array([], dtype=np.int64), np.array([], dtype=np.float64)
        found = (None if len(self.columns) >= 15
                 else conn.execute(f"{_select(self.columns)} WHERE term = ?", (token,)).fetchone()[0])
        parsed = None if len(self.columns) >= 15 else _parse(found or "", self.docs, self.weights, len(self.columns))
        if parsed is None:
            self.valid = False  # a row with hits and no length, or not integers: let FTS5 say
            return np.array([], dtype=np.int64), np.array([], dtype=np.float64)
        if self.held + len(parsed[0]) > MAX_POSTINGS:
            self.terms, self.held, self.complete = {}, 0, False
        self.terms[token] = parsed
        self.held += len(parsed[0])
        return parsed

    # -- every token at once, on a thread ------------------------------------------------------

    def preload(self, conn: Any, *, now: bool = False) -> None:
        """Start reading every token's postings on a thread with its own connection, once a
        stamp (a file's index only); they are taken when complete and read under the same
        stamp (`_take_loaded`), so a long-lived process answers without reading postings on
        later queries. Nothing happens if that is not possible (see `_load_all`).

        `now`: read at once and to the end, a query meanwhile or not (a server starting, which
        has been asked nothing yet: `memgit.index.resident.Resident.start`); if the stamp
        moves, a later preload waits for quiet as usual."""
        if not PRELOAD or self._loading is not None or self.complete or not self.valid:
            return
        if len(self.columns) >= 15:
            return
        path = next((r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main"), "")
        if not path:
            return
        box: list[Any] = []
        gone = threading.Event()
        done = threading.Event() if now else None
        self._loading = (self.stamp, box, gone, done)
        args = (type(conn), path, self.stamp, self.docs, self.weights, dict(self.columns), box, self, gone, done)
        threading.Thread(target=_load_all, args=args, name="memgit-postings", daemon=True).start()

    def stop(self) -> None:
        """Give up a `preload` under way: its thread wakes and ends (while it waits for quiet
        it holds no connection; while it reads, it ends at its next row)."""
        self._let_go()

    def _let_go(self) -> None:
        loading, self._loading = self._loading, None
        if loading is not None:
            loading[2].set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the process's `preload` threads to end; whether this one's postings are in
        (tests, benchmarks)."""
        for thread in threading.enumerate():
            if thread.name == "memgit-postings":
                thread.join(timeout)
        return self._take_loaded()

    def _take_loaded(self) -> bool:
        """Take a finished `preload`'s postings if they were read under the current stamp."""
        if self.complete:
            return True
        loading = self._loading
        if loading is None or not loading[1]:
            return False
        stamp, box = loading[0], loading[1]
        loaded = box[0]
        if stamp != self.stamp or loaded is None:
            return False
        self.terms, self.held, self.complete = loaded, sum(len(at) for at, _ in loaded.values()), True
        return True


def _select(columns: dict[str, int], first: str = "") -> str:
    """Each token instance's row and column as one integer, row * 16 + column (15 for a column
    not named), all of a token's in one string: a common word has tens of thousands."""
    cases = " ".join(f"WHEN '{name.replace(chr(39), chr(39) * 2)}' THEN {n}" for name, n in columns.items())
    return f"SELECT {first}group_concat(doc * 16 + CASE col {cases} ELSE 15 END) FROM {INSTANCES}"


def _parse(text: str, docs: Any, weights: tuple[float, ...], n_columns: int) -> tuple[Any, Any] | None:
    """A token's `_select` string as (positions in `docs` of the rows that hold it, the
    weighted hits in each); None when a row is not in `docs` or the text is not integers."""
    import numpy as np  # see `memgit.index.resident.Resident.nearest`

    packed = _integers(text)
    if packed is None:
        return None
    rowids, column = packed >> 4, packed & 15
    column[column == 15] = -1
    # bm25() weighs a column it was given no weight for 1
    weight = np.array([*weights, *[1.0] * n_columns], dtype=np.float64)[:n_columns]
    hits = np.where(column >= 0, weight[np.maximum(column, 0)], 1.0)
    if len(rowids) and np.any(np.diff(rowids) < 0):
        order = np.argsort(rowids, kind="stable")
        rowids, hits = rowids[order], hits[order]
    starts = np.flatnonzero(np.r_[True, np.diff(rowids) != 0]) if len(rowids) else np.array([], dtype=np.int64)
    rows = rowids[starts]
    f = np.add.reduceat(hits, starts) if len(rowids) else np.array([], dtype=np.float64)
    at = np.searchsorted(docs, rows)
    if len(rows) and (at.max() >= len(docs) or not np.array_equal(docs[at], rows)):
        return None
    return at, f


def _load_all(connection: Any, path: str, stamp: Any, docs: Any, weights: tuple[float, ...],
              columns: dict[str, int], box: list[Any], book: Postings, gone: threading.Event,
              done: threading.Event | None = None) -> None:
    """Every token's postings (`_parse`) into `box[0]`, read in one snapshot of `path` that
    has the same stamp; None there when it has not, when there are more than `MAX_POSTINGS`,
    or anything fails (the tokens are then read as asked for). It reads once `book` has
    answered no query for `IDLE_SECONDS`, and when a query comes meanwhile it lets go of its
    snapshot and waits again: its ~1.5 s (10k memories) come from the time between an
    agent's prompts, not from a recall, and it never holds a snapshot open for long.

    Its connection is opened once the process is quiet, not while it waits (a process that
    opens and closes stores many times would hold one for each), and only to a file that is
    there (`mode=rw`: the index deleted meanwhile is not made again, empty, by a reader).
    With `done` (`Postings.preload` with `now`), it neither waits for quiet nor lets go for a
    query, and sets `done` when it ends, however it ends."""
    now = done is not None
    out: dict[str, tuple[Any, Any]] | None = None
    conn = None
    try:
        while True:
            if not now:
                _idle(book, box, gone)
            if conn is None:
                from urllib.parse import quote  # only once a thread reads

                conn = connection(f"file:{quote(path)}?mode=rw", uri=True, timeout=BUSY_SECONDS,
                                  isolation_level=None, check_same_thread=False)
                conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {INSTANCES} "
                             "USING fts5vocab(main, memories_fts, 'instance')")
            conn.execute("BEGIN")
            try:
                read = _read_all(conn, stamp, docs, weights, columns, book, box, now)
            finally:
                conn.execute("ROLLBACK")
            if read is not _ASKED:
                out = read
                break
    except Exception:  # noqa: BLE001 - a cache filled on the side: the tokens are read as asked for
        out = None
    finally:
        if conn is not None:
            conn.close()
        box.append(out)
        if done is not None:
            done.set()


_ASKED: Any = object()  # `_read_all` stopped: a query came


def _read_all(conn: Any, stamp: Any, docs: Any, weights: tuple[float, ...], columns: dict[str, int],
              book: Postings, box: list[Any], now: bool = False) -> Any:
    total = conn.execute("SELECT sum(doc) FROM memories_fts_vocab").fetchone()[0] or 0
    if stamps.stamp(conn, (DOCSIZE,)) != stamp or total > MAX_POSTINGS:
        return None
    loaded: dict[str, tuple[Any, Any]] = {}
    for term, text in conn.execute(f"{_select(columns, 'term, ')} GROUP BY term"):
        loading = book._loading
        if loading is None or loading[1] is not box:
            raise LookupError("the index changed or was closed: these postings are no longer wanted")
        if not now and time.monotonic() - book.asked < IDLE_SECONDS:
            return _ASKED
        parsed = _parse(text or "", docs, weights, len(columns))
        if parsed is None:
            return None
        loaded[term] = parsed
    return loaded


def _idle(book: Postings, box: list[Any], gone: threading.Event) -> None:
    """Return once `book` has answered no query for `IDLE_SECONDS`; raise when the `preload`
    this thread serves was given up (the stamp moved, the index was closed: `gone` wakes it)."""
    while True:
        loading = book._loading
        if gone.is_set() or loading is None or loading[1] is not box:
            raise LookupError("the index changed or was closed: these postings are no longer wanted")
        quiet = time.monotonic() - book.asked
        if quiet >= IDLE_SECONDS:
            return
        gone.wait(min(IDLE_SECONDS - quiet, IDLE_SECONDS) + 0.01)


def prepare(conn: Any) -> None:
    """The per-instance vocabulary the postings are read from (outside any transaction)."""
    if conn.execute("SELECT 1 FROM temp.sqlite_master WHERE name = 'resident_fts_i'").fetchone() is None:
        conn.execute(f"CREATE VIRTUAL TABLE {INSTANCES} USING fts5vocab(main, memories_fts, 'instance')")


def _integers(text: str) -> Any:
    """The comma-separated integers in `text` as int64 (numpy's C parser: a common word's
    tens of thousands in ~1 ms, a fifth of `json`); None if one is not an integer."""
    import numpy as np  # see `memgit.index.resident.Resident.nearest`

    if not text:
        return np.array([], dtype=np.int64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a partial read warns, then is caught by the count
            values = np.fromstring(text, dtype=np.int64, sep=",")
    except ValueError:
        return None
    return values if len(values) == text.count(",") + 1 else None


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (1-9 bytes, big-endian, 7 bits a byte, 8 in the ninth), as FTS5 writes
    its row lengths and totals."""
    out: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out
