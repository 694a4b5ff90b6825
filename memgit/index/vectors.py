"""The index's vectors: the embedder's lifecycle, the vector tables, and embedding what is pending.

Vectors are optional: they need sqlite-vec (loaded by path into the index's connection)
and an embedder other than "none". Whatever is missing, `reason()` says why the vector
channel is off, once on stderr, and recall works on keywords and anchors.

A memory's vector is keyed by the index's integer `doc` and stamped with the sha1 of the
text it was computed from (`memories.vec_sha`; NULL = pending). It is stored twice: the
float32 embedding in `vectors` and its sign bits in `vector_bits` (see `memgit.index.sqlite`
and, for the search, `memgit.index.channels.vector`). Both are plain tables, so deleting works
even when sqlite-vec is missing. A change that leaves the title and body alone (status,
tags, a rename) keeps the vector. The embedder's id and dimension are recorded in
`meta`; a different id drops every vector and re-embeds.

Embedding is the slow part (~35 ms of CPU per memory with MiniLM), so recall never waits
for many: "auto" embeds at most `AUTO_EMBED_MAX` pending memories during a call; past that
it starts the background job of `memgit.embedjob` (for an index opened with
`background=True`, as `memgit.open` does) or else says once to run `memgit reindex`. "all"
embeds in batches sorted by length, committing each, so an interrupted run continues where
it stopped.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from memgit.errors import MemgitError
from memgit.index import embedjob, hubs, passages, titles
from memgit.index import sqlite as sq
from memgit.index.db import Database
from memgit.index.unit import REFUSED, unit
from memgit.index.vectorcache import VectorCache, path_for

Progress = Callable[[int, int], None]

#: "auto" embeds at most this many pending memories during a call (~35 ms each, so under
#: 2 s once: a small store gets its vectors on its first recall).
AUTO_EMBED_MAX = 48
#: Memories embedded per transaction by "all": an interrupted run loses at most one batch.
EMBED_BATCH = 32
#: Characters of a memory (and of a query) given to the embedder; it reads 128 tokens.
EMBED_CHARS = 2000
#: `meta` key set once every long memory's passages and every memory's title vector
#: (`memgit.index.titles`) are embedded (cleared by any vector stored or deleted, and by any
#: changed memory), so that a recall's "auto" step does not look for pending ones. Named
#: anew when the title lane came: an index that had its passages still gets its titles.
PASSAGES_DONE = "passages_titles_done"
OFF = 'embeddings are turned off (embedder = "none")'
#: An embedder that failed to load is tried again after this long (by a long-lived process).
RETRY_LOAD_SECONDS = 600.0
#: Query vectors kept by text (384 floats: 1.5 KB each).
QUERY_CACHE = 256
#: The embedder's intra-op threads in a long-lived process (an MCP server, one `memgit.open`
#: used for many recalls): MiniLM on 2 cores embeds a query in ~12 ms instead of ~19 ms (median
#: of a store's queries, load ~0.8), with the same vectors bit for bit. A hook or a CLI call,
#: which embeds one query beside the agent, keeps 1.
QUERY_THREADS = 2


def embed_text(title: str, body: str) -> str:
    """What is embedded for a memory."""
    return f"{title}\n{body}"[:EMBED_CHARS]


def text_sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True)
class VectorUse:
    """Whether a search used vectors and, if not (or not for every candidate), why.

    `state`: "used"; "partial" (used, but some candidates have no vector yet); "pending" (no
    memory has a vector yet); "disabled" (embedder "none"); "failed" (the embedder could not
    load, or gave no usable vector for the query); "unavailable" (sqlite-vec missing, the index
    in memory). `detail` says it in words.
    """

    state: str = "used"
    detail: str | None = None

    @property
    def used(self) -> bool:
        return self.state in ("used", "partial")

    def to_dict(self) -> dict[str, Any]:
        return {"used": self.used, "state": self.state, **({"why": self.detail} if self.detail else {})}


class Vectors:
    """The vector side of one index (it shares the index's `Database`).

    `warm`: ask (and start) the warm embedder process for query vectors (see `memgit.warm`).
    `background`: past `AUTO_EMBED_MAX`, "auto" starts the background job (`memgit.embedjob`)
    instead of asking the user to run `memgit reindex`.
    """

    def __init__(self, db: Database, embedder_name: str, *, warm: bool = False,
                 background: bool = False, long_lived: bool = False) -> None:
        self.db = db
        #: Intra-op threads asked of the embedder once loaded (its `use_threads`, when it has
        #: one): `QUERY_THREADS` in a `long_lived` process (`Index(keep=True)`), 1 in a hook or CLI call.
        self.threads = QUERY_THREADS if long_lived else 1
        self.name = embedder_name
        self.warm = warm
        self.background = background
        self.extension: str | None = "not loaded"  # why sqlite-vec is unusable; None = loaded
        self._setup: str | None = OFF  # why vectors are off before any model is loaded
        self._embedder: Any = None
        self._failed: str | None = None  # why the embedder could not load
        self._failed_at = 0.0  # when (time.monotonic()): a long-lived process tries again later
        # Query vectors by (embedder id, text), newest last: an agent asks again (a server's
        # recall, recall retried for a task), and embedding a query is most of a recall's time.
        self._queries: OrderedDict[tuple[str | None, str], bytes] = OrderedDict()
        self._ahead: _Ahead | None = None  # a query being embedded on a thread (`prefetch`)
        self._cache: VectorCache | None = None
        self._fresh: list[int] = []  # docs embedded since the hubness values were last computed
        self.query_refused = False  # the last query embedded got no usable vector (`memgit.index.unit`)

    @property
    def conn(self) -> sq.Connection:
        return self.db.conn

    def attach(self, conn: sq.Connection) -> None:
        """Load sqlite-vec into a new connection of the index (even with embedder "none":
        a changed memory must still lose its old vector)."""
        db = self.db
        self.extension = "the index is in memory" if db.in_memory else sq.load_vec(conn)
        if self.name.lower() == "none":
            self._setup = OFF
        elif db.in_memory:
            self._setup = "the index is in memory" + (f": {db.memory_reason}" if db.memory_reason else "")
        elif self.extension:
            db.warn_once("vec", f"vectors are off: {self.extension}; recalling from keywords and anchors")
            self._setup = self.extension
        else:
            self._setup = None

    @property
    def on(self) -> bool:
        return self._setup is None and self._failure() is None

    def reason(self) -> str | None:
        """Why the vector channel is off, or None when it is on."""
        return self._setup or self._failure()

    def failure(self) -> str | None:
        """Why the embedder could not load (None: it loaded, or was not tried, or is "none")."""
        failed = self._failure()
        return None if failed == OFF else failed

    def _failure(self) -> str | None:
        """Why the embedder could not load; forgotten after `RETRY_LOAD_SECONDS`, so that an
        open store (an MCP server) gets another chance."""
        if self._failed is not None and time.monotonic() - self._failed_at > RETRY_LOAD_SECONDS:
            self._failed = None
        return self._failed

    def pending(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM memories WHERE vec_sha IS NULL").fetchone()[0])

    # -- the embedder ------------------------------------------------------------------------

    def embedder(self) -> Any:
        """The embedder, loaded on first use; None (and vectors off) if it cannot load."""
        if self._embedder is not None or self._failure() is not None:
            return self._embedder
        from memgit.index.embedders import load_embedder  # the embedder only when vectors are on

        try:
            embedder = load_embedder(self.name)
        except MemgitError as exc:
            self._failed, self._failed_at = str(exc), time.monotonic()
            self.db.warn_once(f"embedder:{exc}", f"vectors are off: {exc}")
            return None
        if embedder is None:
            self._failed, self._failed_at = OFF, float("inf")  # "none" is a choice, not a failure
            return None
        use_threads = getattr(embedder, "use_threads", None)
        if self.threads > 1 and callable(use_threads):
            try:
                use_threads(self.threads)
            except Exception as exc:  # noqa: BLE001 - a plug-in's: it embeds on the threads it has
                self.db.warn_once(f"threads:{exc}", f"the embedder keeps its own threads ({exc})")
        self._embedder = embedder
        self._check(embedder)
        return embedder

    def _check(self, embedder: Any) -> None:
        """A new embedder id (or dimension) makes every stored vector meaningless: drop them."""
        db = self.db
        current = (str(embedder.id), str(int(embedder.dim)))
        if (db.meta("embedder_id"), db.meta("vec_dim")) == current and not self._changed():
            return
        self._queries.clear()  # a vector from the old embedder must not be reused
        self._ahead = None
        with db.transaction() as conn:
            stored = (db.meta("embedder_id"), db.meta("vec_dim"))
            if stored != current or self._changed():
                if stored[0] is not None and stored != current:
                    db.warn(f"the embedder changed ({stored[0]} -> {current[0]}); re-embedding memories")
                if stored != current:
                    conn.execute("DELETE FROM vectors")
                    conn.execute("DELETE FROM vector_bits")
                    passages.clear(conn)
                    titles.clear(conn)
                    hubs.clear(conn)
                    for key in (hubs.MEAN, hubs.COUNT, hubs.DONE, hubs.EMBEDDER):
                        db.set_meta(key, None)
                    conn.execute("UPDATE memories SET vec_sha = NULL")
                db.set_meta("embedder_id", current[0])
                db.set_meta("vec_dim", current[1])
                db.set_meta("embedder_name", self.name)

    def _changed(self) -> bool:
        """The configured embedder is not (known to be) the one the vectors came from."""
        return self.db.meta("embedder_name") != self.name

    # -- writing -----------------------------------------------------------------------------

    def delete(self, doc: int) -> None:
        """Forget one memory's vector (inside the caller's transaction)."""
        self.conn.execute("DELETE FROM vectors WHERE doc = ?", (doc,))
        self.conn.execute("DELETE FROM vector_bits WHERE doc = ?", (doc,))
        self.conn.execute("UPDATE memories SET vec_sha = NULL WHERE doc = ?", (doc,))
        passages.delete(self.conn, doc)
        titles.delete(self.conn, doc)
        hubs.delete(self.conn, doc)
        self.db.set_meta(PASSAGES_DONE, None)

    def embed_pending(self, mode: str, progress: Progress | None) -> tuple[int, int]:
        """Embed memories without a vector: "auto" (a few, else a warning) or "all".

        Returns how many were embedded and how many are still pending."""
        if self._changed() and (mode == "all" or self.pending() <= AUTO_EMBED_MAX):
            if self.embedder() is None:
                return 0, self.pending()
        pending = self.pending()
        if pending == 0:
            return self.embed_passages(mode, progress), 0
        if mode == "auto" and (pending > AUTO_EMBED_MAX or self._changed()):
            self._defer(pending)
            return 0, pending
        embedder = self.embedder()
        if embedder is None:
            return 0, pending
        embedded = 0
        order = [r[0] for r in self.conn.execute(
            "SELECT doc FROM memories WHERE vec_sha IS NULL ORDER BY length(title) + length(body), doc")]
        total = len(order)
        done = 0
        if progress:
            progress(0, total)
        for start in range(0, total, EMBED_BATCH):
            docs = order[start : start + EMBED_BATCH]
            marks = ",".join("?" * len(docs))
            rows = self.conn.execute(
                f"SELECT doc, title, body, sha FROM memories WHERE doc IN ({marks}) AND vec_sha IS NULL",
                docs).fetchall()
            if rows:
                texts = [embed_text(r[1], r[2]) for r in rows]
                embedded += self._store(rows, texts, self._vectors(embedder, texts))
            done += len(docs)
            if progress:
                progress(done, total)
        left = self.pending()
        return embedded + (self.embed_passages(mode, progress) if left == 0 else 0), left

    def embed_passages(self, mode: str, progress: Progress | None) -> int:
        """Embed the passages of long memories that have none yet (`memgit.index.passages`)
        and the title vectors missing (`memgit.index.titles`): every one with "all"; with
        "auto", only when at most `AUTO_EMBED_MAX` texts wait, else the background job does
        them. Returns how many memories got passages (title vectors are not counted: the
        report's `embedded` counts memories)."""
        if self.db.meta(passages.BITS_DONE) != "1":
            with self.db.transaction() as conn:  # once, for passages stored before their bits were
                passages.fill_bits(conn)
                self.db.set_meta(passages.BITS_DONE, "1")
        if self.db.meta(PASSAGES_DONE) == "1":
            # An index made before code memories had values, a switch of embedder, or vectors
            # stored by a process that did not compute their values.
            if not hubs.done(self.db.meta) or hubs.noted(self.conn):
                try:
                    with self.db.transaction():
                        self._note_hubs(mode)
                except self.db.driver.Error:
                    pass  # busy or read-only: recall ranks without them, and the next sync tries again
            return 0  # nothing was embedded, changed or deleted since every one was: no scan
        todo = passages.pending(self.conn)
        waiting_titles = titles.count_pending(self.conn)
        if not todo and not waiting_titles:
            with self.db.transaction():
                self.db.set_meta(PASSAGES_DONE, "1")
                self._note_share(mode)
                self._note_hubs(mode)
            return 0
        texts_of = {doc: passages.split(title, body) for doc, title, body, _sha in todo}
        waiting = sum(len(t) for t in texts_of.values()) + waiting_titles
        if mode == "auto" and waiting > AUTO_EMBED_MAX:
            self._defer(waiting)
            return 0
        embedder = self.embedder()
        if embedder is None:
            return 0
        done = 0
        total = len(todo) + waiting_titles
        if progress:
            progress(0, total)
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start : start + EMBED_BATCH]
            texts = [text for doc, *_ in batch for text in texts_of[doc]]
            vectors = self._vectors(embedder, texts) if texts else []
            with self.db.transaction() as conn:
                passages.ensure(conn)
                at = 0
                for doc, _title, _body, sha in batch:
                    # A refused passage keeps its number, with no direction: distance 1 on every path.
                    mine = [blob if blob is not None else bytes(4 * int(embedder.dim))
                            for blob in vectors[at : at + len(texts_of[doc])]]
                    at += len(texts_of[doc])
                    now = conn.execute("SELECT sha FROM memories WHERE doc = ?", (doc,)).fetchone()
                    if now is None or now[0] != sha:
                        continue  # changed meanwhile: its passages are pending again
                    passages.store(conn, doc, sha, mine)
            done += len(batch)
            if progress:
                progress(done, total)
        titled = 0
        while True:  # title vectors, a batch at a time (each batch committed: resumable)
            batch_t = titles.pending(self.conn, EMBED_BATCH)
            if not batch_t:
                break
            wanted = [text for _doc, text, _sha in batch_t if text]
            made = iter(self._vectors(embedder, wanted) if wanted else [])
            title_blobs = [(next(made) or b"") if text else b"" for _doc, text, _sha in batch_t]
            stored = 0
            with self.db.transaction() as conn:
                titles.ensure(conn)
                for (doc, _text, sha), blob in zip(batch_t, title_blobs):
                    now = conn.execute("SELECT sha FROM memories WHERE doc = ?", (doc,)).fetchone()
                    if now is None or now[0] != sha:
                        continue  # changed meanwhile: pending again
                    titles.store(conn, doc, sha, blob)
                    stored += 1
            if not stored:
                break  # every one changed under us: the next sync takes them
            titled += stored
            if progress:
                progress(done + titled, total)
        with self.db.transaction():
            self._note_share(mode)
            self._note_hubs(mode)
        return done

    def _note_share(self, mode: str) -> None:
        """Keep the share of memories with a title vector in `meta` (inside the caller's
        transaction): counting reads every row of two tables, so an "auto" step (a hook's
        sync) counts only when nothing was counted yet; "all" (reindex, import, the
        background job) counts again."""
        if mode == "all" or self.db.meta(titles.SHARE) is None:
            self.db.set_meta(titles.SHARE, f"{titles.share(self.conn):.4f}")

    def _note_hubs(self, mode: str) -> None:
        """Compute the code memories' hubness values that are missing (`memgit.index.hubs`;
        inside the caller's transaction): after every step that embedded, changed or deleted
        something, as the title share is counted. An "auto" step (a hook's, a recall's) computes
        at most `hubs.AUTO_MAX`, and once every memory has its row only for the memories this
        process embedded and those another process stored (`hubs.TODO`; more than `hubs.FEW_MAX`
        waiting besides: the background job's work, where there is one); "all" looks at every
        memory."""
        fresh, self._fresh = self._fresh, []
        # Noted besides what this process embedded: stored by another (`hubs.TODO`).
        others = hubs.noted(self.conn) - len(set(fresh))
        scan = mode == "all" or not hubs.done(self.db.meta) or others > hubs.FEW_MAX
        if (scan and mode == "auto" and (path := self._job_index()) is not None
                and hubs.waiting(self.conn, self.db.meta, self.db.set_meta) > hubs.FEW_MAX):
            # An index made before code memories had values, or more waiting than a step
            # computes: each value reads every code vector, too much for a hook's or a recall's
            # sync. The background job computes them all, at low priority.
            embedjob.start(path, self.name)
            return
        waiting = hubs.refresh(self.conn, self.db.meta, self.db.set_meta,
                               limit=None if mode == "all" else hubs.AUTO_MAX, docs=None if scan else fresh)
        self.db.set_meta(hubs.DONE, None if waiting else "1")

    def cache(self) -> VectorCache | None:
        """The vectors computed before (`memgit.index.vectorcache`), beside a file index."""
        if self._cache is None and self.db.path is not None and not self.db.in_memory:
            self._cache = VectorCache(path_for(self.db.path), self.db.driver)
        return self._cache

    def use(self, ran: bool, vectorless: int = 0) -> VectorUse:
        """Why the vector channel did not run (or ran for only some candidates)."""
        if ran:
            if vectorless:
                return VectorUse("partial", f"{vectorless} candidate(s) have no vector (embedding pending, "
                                            "or the embedder gave none usable)")
            return VectorUse()
        reason = self.reason()
        if reason is None and self.query_refused:
            return VectorUse("failed", f"the embedder gave {REFUSED} for this query")
        if reason is None:
            return VectorUse("pending", "no memory has a vector yet (embedding pending)")
        if self.name.lower() == "none":
            return VectorUse("disabled", reason)
        if self.failure() is not None:
            return VectorUse("failed", reason)
        return VectorUse("unavailable", reason)

    def close(self) -> None:
        """Close the cache's connection (the next embedding opens it again)."""
        if self._cache is not None:
            self._cache.close()

    def _vectors(self, embedder: Any, texts: list[str]) -> list[bytes | None]:
        """The texts' unit float32 vectors (`memgit.index.unit`): from the cache when computed
        before, else embedded (and kept); None for a text the embedder gave no usable vector."""
        cache = self.cache()
        shas = [text_sha(t) for t in texts]
        model = str(embedder.id)
        dim, known = int(embedder.dim), dict[str, bytes | None]()
        if cache is not None:  # an older memgit kept them as the embedder gave them: normalised here
            known.update((sha, unit(blob, dim)) for sha, blob in cache.get(model, shas, 4 * dim).items())
        missing = [i for i, sha in enumerate(shas) if sha not in known]
        if missing:
            fresh = embedder.embed([texts[i] for i in missing])
            made = {shas[i]: unit(vector, dim) for i, vector in zip(missing, fresh)}
            if cache is not None:
                cache.put(model, [(sha, blob) for sha, blob in made.items() if blob is not None])
            known.update(made)
        if refused := sum(known[sha] is None for sha in shas):
            self.db.warn_once("refused", f"the embedder {self.name} gave {REFUSED} for {refused} text(s); "
                                         "those memories are found by keywords and anchors")
        return [known[sha] for sha in shas]

    def _job_index(self) -> Path | None:
        """The index file the background job would embed for, when this index may start one."""
        return self.db.path if self.background and not self.db.in_memory else None

    def _defer(self, pending: int) -> None:
        """Too many to embed during a call: start the background job, or ask for a reindex."""
        if (path := self._job_index()) is not None:
            state = embedjob.start(path, self.name)
            if state == "started":
                self.db.warn_once("background", f"embedding {pending} memories in the background; "
                                                "recall uses keywords and anchors for them meanwhile")
            if state != "failed":
                return
            where = f" (why: {embedjob.log_path(path)})"
        else:
            where = ""
        self.db.warn_once("pending", f"{pending} memories have no vectors yet; run 'memgit reindex' "
                                     f"(recall uses keywords, anchors and the vectors it has){where}")

    def _store(self, rows: list[Any], texts: list[str], vectors: list[bytes | None]) -> int:
        """Write one batch in one transaction; returns how many were stored. A refused vector
        (None) stamps its memory embedded, with no vector: not pending until its text changes."""
        stored = 0
        with self.db.transaction() as conn:
            for (doc, _title, _body, sha), text, blob in zip(rows, texts, vectors):
                now = conn.execute("SELECT sha, vec_sha FROM memories WHERE doc = ?", (doc,)).fetchone()
                if now is None or now[0] != sha or now[1] is not None:
                    continue  # changed or embedded by another process meanwhile
                if blob is not None:
                    conn.execute("INSERT OR REPLACE INTO vectors (doc, embedding) VALUES (?, ?)", (doc, blob))
                    conn.execute(f"INSERT OR REPLACE INTO vector_bits (doc, bits) VALUES (?2, {sq.BITS_OF})",
                                 (blob, doc))
                conn.execute("UPDATE memories SET vec_sha = ? WHERE doc = ?", (text_sha(text), doc))
                self._fresh.append(doc)
                stored += 1
            if stored:
                self.db.set_meta(PASSAGES_DONE, None)  # a new long memory may need passages
        return stored

    # -- reading -----------------------------------------------------------------------------

    def query_vector(self, query: str) -> bytes | None:
        """The query's embedding as float32 bytes, or None when the channel cannot run."""
        self.query_refused = False
        if not self.on:
            return None
        if self.conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is None:
            return None  # no vectors yet (all pending): the channel cannot say anything
        text = query[:EMBED_CHARS]
        key = (self.db.meta("embedder_id"), text)
        blob = self._queries.get(key)
        if blob is not None:
            self._queries.move_to_end(key)
            return blob
        blob = self.taken(query)
        if blob is None:
            blob = self._embed_query(text)
            self._keep(key, blob)
        return blob

    def ahead(self, query: str) -> bool:
        """Whether `query` is being embedded on a thread (`prefetch`) or is kept already."""
        ahead = self._ahead
        return ahead is not None and ahead.key[1] == query[:EMBED_CHARS]

    def taken(self, query: str) -> bytes | None:
        """The vector `prefetch` computed for `query` (waiting for its thread), or None: none
        was started for it, or it failed. Touches no database and loads nothing."""
        ahead, self._ahead = self._ahead, None
        if ahead is None or ahead.key[1] != query[:EMBED_CHARS]:
            return None
        blob = ahead.result()
        self._keep(ahead.key, blob)
        for key, more in ahead.more:
            self._keep(key, more)
        return blob

    def query_vectors(self, texts: Sequence[str]) -> list[bytes] | None:
        """The embeddings of `texts` as queries, in order: those kept already (`prefetch`'s
        `also`) as they are, the rest in one call to the model; None when the vector channel
        cannot run or the embedder failed."""
        if not texts or not self.on:
            return None
        stored_id = self.db.meta("embedder_id")
        keys = [(stored_id, t[:EMBED_CHARS]) for t in texts]
        missing = [k[1] for k in dict.fromkeys(keys) if k not in self._queries]
        if missing:
            warm = self.warm and self._embedder is None and not self._changed()
            if warm:
                from memgit.index import warm as warm_mod  # sockets only when a query is embedded

                for t in missing:
                    self._keep((stored_id, t), unit(warm_mod.query_vector(self.name, t, stored_id) or b"")
                               if stored_id else None)
                missing = [k[1] for k in dict.fromkeys(keys) if k not in self._queries]
        if missing:
            embedder = self.embedder()
            if embedder is None:
                return None
            for t, blob in zip(missing, _embed_queries(embedder, missing)):
                self._keep((stored_id, t), blob)
        found = [self._queries.get(k) for k in keys]
        return None if any(b is None for b in found) else [b for b in found if b is not None]

    def _keep(self, key: tuple[str | None, str], blob: bytes | None) -> None:
        if blob is not None:
            self._queries[key] = blob
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)

    def prefetch(self, query: str, also: Sequence[str] = ()) -> None:
        """Start embedding `query` on a thread, so that it runs while the change check and the
        keyword and anchor channels do (the model and the warm embedder's socket let go of
        the GIL); `query_vector` takes it. Only with the embedder already loaded (or the warm
        embedder asked): loading it is left to `query_vector`, which may warn.

        `also`: more texts wanted right after (a question's sentences, `memgit.recall.sentences`),
        embedded on the same thread after `query` and kept for `query_vectors`; in one call when
        the embedder offers `embed_queries` (see `_embed_queries`). The warm embedder, which
        takes one text a call, leaves them to `query_vectors`."""
        if not self.on or self.conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is None:
            return
        text = query[:EMBED_CHARS]
        stored_id = self.db.meta("embedder_id")
        key = (stored_id, text)
        if key in self._queries or (self._ahead is not None and self._ahead.key == key):
            return
        embedder = self._embedder
        more = [t for t in dict.fromkeys(a[:EMBED_CHARS] for a in also)
                if t != text and (stored_id, t) not in self._queries]
        extra: list[tuple[tuple[str | None, str], bytes]] = []  # filled by the thread
        if embedder is not None:
            def work() -> bytes | None:
                blobs = _embed_queries(embedder, [text, *more])
                extra.extend(((stored_id, t), b) for t, b in zip(more, blobs[1:]) if b is not None)
                return blobs[0]
        elif self.warm and stored_id and not self._changed():
            from memgit.index import warm as warm_mod  # sockets only when a query is embedded

            def work() -> bytes | None:
                return unit(warm_mod.query_vector(self.name, text, stored_id) or b"")
        else:
            return
        self._ahead = _Ahead(key, work)
        self._ahead.more = extra  # read after `result()` has joined the thread

    def _embed_query(self, text: str) -> bytes | None:
        from memgit.index import warm as warm_mod  # sockets only when a query is embedded

        warm = self.warm and self._embedder is None and not self._changed()
        if warm:
            stored_id = self.db.meta("embedder_id")
            blob = warm_mod.query_vector(self.name, text, stored_id) if stored_id else None
            if blob is not None:
                return self._refused(unit(blob))
        embedder = self.embedder()
        if embedder is None:
            return None
        if warm:
            failed = warm_mod.spawn(self.name)  # this call paid the cold start; the next ones need not
            if failed:
                self.db.warn_once("warm", failed)
        return self._refused(unit(embedder.embed_query(text), int(embedder.dim)))

    def _refused(self, blob: bytes | None) -> bytes | None:
        """`blob`, noting (and saying once) when the embedder gave no usable query vector."""
        self.query_refused = blob is None
        if blob is None:
            self.db.warn_once("refused-query", f"the embedder {self.name} gave {REFUSED} for a query; "
                                               "it is searched by keywords and anchors")
        return blob


