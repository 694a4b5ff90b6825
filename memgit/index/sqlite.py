"""SQLite for the index: the driver, the sqlite-vec extension, and the schema.

The recall path opens the database with a bare connection and only reads
`PRAGMA user_version`; `sqlite_utils` (about 160 ms to import) is imported only when the
schema has to be created or migrated. The driver is `pysqlite3` when installed (it can
load extensions and has FTS5), else the standard library's `sqlite3`. sqlite-vec is loaded
from its file, found without importing the `sqlite_vec` package (that import pulls in
numpy typing, ~100 ms).

Vectors live in two plain tables, not in a sqlite-vec `vec0` table: `vectors` holds each
memory's float32 embedding (the truth) and `vector_bits` its sign bits
(`vec_quantize_binary`) for a hamming pre-selection; sqlite-vec's scalar functions do the
arithmetic (see `memgit.index.channels.vector`). vec0 0.1.9 was too slow for that two-stage
search: its KNN costs O(rows x k) (hamming top-500 over 100k: 68 ms), and a rowid lookup
costs 25-180 us, so rescoring 500 candidates took 12-90 ms; on a plain table it is ~1 ms.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from types import ModuleType
from typing import Any

#: Bump when the schema changes; `migrate()` takes any older index up to it.
SCHEMA_VERSION = 6
#: Milliseconds a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_MS = 5000
#: FTS5 columns and their bm25() weights: a word in the title counts three times one in the body.
FTS_COLUMNS = ("title", "body", "tags", "entity")
FTS_WEIGHTS = (3.0, 1.0, 2.0, 2.0)
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
#: The vector tables, keyed by `memories.doc`. `bits` is NULL when the dimension is not a
#: multiple of 8 (vec_quantize_binary needs that); such vectors are only searched exactly.
VECTOR_TABLES = (
    "CREATE TABLE vectors (doc INTEGER PRIMARY KEY, embedding BLOB NOT NULL)",
    "CREATE TABLE vector_bits (doc INTEGER PRIMARY KEY, bits BLOB)",
)
#: The memories that supersede others, few: what recall's "superseded" filter reads.
SUPERSEDING_INDEX = ("CREATE INDEX IF NOT EXISTS memories_superseding ON memories (supersedes) "
                     "WHERE supersedes <> '[]'")
#: Memories by entity: the session link every recall follows (`memgit.recall.deep`) reads a
#: hit's entity's other memories; without it each hit cost a scan (7-19 ms at 10k memories).
ENTITY_INDEX = "CREATE INDEX IF NOT EXISTS memories_entity ON memories (entity) WHERE entity <> ''"
#: The sign bits of the float32 vector bound to `?1` (NULL if its dimension is not a multiple of 8).
BITS_OF = "CASE WHEN length(?1) % 32 = 0 THEN vec_quantize_binary(?1) END"

Connection = Any  # pysqlite3's or sqlite3's Connection: the two share an interface, not a type


def driver() -> ModuleType:
    """`pysqlite3.dbapi2` if importable, else `sqlite3`."""
    module: ModuleType
    try:
        import pysqlite3.dbapi2 as pysqlite  # the driver is chosen when the index opens

        module = pysqlite
    except ImportError:
        import sqlite3  # the driver is chosen when the index opens

        module = sqlite3
    return module


def vec_extension_path() -> str | None:
    """The path of sqlite-vec's loadable extension (without its suffix), or None."""
    try:
        spec = importlib.util.find_spec("sqlite_vec")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    suffix = {"win32": ".dll", "darwin": ".dylib"}.get(sys.platform, ".so")
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, "vec0" + suffix)
        if os.path.isfile(path):
            return os.path.join(folder, "vec0")
    return None


#: Most page cache a connection keeps, in KiB (SQLite's default is 2,000 KiB).
CACHE_KIB = 65_536


