"""The SQLite index: a rebuildable cache of the memory files, searched three ways.

Files are the truth. The index lives in `<git-dir>/memgit/index.db` and holds the memories'
front-matter and body, an FTS5 table, the vector tables and an `anchors` table
(exact keys for paths, `path::symbol`, identifiers, versions). A deleted or corrupt
database is rebuilt silently (one line on stderr); a read-only or locked git dir gets a
fresh in-memory index that answers from keywords and anchors and says why.

Change detection (`sync`) needs no hook: folder mtimes plus a rolling stat, content hash
to confirm; see `memgit.index.changes` for how and what it costs.

Keyword search: FTS5 with `porter unicode61` (+2 points recall@5 over plain `unicode61`
on the development sets) and CJK pre-segmented into bigrams by `memgit.index.fts`. On
tests/data/cjk (50 memories, 30 zh/ja/ko/mixed questions), FTS5 recall@5 was: plain
`unicode61` 0.283, `trigram` 0.517, bigrams (this) 0.950; unigrams added to the bigrams
changed nothing and double the CJK postings. The channel queries are in
`memgit.index.channels`, the vectors in `memgit.index.vectors`, the connection, transactions and
corruption handling in `memgit.index.db`, the driver and schema in `memgit.index.sqlite`.

Measured on generated stores in one folder (keywords only; 2 cores shared with other
work): search p50 4-5 ms at 10k and 17 ms at 100k (p95 16 / 38 ms); recall including the
change check p50 9.4 ms at 10k, 21 ms at 100k; a whole cold `recall` process at 10k 0.12 s.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from memgit.errors import MemgitError
from memgit.index import changes, channels, embedjob, fts, titles
from memgit.index import sqlite as sq
from memgit.index.changes import Parsed, Scan, dir_of
from memgit.index.db import Database
from memgit.index.ranking import Channels
from memgit.index.resident import Resident
from memgit.index.vectors import PASSAGES_DONE, Vectors, VectorUse, embed_text, text_sha
from memgit.memory import format as fmt
from memgit.memory.anchors import extract_anchors, normalize_anchor
from memgit.memory.format import Memory
from memgit.store.folder import Store, copy_id_for

Warn = Callable[[str], None]
Progress = Callable[[int, int], None]


def _stderr(message: str) -> None:
    print(f"memgit: {message}", file=sys.stderr)


@dataclass
class SyncReport:
    """What one `sync` did. `problems` are the files skipped this time: no text could be read
    (`sync` warns about every skipped file on every command until it is fixed)."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    problems: list[str] = field(default_factory=list)
    embedded: int = 0
    pending_vectors: int = 0
    checked: int = 0  # files stat'ed
    full: bool = False
    seconds: float = 0.0

    @property
    def touched(self) -> int:
        return self.added + self.changed + self.removed


@dataclass(frozen=True)
class Found:
    """What `Index.search` found: the three channels and the ids the query names exactly;
    `vectors`, whether the vector channel ran; `passages`, for a long memory whose passage
    gave its vector strength, that passage's number (`memgit.index.passages`); `title_share`,
    the share of the store's vectors that have a title vector (`memgit.index.titles.share`)."""

    channels: Channels
    exact: tuple[str, ...] = ()
    vectors: VectorUse = VectorUse()
    passages: dict[str, int] = field(default_factory=dict)
    title_share: float = 0.0


