"""Recall and the index as a new user and a team meet them: local state memgit did not write
(a hand-edited weights.json), another program's files beside memgit's own writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from memgit.index import changes
from memgit.recall import learned


def _cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=repo, capture_output=True, text=True,
                          check=False)


def test_a_weights_file_with_a_huge_number_is_ignored_not_a_crash(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    mem.remember("Deploys run through the make release target", title="Release process")
    weights = learned.path(repo / ".git")
    weights.parent.mkdir(parents=True, exist_ok=True)
    # JSON reads a 400-digit integer as a Python int, which float() cannot hold.
    huge = "9" * 400
    entry = '{"multipliers": {"keyword": ' + huge + '}}'
    weights.write_text('{"kinds": {"words": ' + entry + ', "lookup": ' + entry + '}}')
    assert learned.multipliers(repo / ".git") == {}
    found = _cli(repo, "recall", "release process")
    assert found.returncode == 0, found.stderr
    assert "Release process" in found.stdout
    stats = _cli(repo, "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["learned_weights"]["words"]["learned"] is False


OTHER = "---\nid: m-00aaaa\ntitle: Zebra crossing rules\nkind: fact\n---\nZebra crossings need lights.\n"


def test_a_file_written_in_the_same_clock_tick_as_remember_is_recalled(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    import memgit

    time.sleep(changes.RACY_NS / 1e9 * 2)  # the index holds the folder's mtime as settled
    assert not mem.recall("zebra crossing", 3)
    mem.remember("Deploys run through the make release target", title="Release process")
    folder = repo / ".memory"
    before = os.stat(folder)
    # Another program (a sync tool, a script) writes a memory right after memgit's write, in
    # the same clock tick of a file system with coarse timestamps: the folder's mtime stays
    # where memgit's write put it, which utime reproduces on any file system.
    (folder / "other.md").write_text(OTHER)
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
    # A recall within the tick, more of memgit's own writes, then a recall once it is over.
    memgit.open(repo, warn=lambda message: None).recall("zebra crossing", 3)
    mem.remember("Tests run with pytest -q", title="Test runner")
    time.sleep(changes.RACY_NS / 1e9 * 2)
    found = memgit.open(repo, warn=lambda message: None).recall("zebra crossing", 3)
    assert [h.memory.title for h in found] == ["Zebra crossing rules"]
    found = _cli(repo, "recall", "zebra crossing")
    assert "Zebra crossing rules" in found.stdout, found.stderr


def test_a_memory_edited_in_place_is_answered_as_it_is_now(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    folder = repo / ".memory"
    for i in range(250):  # more than the rolling stat takes in one call
        (folder / f"t{i:03d}.md").write_text(
            f"---\nid: m-{i + 4096:06x}\ntitle: Topic {i}\nkind: fact\n---\nDeploy step number {i}.\n")
    for _ in range(3):  # the first calls stat every file, the third the next 100 only
        assert "Topic" in _cli(repo, "recall", "deploy step").stdout
    db = repo / ".git" / "memgit" / "index.db"
    with sqlite3.connect(db) as conn:  # the last file the rolling stat took: the next call starts after it
        cursor = conn.execute("SELECT value FROM meta WHERE key = 'cursor'").fetchone()[0]
    assert isinstance(cursor, str)
    target = folder / cursor
    inode = target.stat().st_ino
    # Saved the way VS Code saves: truncated and written, same inode, the folder's mtime unmoved.
    with open(target, "r+", encoding="utf-8") as handle:
        text = handle.read()
        handle.seek(0)
        handle.truncate()
        handle.write(text.replace("Deploy step number", "Braintree callbacks retry, formerly step"))
    assert target.stat().st_ino == inode
    # Asked in its old words at once: the hit the stale index finds is answered as it is now.
    number = int(cursor[1:4])
    found = json.loads(_cli(repo, "recall", f"deploy step number {number}", "--json").stdout)
    mine = [h for h in found if h["path"] == f".memory/{cursor}"]
    assert mine and "Braintree" in mine[0]["memory"]["body"]
    found = json.loads(_cli(repo, "recall", "braintree callbacks", "--json").stdout)
    assert [h["path"] for h in found][:1] == [f".memory/{cursor}"]
    assert "Braintree" in found[0]["memory"]["body"]
