"""What a connection has seen of the index, so that what a process keeps of it is never stale.

A stamp is `PRAGMA data_version` (changes committed by any other connection, in this process
or another), the schema's version (a table dropped or made again) and a count of the
connection's own writes to the watched tables, kept by temporary triggers (`watch_table`):
this connection's alone, gone with it or with the table. What is kept under one stamp is read
again when the stamp moves (`memgit.index.resident`, `memgit.index.postings`).
"""

from __future__ import annotations

from typing import Any

Stamp = tuple[int, int, int]


def stamp(conn: Any, tables: tuple[str, ...]) -> Stamp | None:
    """What the connection has seen: others' commits, its schema, its own writes to the
    watched tables; None when its own writes to one of `tables` are not counted (`watch`)."""
    if conn.execute("SELECT 1 FROM temp.sqlite_master WHERE name = 'resident_writes'").fetchone() is None:
        return None
    marks = ",".join("?" * len(tables))
    row = conn.execute(
        f"SELECT (SELECT count(*) FROM temp.sqlite_master WHERE type = 'trigger' AND tbl_name IN ({marks}) "
        "AND name LIKE 'resident_%'), (SELECT n FROM temp.resident_writes)", tables).fetchone()
    if row[0] < 3 * len(tables):
        return None
    return (int(conn.execute("PRAGMA data_version").fetchone()[0]),
            int(conn.execute("PRAGMA main.schema_version").fetchone()[0]), int(row[1]))


def watch_table(conn: Any, table: str) -> None:
    """Count the connection's own writes to `table`: temporary triggers (this connection's
    alone, gone with it or with the table) that add one to `temp.resident_writes` a row."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS resident_writes (n INTEGER NOT NULL)")
    conn.execute("INSERT INTO temp.resident_writes (n) "
                 "SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM temp.resident_writes)")
    for event in ("INSERT", "UPDATE", "DELETE"):
        conn.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS resident_{table}_{event.lower()} AFTER {event} "
                     f"ON {table} BEGIN UPDATE resident_writes SET n = n + 1; END")