class Index:
    """The index of one memory folder. See the module docstring for how it keeps in step."""

    def __init__(self, db_path: Path | None, store: Store, embedder_name: str = "minilm", warn: Warn = _stderr,
                 *, warm: bool = False, background: bool = False, keep: bool = True) -> None:
        self.store = store
        self.root = Path(store.root)
        self.db_path = db_path
        self.embedder_name = embedder_name.strip() or "none"
        self.warn = warn
        self.db = Database(db_path, warn)
        # `warm`: use (and start) the warm embedder process (memgit.warm); `background`: embed
        # many pending memories in a background job (memgit.embedjob).
        self.vectors = Vectors(self.db, self.embedder_name, warm=warm, background=background, long_lived=keep)
        self.db.on_connect = self.vectors.attach
        self._qtok: Any = None  # the connection that has the temp.qtok table
        # What a long-lived process keeps while it recalls (`keep`); a hook or the CLI keeps none.
        self.resident: Resident | None = Resident() if keep else None
        self._skip_warned: set[tuple[str, str]] = set()
        self._copy_of: dict[str, str] = {}  # during `_apply`: see there
        self._demoted: list[str] = []
        self.db.open()

    @property
    def conn(self) -> sq.Connection:
        return self.db.conn

    @property
    def in_memory(self) -> bool:
        """True when the index could not use its file and answers from a fresh in-memory one."""
        return self.db.in_memory

    @property
    def memory_reason(self) -> str | None:
        return self.db.memory_reason

    def close(self) -> None:
        """Close the database; the index cannot be used afterwards."""
        self.db.close()
        self.vectors.close()
        if self.resident is not None:
            self.resident.close()

    @property
    def vectors_on(self) -> bool:
        return self.vectors.on

    def vectors_reason(self) -> str | None:
        """Why the vector channel is off, or None when it is on."""
        return self.vectors.reason()

    # -- sync ------------------------------------------------------------------------------

    def sync(self, *, embed: str = "auto", progress: Progress | None = None,
             full: bool = False, rolling: bool = True) -> SyncReport:
        """Bring the index in step with the files; see the module docstring.

        `embed`: "auto" embeds pending memories when there are at most `AUTO_EMBED_MAX` of
        them (else starts the background job of `memgit.embedjob` for an index opened with
        `background=True`, or warns once and leaves them to `memgit reindex`), "all" embeds every
        pending memory in committed batches (resumable) calling `progress(done, total)`,
        "none" never embeds. `full=True` stats every file instead of trusting folder mtimes;
        `rolling=False` leaves out the rolling stat for in-place edits (right after memgit's own
        write, which is all such a sync is for).
        """
        if embed not in ("auto", "all", "none"):
            raise MemgitError(f"embed must be auto, all or none, not {embed!r}")
        started = time.perf_counter()
        report = SyncReport(full=full)
        try:
            self.db.guard(lambda: self._sync_files(report, full, rolling))
        except self.db.driver.Error as exc:  # busy past the timeout, read-only: answer from what we have
            self.db.warn_once(f"sync:{exc}",
                              f"could not update the index ({exc}); answering from the last update")
        self._warn_skipped()
        self._embed_step(report, embed, progress)
        report.seconds = time.perf_counter() - started
        return report

    def _warn_skipped(self) -> None:
        """Say which files are no memory at all (no text could be read), once per command
        (per `Index`), on every command until they are fixed: such a file is invisible
        otherwise. Files with lesser problems are indexed; `memgit lint` reports those."""
        try:
            rows = self.conn.execute(
                "SELECT rel, problem FROM files WHERE memory_id IS NULL AND problem IS NOT NULL "
                "ORDER BY rel").fetchall()
        except self.db.driver.Error:
            return
        for rel, problem in rows:
            if (rel, problem) not in self._skip_warned:
                self._skip_warned.add((rel, problem))
                self.warn(f"skipping {problem} (see 'memgit lint')")

    def _embed_step(self, report: SyncReport, embed: str, progress: Progress | None) -> None:
        if embed != "none" and self.vectors_on and not self.in_memory:
            try:
                report.embedded, report.pending_vectors = self.db.guard(
                    lambda: self.vectors.embed_pending(embed, progress))
            except self.db.driver.Error as exc:
                self.db.warn_once(f"embed:{exc}", f"could not store vectors ({exc})")

    def refresh(self, memory_ids: list[str]) -> bool:
        """Re-read the files of `memory_ids` that changed on disk since the index read them
        (recall's hits, before they are answered); True when a memory changed or went."""
        report = SyncReport()
        try:
            self.db.guard(lambda: self._sync_files(report, False, only=memory_ids))
        except self.db.driver.Error:
            return False  # busy or read-only: answer from the last update, as sync does
        return report.touched > 0

    def _sync_files(self, report: SyncReport, full: bool, rolling: bool = True,
                    only: list[str] | None = None) -> None:
        seen = self.db.meta("last_sync")  # moves with every sync any process applies
        scan, parsed = self._scan(full, rolling, only)
        report.checked = scan.checked
        if not scan:
            if scan.cursor is not None or scan.rolled is not None:
                self._write_cursor(scan.cursor, scan.rolled)
            return
        with self.db.transaction():
            if self.db.meta("last_sync") != seen:
                # Another process applied a sync since this scan began: the scan may hold what
                # that one has since undone. Look again, now that no one else can write.
                scan, parsed = self._scan(full, rolling, only)
            self._apply(scan, parsed, report)
            if scan.cursor is not None:
                self.db.set_meta("cursor", scan.cursor)
            if scan.rolled is not None:
                self.db.set_meta("rolled", repr(scan.rolled))
            self.db.set_meta("last_sync", str(time.time()))

    def _scan(self, full: bool, rolling: bool = True,
              only: list[str] | None = None) -> tuple[Scan, list[Parsed]]:
        """What changed in the folder (or in the files of the memories `only`), and the changed
        files parsed (a file gone is removed)."""
        detector = changes.Detector(self.db, self.store)
        scan = detector.detect(full, rolling=rolling) if only is None else detector.detect_files(only)
        now = time.time_ns()
        parsed: list[Parsed] = []
        for rel in sorted(scan.changed):
            item = detector.read(rel, scan.changed[rel], now)
            if item is None:
                scan.removed.add(rel)
            else:
                parsed.append(item)
        return scan, parsed

    def _write_cursor(self, cursor: str | None, rolled: float | None) -> None:
        """Where the rolling stat stopped and when it ran, in one statement (one write)."""
        values = [(k, v) for k, v in (("cursor", cursor), ("rolled", None if rolled is None else repr(rolled)))
                  if v is not None]
        self.conn.execute("PRAGMA busy_timeout = 50")  # never wait long just for the cursor
        try:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES "
                              + ", ".join("(?, ?)" for _ in values), [x for kv in values for x in kv])
        except self.db.driver.OperationalError:
            pass  # busy or read-only: the next call moves on from the old cursor
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {sq.BUSY_TIMEOUT_MS}")

    def _apply(self, scan: Scan, parsed: list[Parsed], report: SyncReport) -> None:
        conn = self.conn
        row = conn.execute("SELECT value FROM meta WHERE key = 'copies'").fetchone()
        # rel -> the id a copied file declares; it is indexed under its path id (Store.load).
        self._copy_of = json.loads(row[0]) if row and row[0] else {}
        self._demoted = []
        orphans: set[str] = set()  # memory ids whose file went away, unless re-claimed below
        for rel in sorted(scan.removed):
            row = conn.execute("SELECT memory_id, problem FROM files WHERE rel = ?", (rel,)).fetchone()
            conn.execute("DELETE FROM files WHERE rel = ?", (rel,))
            self._copy_of.pop(rel, None)
            if row and row[0] and not row[1]:
                orphans.add(row[0])
        for rel_dir in scan.dirs_removed:
            conn.execute("DELETE FROM dirs WHERE rel = ?", (rel_dir,))
        conn.executemany("INSERT OR REPLACE INTO dirs(rel, mtime_ns) VALUES (?, ?)", scan.dirs.items())

        queue = list(parsed)
        retried: set[str] = set()
        while True:
            for item in queue:
                self._apply_file(item, orphans, report)
            gone: set[str] = set()
            for memory_id in sorted(orphans):
                row = conn.execute("SELECT doc, rel FROM memories WHERE id = ?", (memory_id,)).fetchone()
                if row and conn.execute(
                        "SELECT 1 FROM files WHERE rel = ? AND memory_id = ? AND problem IS NULL",
                        (row[1], memory_id)).fetchone() is None:
                    self._delete_doc(row[0])
                    gone.add(memory_id)
                    report.removed += 1
            orphans.clear()
            # A copy whose original went away now owns its id, and an original found after its
            # copy demotes the copy: read those files again.
            again = [rel for rel, declared in self._copy_of.items() if declared in gone] + self._demoted
            self._demoted = []
            again += [rel for (rel,) in conn.execute(
                    "SELECT rel FROM files WHERE problem IS NOT NULL AND memory_id IS NOT NULL "
                    "AND memory_id NOT IN (SELECT id FROM memories) ORDER BY rel").fetchall()]
            queue = []
            for rel in sorted(set(again) - retried):
                retried.add(rel)
                self._forget_file(rel)
                st = changes.stat(self.root / rel)
                reread = changes.Detector(self.db, self.store).read(rel, st, time.time_ns()) if st else None
                if reread is not None:
                    queue.append(reread)
            if not queue:
                break
        self.db.set_meta("copies", json.dumps(self._copy_of, sort_keys=True) if self._copy_of else None)

    def _forget_file(self, rel: str) -> None:
        """Drop what the index holds for one file, so that reading it again starts afresh."""
        row = self.conn.execute("SELECT memory_id, problem FROM files WHERE rel = ?", (rel,)).fetchone()
        if row and row[0] and not row[1]:
            doc = self.conn.execute("SELECT doc FROM memories WHERE id = ? AND rel = ?", (row[0], rel)).fetchone()
            if doc:
                self._delete_doc(doc[0])
        self.conn.execute("DELETE FROM files WHERE rel = ?", (rel,))
        self._copy_of.pop(rel, None)

    def _apply_file(self, item: Parsed, orphans: set[str], report: SyncReport) -> None:
        conn = self.conn
        before = conn.execute("SELECT sha, memory_id, problem FROM files WHERE rel = ?", (item.rel,)).fetchone()
        if before and before[0] == item.sha and item.sha and not before[2]:
            # Same bytes, new stat (a touch, a checkout of identical content): nothing to re-index.
            conn.execute("UPDATE files SET size = ?, mtime_ns = ?, ino = ? WHERE rel = ?",
                         (*item.stat, item.rel))
            return
        self._copy_of.pop(item.rel, None)
        if before and before[1] and not before[2]:
            orphans.add(before[1])  # this file held that memory; it may hold another now
        memory_id: str | None = None
        problem: str | None = None
        memory = item.memory
        if memory is None:  # no text at all: `sync` warns about it on every command (see _warn_skipped)
            problem = "; ".join(item.problems) or f"{item.rel}: unreadable"
            report.problems.extend(item.problems)
        else:
            memory_id = memory.id
            row = conn.execute("SELECT doc, rel, vec_sha FROM memories WHERE id = ?", (memory.id,)).fetchone()
            owner_alive = row is not None and row[1] != item.rel and conn.execute(
                "SELECT 1 FROM files WHERE rel = ? AND memory_id = ? AND problem IS NULL",
                (row[1], memory.id)).fetchone() is not None
            if owner_alive and self.store.original([row[1], item.rel], memory.id) == item.rel:
                self._forget_file(row[1])  # that file is a copy of this one: read it again as one
                self._demoted.append(row[1])
                row, owner_alive = None, False
            elif owner_alive and (copy_id := copy_id_for(item.rel, lambda candidate: conn.execute(
                    "SELECT 1 FROM memories WHERE id = ? AND rel != ?", (candidate, item.rel)).fetchone() is not None)):
                self._copy_of[item.rel] = memory.id  # a copy: indexed under its path id (Store.load)
                memory = replace(memory, id=copy_id)
                memory_id = memory.id
                row = conn.execute("SELECT doc, rel, vec_sha FROM memories WHERE id = ?", (memory.id,)).fetchone()
                owner_alive = False
            if owner_alive:
                problem = f"{item.rel}: duplicate id {memory.id!r} (also in {row[1]}); give one a new id"
                if not (before and before[0] == item.sha):
                    self.warn(f"skipping {problem} (see 'memgit lint')")
                report.problems.append(problem)
            else:
                self._upsert(memory, item, row)
                orphans.discard(memory.id)
                if row is None and not before:
                    report.added += 1
                else:
                    report.changed += 1
        conn.execute(
            "INSERT OR REPLACE INTO files(rel, dir, size, mtime_ns, ino, sha, memory_id, problem) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (item.rel, dir_of(item.rel), *item.stat, item.sha, memory_id, problem))

    def _upsert(self, m: Memory, item: Parsed, row: Sequence[Any] | None) -> None:
        conn = self.conn
        values = {
            "id": m.id, "rel": item.rel, "title": m.title, "title_key": m.title.strip().casefold(),
            "kind": m.kind, "entity": m.entity, "confidence": m.confidence, "source": m.source,
            "task_id": m.task_id, "created": m.created, "updated": m.updated,
            "tags": json.dumps(list(m.tags), ensure_ascii=False),
            "files": json.dumps(list(m.files), ensure_ascii=False),
            "symbols": json.dumps(list(m.symbols), ensure_ascii=False),
            "supersedes": json.dumps(list(m.supersedes), ensure_ascii=False),
            "status": m.status, "expires": m.expires,
            # `pinned` rides in the extra column: no schema change, and an index built before
            # the field existed already holds it there.
            "extra": json.dumps({**m.extra, **({"pinned": True} if m.pinned else {})}, ensure_ascii=False, default=str),
            "body": m.body, "sha": item.sha,
        }
        new_text_sha = text_sha(embed_text(m.title, m.body))
        if row is None:
            columns = ", ".join(values)
            marks = ", ".join("?" * len(values))
            doc = conn.execute(f"INSERT INTO memories({columns}) VALUES ({marks})", tuple(values.values())).lastrowid
        else:
            doc, vec_sha = row[0], row[2]
            sets = ", ".join(f"{k} = ?" for k in values)
            conn.execute(f"UPDATE memories SET {sets} WHERE doc = ?", (*values.values(), doc))
            conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (doc,))
            conn.execute("DELETE FROM anchors WHERE doc = ?", (doc,))
            if vec_sha is not None and vec_sha != new_text_sha:
                self.vectors.delete(doc)
            else:
                self.db.set_meta(PASSAGES_DONE, None)  # its passages or title vector may be out of date
        conn.execute(
            "INSERT INTO memories_fts(rowid, title, body, tags, entity) VALUES (?, ?, ?, ?, ?)",
            (doc, fts.indexed(m.title), fts.segment(m.body), fts.indexed(" ".join(m.tags)),
             fts.indexed(" ".join((m.entity, *m.files, *m.symbols)))))
        keys = {normalize_anchor(a) for a in extract_anchors(m.title, m.entity, *m.files, *m.symbols, m.body)}
        keys.update(normalize_anchor(a) for a in (*m.files, *m.symbols) if a)
        keys.discard("")
        conn.executemany("INSERT INTO anchors(anchor_key, doc) VALUES (?, ?)", ((k, doc) for k in sorted(keys)))

    def _delete_doc(self, doc: int) -> None:
        conn = self.conn
        row = conn.execute("SELECT vec_sha FROM memories WHERE doc = ?", (doc,)).fetchone()
        if row and row[0] is not None:
            self.vectors.delete(doc)
        conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (doc,))
        conn.execute("DELETE FROM anchors WHERE doc = ?", (doc,))
        conn.execute("DELETE FROM memories WHERE doc = ?", (doc,))

    def embed_pending(self, progress: Progress | None = None) -> SyncReport:
        """Bring the index in step with the files and embed every memory still without a
        vector, in committed batches (resumable), calling `progress(done, total)`: what
        `import` does once its memories are committed."""
        return self.sync(embed="all", progress=progress)

    # -- rebuild ---------------------------------------------------------------------------

    def rebuild(self, progress: Progress | None = None, *, embed: str = "all") -> SyncReport:
        """Read every file again, re-index it, then embed every memory that lacks a vector.

        A memory whose text did not change keeps its vector, so an interrupted reindex
        continues where it stopped and nothing is embedded twice; a changed embedder id
        still re-embeds everything. (A corrupt database is deleted and rebuilt instead.)
        `progress(done, total)` reports the embedding.
        """
        started = time.perf_counter()

        def forget_files() -> None:
            with self.db.transaction() as conn:
                conn.execute("DELETE FROM files")
                conn.execute("DELETE FROM dirs")
                self.db.set_meta("cursor", None)
                self.db.set_meta("copies", None)

        self.db.guard(forget_files)
        report = self.sync(embed="none", full=True)

        def prune() -> None:  # memories no file claims any more
            with self.db.transaction() as conn:
                for (doc,) in conn.execute(
                        "SELECT doc FROM memories WHERE id NOT IN (SELECT memory_id FROM files "
                        "WHERE problem IS NULL AND memory_id IS NOT NULL)").fetchall():
                    self._delete_doc(doc)
                    report.removed += 1

        self.db.guard(prune)
        self._embed_step(report, embed, progress)
        report.full = True
        report.seconds = time.perf_counter() - started
        return report

    # -- search ----------------------------------------------------------------------------

    def search(self, query: str, *, limit: int = 50, include_archived: bool = False,
               task_id: str | None = None, kinds: Sequence[str] | None = None) -> Found:
        """Candidates for `query` from each channel, strengths absolute in [0, 1].

        `task_id` keeps that task's memories and those with no task; `kinds` keeps those
        kinds. A channel that cannot run is None (no vectors; for anchors, a query that
        names no path, symbol or identifier); one that ran and found nothing is empty.
        `exact` lists memories whose id equals the query, or whose title equals it
        ignoring case; `channels.vectorless`, the keyword and anchor candidates with no
        vector yet. See `memgit.index.channels` for each channel's strength.
        """
        found: Found = self.db.guard(lambda: self._search(query, limit, include_archived, task_id, kinds))
        return found

    def _search(self, query: str, limit: int, include_archived: bool, task_id: str | None,
                kinds: Sequence[str] | None) -> Found:
        query = query.replace("\0", " ")
        where, args = channels.filter_sql(include_archived, task_id, kinds)
        limit = max(1, min(int(limit), 1000))
        # A query embedded on a thread (`prefetch`) is taken after the keyword and anchor
        # channels, which run meanwhile; else it is embedded now (this may load the model:
        # before the snapshot).
        ahead = self.vectors.ahead(query)
        query_vector = None if ahead else self.vectors.query_vector(query)
        if self._qtok is not self.conn:
            channels.prepare(self.conn)
            self._qtok = self.conn
        if self.resident is not None:  # outside the snapshot, which rolls back what it makes
            try:
                self.resident.watch(self.conn)
            except self.db.driver.OperationalError:
                self.resident = None  # nothing kept when it cannot
        # One read transaction: every channel sees the same snapshot, even while another
        # process is syncing (WAL), so counts and postings agree.
        passage_of: dict[str, int] = {}
        failed = False
        with self.db.snapshot() as conn:
            keyword = channels.keyword(conn, query, limit, where, args, self.resident)
            anchor = channels.anchor(conn, query, limit, where, args)
            if ahead:
                query_vector = self.vectors.taken(query)
                failed = query_vector is None
            if not failed:
                vector = (None if query_vector is None
                          else channels.vector(conn, query_vector, limit, where, args, task_id, passage_of,
                                               self.resident))
                among = [mid for found in (keyword, anchor, vector) for mid, _ in found or ()]
                lane = (None if query_vector is None
                        else channels.title(conn, query_vector, limit, where, args, among))
                share = 0.0 if lane is None else titles.stored_share(self.db.meta(titles.SHARE))
                exact = channels.exact(conn, query, where, args)
                others = [mid for found in (keyword, anchor) for mid, _ in found or ()]
                vectorless = frozenset() if vector is None else channels.vectorless(conn, others)
                titleless = (frozenset() if lane is None else titles.without(
                    conn, [mid for mid in dict.fromkeys([*others, *(m for m, _ in vector or ())])
                           if mid not in vectorless]))
        if failed:  # the thread failed: again, embedding on this thread before the snapshot
            return self._search(query, limit, include_archived, task_id, kinds)
        use = self.vector_use(query_vector is not None, len(vectorless))
        return Found(Channels(keyword=keyword, vector=vector, anchor=anchor, title=lane,
                              vectorless=vectorless, titleless=titleless), exact, use, passage_of, share)

    def prefetch(self, query: str, also: Sequence[str] = ()) -> None:
        """Start embedding `query` (and in the same call `also`) for the `search` that follows
        (see `Vectors.prefetch`); call it before `sync`, which then runs while the model works."""
        self.db.guard(lambda: self.vectors.prefetch(query.replace("\0", " "),
                                                    [a.replace("\0", " ") for a in also]))

    def vector_use(self, ran: bool, vectorless: int = 0) -> VectorUse:
        """Why the vector channel did not run (or ran for only some candidates)."""
        return self.vectors.use(ran, vectorless)

    # -- reading memories -----------------------------------------------------------------

    _COLUMNS = ("id, rel, title, kind, entity, confidence, source, task_id, created, updated, "
                "tags, files, symbols, supersedes, status, expires, extra, body")

    def all_memories(self) -> list[tuple[Memory, int]]:
        """Every indexed memory, with its file's mtime in ns (for `memgit list`)."""
        cols = ", ".join("m." + c.strip() for c in self._COLUMNS.split(","))
        rows = self.db.guard(lambda: self.conn.execute(
            f"SELECT {cols}, f.mtime_ns FROM memories m LEFT JOIN files f ON f.rel = m.rel").fetchall())
        return [(_row_memory(row[:-1]), int(row[-1] or 0)) for row in rows]

    def memory(self, memory_id: str) -> Memory:
        """The memory `memory_id` as indexed (no file read); MemgitError if unknown."""
        found = self.memories([memory_id])
        if memory_id not in found:
            raise MemgitError(f"no memory {memory_id!r} in the index; 'memgit list' shows the ids")
        return found[memory_id]

    def memories(self, ids: Iterable[str]) -> dict[str, Memory]:
        """The indexed memories among `ids`, by id."""
        ids = list(dict.fromkeys(ids))

        def read() -> dict[str, Memory]:
            out: dict[str, Memory] = {}
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT {self._COLUMNS} FROM memories WHERE id IN ({marks})"
                for row in self.conn.execute(sql, chunk):
                    out[row[0]] = _row_memory(row)
            return out

        return self.db.guard(read)

    _LOOKUPS = {
        "id": ("id = ?", lambda ref: (ref,)),
        "prefix": ("substr(id, 1, ?) = ?", lambda ref: (len(ref), ref)),  # LIKE ignores case
        "title": ("title = ?", lambda ref: (ref,)),
        "title_nocase": ("lower(title) = lower(?)", lambda ref: (ref,)),
    }

    def lookup(self, ref: str, how: str) -> list[tuple[str, str]]:
        """`(id, path)` of up to 9 memories whose id is `ref` (`how="id"`), whose id starts
        with it ("prefix"), or whose title equals it ("title", "title_nocase")."""
        where, args = self._LOOKUPS[how]
        rows = self.db.guard(lambda: self.conn.execute(
            f"SELECT id, rel FROM memories WHERE {where} ORDER BY id LIMIT 9", args(ref)).fetchall())
        return [(str(r[0]), str(r[1])) for r in rows]

    def same_text(self, title: str, body: str) -> list[Memory]:
        """Active memories whose text is `title` + `body` up to case, spacing and end
        punctuation (`memory.normalized_text`), found through the title index."""
        key = fmt.normalized_text(title, body)
        title_key = title.strip().casefold()
        # Without a body, end punctuation of the title does not count: "Use X." is "Use X".
        stem = title_key.rstrip(" .!;:") if not body.strip() else title_key
        rows = self.db.guard(lambda: self.conn.execute(
            f"SELECT {self._COLUMNS} FROM memories WHERE title_key >= ? AND title_key < ? AND status = 'active'",
            (stem, stem + "\U0010ffff")).fetchall())
        return [m for m in map(_row_memory, rows) if fmt.normalized_text(m.title, m.body) == key]

    # -- status ----------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """What the index holds and which channels work, for `memgit status`."""
        def counts() -> dict[str, Any]:
            def one(sql: str) -> int:
                return int(self.conn.execute(sql).fetchone()[0])

            return {
                "memories": one("SELECT count(*) FROM memories"),
                "active": one("SELECT count(*) FROM memories WHERE status = 'active'"),
                "archived": one("SELECT count(*) FROM memories WHERE status != 'active'"),
                "vectors": one("SELECT count(*) FROM memories WHERE vec_sha IS NOT NULL"),
                "pending_vectors": one("SELECT count(*) FROM memories WHERE vec_sha IS NULL"),
                "anchors": one("SELECT count(DISTINCT anchor_key) FROM anchors"),
                "skipped_files": one("SELECT count(*) FROM files WHERE problem IS NOT NULL"),
                "embedder_id": self.db.meta("embedder_id"),
                "last_sync": self.db.meta("last_sync"),
                "schema_version": sq.user_version(self.conn),
            }
        data = self.db.guard(counts)
        if not self.vectors_on or self.in_memory:
            data["pending_vectors"] = 0
        pid = embedjob.running(self.db_path) if self.db_path is not None and not self.in_memory else None
        job = "no" if pid is None else f"running (pid {pid})"
        last = data.pop("last_sync")
        embedder_id, schema_version = data.pop("embedder_id"), data.pop("schema_version")
        reason = self.vectors_reason()
        return {
            "db_path": None if self.in_memory else str(self.db_path),
            "in_memory": self.in_memory,
            "in_memory_reason": self.memory_reason,
            **data,
            "embedder": self.embedder_name,
            "embedder_id": embedder_id,
            "vectors_on": reason is None,
            "vectors_reason": reason,
            "channels": ["keyword", "anchor"] + (["vector", "title"] if reason is None else []),
            "embedding_in_background": job,
            "fts_tokenizer": sq.FTS_TOKENIZER + " + CJK bigrams",
            "size_bytes": self.db.size_bytes(),
            "last_sync": float(last) if last else None,
            "schema_version": schema_version,
        }


def _row_memory(row: Sequence[Any]) -> Memory:
    (mid, rel, title, kind, entity, confidence, source, task_id, created, updated,
     tags, files, symbols, supersedes, status, expires, extra, body) = row
    extra = json.loads(extra or "{}")
    pinned = extra.pop("pinned", False) is True
    return Memory(
        id=mid, title=title, body=body or "", kind=kind or "fact", entity=entity or "",
        confidence=float(confidence if confidence is not None else 0.5), source=source or "user",
        task_id=task_id, created=created, updated=updated,
        tags=tuple(json.loads(tags or "[]")), files=tuple(json.loads(files or "[]")),
        symbols=tuple(json.loads(symbols or "[]")), supersedes=tuple(json.loads(supersedes or "[]")),
        status=status, expires=expires, pinned=pinned, extra=extra, path=rel,
    )