def connect(module: ModuleType, path: str) -> Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, with a busy timeout."""
    conn = module.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                          check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if path != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        # A cache: losing the last transaction on power loss only costs a re-index.
        conn.execute("PRAGMA synchronous = NORMAL")
        # The first index of a big store is one large transaction; without a limit its WAL
        # file keeps that size (58 MB for 10k memories) after the checkpoint.
        conn.execute("PRAGMA journal_size_limit = 16777216")
        # The vector scans read every embedding (1.5 KB each: 3 MB at 2k memories, plus the
        # passages'); SQLite's default 2 MB page cache let each recall re-read them all from
        # the OS, which doubled the time of those scans. Pages are only taken as they are read.
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    return conn


def load_vec(conn: Connection) -> str | None:
    """Load sqlite-vec into `conn`; returns None on success, else why vectors are off."""
    path = vec_extension_path()
    if path is None:
        return "sqlite-vec is not installed"
    if not hasattr(conn, "enable_load_extension"):
        return "this Python's sqlite3 cannot load extensions (install pysqlite3-binary)"
    try:
        conn.enable_load_extension(True)
        try:
            conn.load_extension(path)
        finally:
            conn.enable_load_extension(False)
    except Exception as exc:  # the driver's OperationalError, or AttributeError on odd builds
        return f"sqlite-vec failed to load ({exc})"
    return None


def has_fts5(conn: Connection) -> bool:
    try:
        return bool(conn.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')").fetchone()[0]) or _probe_fts5(conn)
    except Exception:
        return False


def _probe_fts5(conn: Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp._probe USING fts5(x)")
        conn.execute("DROP TABLE temp._probe")
        return True
    except Exception:
        return False


def user_version(conn: Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: Connection) -> None:
    """Bring the schema to SCHEMA_VERSION inside one transaction.

    The index is a cache, so an index of any other version (older, or from a newer
    memgit) is dropped and recreated: `sync` refills it from the files. Version history:
    1 (first), 2 (`files.ino`: inode numbers for change detection), 3 (vectors in plain
    tables instead of vec0), 4 (the partial index `memories_superseding`), 5 (identifiers'
    words in the FTS5 table: `fts.indexed`), 6 (the partial index `memories_entity`).
    2 -> 3 -> 4 -> 5 -> 6 is done in place so that no memory is embedded again.
    """
    version = user_version(conn)
    if version == SCHEMA_VERSION:
        return
    import sqlite_utils  # only here: the import costs ~160 ms

    db = sqlite_utils.Database(conn, execute_plugins=False)
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = user_version(conn)  # another process may have migrated meanwhile
        if version in (2, 3) and (version == 3 or _upgrade_2(conn)):
            conn.execute(SUPERSEDING_INDEX)
            _upgrade_4(conn)
            conn.execute(ENTITY_INDEX)
        elif version in (4, 5):
            if version == 4:
                _upgrade_4(conn)
            conn.execute(ENTITY_INDEX)
        elif version != SCHEMA_VERSION:
            if version != 0:
                _drop_all(conn)
            _create(db)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _upgrade_4(conn: Connection) -> None:
    """4 -> 5: the FTS5 title, tags and entity columns written again with the words of their
    camelCase identifiers (`fts.indexed`), from the `memories` table; the body is as it was."""
    from memgit.index import fts  # only here: the rest of this module needs no text rules

    rows = conn.execute("SELECT doc, title, tags, entity, files, symbols FROM memories").fetchall()
    for doc, title, tags, entity, files, symbols in rows:
        anchored = " ".join((entity or "", *json.loads(files or "[]"), *json.loads(symbols or "[]")))
        conn.execute("UPDATE memories_fts SET title = ?, tags = ?, entity = ? WHERE rowid = ?",
                     (fts.indexed(title or ""), fts.indexed(" ".join(json.loads(tags or "[]"))),
                      fts.indexed(anchored), doc))


def _upgrade_2(conn: Connection) -> bool:
    """2 -> 3: copy the vectors out of the vec0 table `memories_vec` into `VECTOR_TABLES`
    and derive their bits in SQL (100k vectors: ~4 s). False when that needs
    sqlite-vec and it is not loaded: the caller rebuilds the whole index instead."""
    has_vec0 = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").fetchone() is not None
    if has_vec0 and not _vec_loaded(conn):
        return False
    for sql in VECTOR_TABLES:
        conn.execute(sql)
    stale = conn.execute("SELECT 1 FROM meta WHERE key = 'vec_stale'").fetchone() is not None
    if has_vec0:
        if not stale:  # vec_stale: version 2 could not delete from vec0; its vectors are not to be trusted
            # Through a temp table: reading vec0 while writing the same database took 16 s
            # for 100k vectors, reading it first 1 s (and the whole upgrade ~4 s).
            conn.execute("CREATE TEMP TABLE old_vectors AS SELECT rowid AS doc, embedding FROM memories_vec")
            conn.execute("INSERT INTO vectors (doc, embedding) SELECT doc, embedding FROM temp.old_vectors")
            conn.execute("DROP TABLE temp.old_vectors")
            conn.execute("DELETE FROM vectors WHERE doc NOT IN "
                         "(SELECT doc FROM memories WHERE vec_sha IS NOT NULL)")
            bits = BITS_OF.replace("?1", "embedding")
            conn.execute(f"INSERT INTO vector_bits (doc, bits) SELECT doc, {bits} FROM vectors")
        conn.execute("DROP TABLE memories_vec")
    conn.execute("UPDATE memories SET vec_sha = NULL "
                 "WHERE vec_sha IS NOT NULL AND doc NOT IN (SELECT doc FROM vectors)")
    conn.execute("DELETE FROM meta WHERE key = 'vec_stale'")
    return True


def _vec_loaded(conn: Connection) -> bool:
    try:
        conn.execute("SELECT vec_version()").fetchone()
        return True
    except Exception:  # the driver's OperationalError: no such function
        return False


def _drop_all(conn: Connection) -> None:
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND sql LIKE 'CREATE VIRTUAL TABLE%'")]
    for name in names:
        try:
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        except Exception as exc:  # e.g. vec0 without its extension: the caller deletes the file
            raise driver().DatabaseError(f"cannot drop {name} ({exc})") from exc
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    for name in names:
        conn.execute(f'DROP TABLE IF EXISTS "{name}"')


def _create(db: Any) -> None:
    db["meta"].create({"key": str, "value": str}, pk="key")
    # Every memory file seen, usable or not: its stat and content hash are what change
    # detection compares; `problem` holds why a file is not indexed (warned once).
    db["files"].create(
        {"rel": str, "dir": str, "size": int, "mtime_ns": int, "ino": int, "sha": str, "memory_id": str,
         "problem": str},
        pk="rel",
    )
    db["files"].create_index(["dir"])
    db["files"].create_index(["memory_id"])
    # Folder mtimes: a create, delete or rename in a folder changes its mtime.
    db["dirs"].create({"rel": str, "mtime_ns": int}, pk="rel")
    db["memories"].create(
        {
            "doc": int,  # stable integer key shared with the FTS5 and vector tables
            "id": str,
            "rel": str,
            "title": str,
            "title_key": str,  # casefolded title, for precise recall by title
            "kind": str,
            "entity": str,
            "confidence": float,
            "source": str,
            "task_id": str,
            "created": str,
            "updated": str,
            "tags": str,  # JSON lists
            "files": str,
            "symbols": str,
            "supersedes": str,
            "status": str,
            "expires": str,
            "extra": str,  # JSON object of unknown front-matter keys
            "body": str,
            "sha": str,  # sha1 of the file's bytes
            "vec_sha": str,  # sha1 of the text whose vector is stored; NULL = no vector yet
        },
        pk="doc",
        not_null={"id", "rel", "title", "status"},
    )
    db["memories"].create_index(["id"], unique=True)
    db["memories"].create_index(["title_key"])
    db["memories"].create_index(["task_id"])
    db["memories"].create_index(["vec_sha"])
    db.execute(SUPERSEDING_INDEX)
    db.execute(ENTITY_INDEX)
    for sql in VECTOR_TABLES:
        db.execute(sql)
    db["anchors"].create({"anchor_key": str, "doc": int})
    db["anchors"].create_index(["anchor_key"])
    db["anchors"].create_index(["doc"])
    columns = ", ".join(FTS_COLUMNS)
    db.execute(f"CREATE VIRTUAL TABLE memories_fts USING fts5({columns}, tokenize='{FTS_TOKENIZER}')")
    db.execute("CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row')")