class _Ahead:
    """One query embedded on a thread of its own; `result()` waits for it (None if it failed:
    the caller embeds again, and says why if it fails again)."""

    def __init__(self, key: tuple[str | None, str], work: Callable[[], bytes | None]) -> None:
        self.key = key
        self._work = work
        #: More texts embedded in the same call (`Vectors.prefetch`'s `also`), set by the thread.
        self.more: list[tuple[tuple[str | None, str], bytes]] = []
        self._value: bytes | None = None
        self._thread = threading.Thread(target=self._run, name="memgit-query-vector", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except Exception:  # noqa: BLE001 - `query_vector` embeds again on this thread and reports
            self._value = None

    def result(self) -> bytes | None:
        self._thread.join()
        return self._value


def _embed_queries(embedder: Any, texts: list[str]) -> list[bytes | None]:
    """`texts` embedded as queries: in one call when the embedder offers `embed_queries` (an
    embedder behind a network call, say, where a call costs more than a text), else one
    `embed_query` each. The bundled ONNX models offer none: a batch pads every row to its
    longest text, so a question and its sentences in one batch cost more than one call each
    (MiniLM on 2 loaded cores, a question of 2-3 sentences: 80 ms against 63 ms; the
    question alone 29 ms)."""
    batch = getattr(embedder, "embed_queries", None)
    rows = batch(texts) if callable(batch) and len(texts) > 1 else [embedder.embed_query(t) for t in texts]
    return [unit(row, int(embedder.dim)) for row in rows]
