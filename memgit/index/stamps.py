"""What a connection has seen of the index, so that what a process keeps of it is never stale.

Each watched table has a generation: a row of `index_generations`, given a new random value
by persistent triggers on every insert, update and delete of one of the table's rows,
whoever writes it (this connection, another one in this process or another process, an
older memgit: the triggers are in the database). A stamp is the schema's version (a table
dropped or made again, which takes its triggers with it) and the generations of the tables
asked about; what is kept under one stamp (`memgit.index.resident`, `memgit.index.postings`)
is read again when it moves. A random value, not a count: a write rolled back and a different
one committed cannot come back to a value already seen.

Why not `PRAGMA data_version`: it moves on any commit by another connection, and every prompt
hook's sync commits its bookkeeping (`meta`, `files`), so a long-lived MCP server would read
everything again (~60 ms at 10k memories) after every prompt while nothing it keeps changed.

The triggers are made where missing by `install` (a recalling process's second search, and
when a watched table appears later), without waiting for another process's write lock: a
process that cannot make them (locked now, a read-only database) keeps nothing and the
recall runs in SQL.
"""

from __future__ import annotations

from typing import Any

Stamp = tuple[int, ...]

#: The table of generations, one row a watched table.
TABLE = "index_generations"
_PREFIX = "memgit_gen_"
_EVENTS = ("INSERT", "UPDATE", "DELETE")


def stamp(conn: Any, tables: tuple[str, ...]) -> Stamp | None:
    """The schema's version and the generations of `tables`; None when one of them is not
    watched (no triggers: `install`)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone() is None:
        return None
    marks = ",".join("?" * len(tables))
    rows = conn.execute(
        f"SELECT g.name, g.n, (SELECT count(*) FROM sqlite_master t WHERE t.type = 'trigger' "
        f"AND t.tbl_name = g.name AND t.name LIKE '{_PREFIX}%') FROM {TABLE} g "
        f"WHERE g.name IN ({marks})", tables).fetchall()
    seen = {name: (n, triggers) for name, n, triggers in rows}
    if any(seen.get(t, (0, 0))[1] < len(_EVENTS) for t in tables):
        return None
    return (int(conn.execute("PRAGMA main.schema_version").fetchone()[0]), *(int(seen[t][0]) for t in tables))


def missing(conn: Any, tables: tuple[str, ...]) -> list[str]:
    """The tables among `tables` that exist and lack their triggers."""
    marks = ",".join("?" * len(tables))
    return [name for name, triggers in conn.execute(
        "SELECT m.name, (SELECT count(*) FROM sqlite_master t WHERE t.type = 'trigger' "
        f"AND t.tbl_name = m.name AND t.name LIKE '{_PREFIX}%') FROM sqlite_master m "
        f"WHERE m.type = 'table' AND m.name IN ({marks})", tables).fetchall() if triggers < len(_EVENTS)]


def install(conn: Any, tables: list[str], busy_ms: int) -> bool:
    """Make the generations table and `tables`' triggers (outside any transaction), not
    waiting for another process's write lock; False when that could not be done now."""
    if not tables:
        return True
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (name TEXT PRIMARY KEY, n INTEGER NOT NULL)")
            for table in tables:
                quoted = table.replace("'", "''")
                conn.execute(f"INSERT OR IGNORE INTO {TABLE} (name, n) VALUES (?, random())", (table,))
                for event in _EVENTS:
                    conn.execute(
                        f'CREATE TRIGGER IF NOT EXISTS "{_PREFIX}{table}_{event.lower()}" AFTER {event} '
                        f'ON "{table}" BEGIN UPDATE {TABLE} SET n = random() WHERE name = \'{quoted}\'; END')
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except Exception as exc:  # the driver's OperationalError: locked, busy, read-only
        if type(exc).__name__ != "OperationalError":
            raise
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
    return True
