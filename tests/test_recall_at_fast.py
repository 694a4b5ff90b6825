"""`recall --at REV` reuses the work tree index's rows for the files a commit holds byte for
byte, and answers exactly as an index built from a checkout of that commit does: real
repositories, some memories edited, deleted, added, copied or renamed since REV."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import memgit
from memgit.index.index import Index
from memgit.recall import asof
from memgit.recall import recall as recall_mod
from memgit.store.folder import Store

from .conftest import git

QUERIES = ["which pool do deploys go to first?", "cache key locale tenant", "retry backoff for the payment API",
           "src/cache.py::key", "deploy/pools.yaml", "logging format json", "topic 7 detail", "feature flags"]


def build(repo: Path, mem: memgit.Memgit) -> dict[str, Any]:
    """v1 holds 24 memories (one a hand-made copy of another); since then 3 were edited, 2
    deleted, 1 file renamed, 3 added, and one file edited in the work tree without the index
    having seen it."""
    ids = []
    for i in range(20):
        ids.append(mem.remember(f"Topic {i} detail: the service uses retry backoff of {i} seconds and "
                                f"logs in json format for component c{i}.", title=f"Topic {i}",
                                files=[f"src/c{i}.py"], tags=[f"t{i % 3}"]).memory.id)
    deploy = mem.remember("Deploys go to the blue pool first, then the rest.", title="Deploy order",
                          files=["deploy/pools.yaml"]).memory
    cache = mem.remember("The cache key includes the locale and the tenant.", title="Cache key",
                         entity="src/cache.py::key").memory
    flags = mem.remember("Feature flags live in config/flags.toml and are read at start.",
                         title="Feature flags").memory
    folder = repo / ".memory"
    deploy_file = next(folder.rglob(f"*{deploy.id}*.md"), None) or _file_of(folder, deploy.id)
    (deploy_file.parent / "copy-of-deploy.md").write_bytes(deploy_file.read_bytes())  # a copy: same id
    git(repo, "add", "-A", ".memory")
    git(repo, "commit", "-q", "-m", "memory: a copied file")
    git(repo, "tag", "v1")
    mem.update(ids[0], body="Topic 0 detail: the service now retries three times, json logs.")
    mem.update(ids[1], title="Topic one, renamed")
    mem.update(deploy.id, body="Deploys go to the green pool first, then the rest.")
    mem.forget(ids[2], hard=True)
    mem.forget(cache.id, hard=True)
    moved = _file_of(folder, ids[3])
    git(repo, "mv", str(moved), str(moved.parent / "moved-topic-3.md"))
    git(repo, "commit", "-q", "-m", "memory: a file renamed")
    for i in range(3):
        mem.remember(f"Retry backoff for the payment API is {i + 5} seconds.", title=f"Payment retry {i}")
    mem.recall("warm the work tree index", record=False)
    edited = _file_of(folder, ids[4])  # edited in place, the index not told
    edited.write_text(edited.read_text("utf-8") + "\nEdited without a sync.\n", encoding="utf-8")
    return {"ids": ids, "flags": flags.id}


def _file_of(folder: Path, memory_id: str) -> Path:
    for path in folder.rglob("*.md"):
        if f"id: {memory_id}" in path.read_text("utf-8"):
            return path
    raise AssertionError(f"no file holds {memory_id}")


def checkout_index(repo: Path, mem: memgit.Memgit, rev: str, tmp: Path) -> Index:
    """The slow, obvious way: the commit's memory folder checked out, indexed from nothing."""
    out = tmp / "checkout"
    out.mkdir()
    archive = subprocess.run(["git", "archive", rev, ".memory"], cwd=repo, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    index = Index(None, Store(out / ".memory", mem.workspace.config.kinds), "none", warn=lambda message: None)
    index.sync(embed="none", full=True)
    return index


def contents(index: Index) -> dict[str, list[Any]]:
    """Everything the index holds about its memories, without row numbers or stats."""
    conn = index.conn
    columns = [r[1] for r in conn.execute("PRAGMA table_info(memories)").fetchall() if r[1] not in ("doc", "vec_sha")]
    return {
        "memories": conn.execute(f"SELECT {', '.join(columns)} FROM memories ORDER BY id").fetchall(),
        "fts": conn.execute("SELECT m.id, f.title, f.body, f.tags, f.entity FROM memories_fts f "
                            "JOIN memories m ON m.doc = f.rowid ORDER BY m.id").fetchall(),
        "anchors": conn.execute("SELECT m.id, a.anchor_key FROM anchors a JOIN memories m ON m.doc = a.doc "
                                "ORDER BY 1, 2").fetchall(),
        "files": conn.execute("SELECT rel, sha, memory_id, problem FROM files ORDER BY rel").fetchall(),
    }


def test_reused_rows_answer_as_a_checkout_of_the_commit_does(repo: Path, mem: memgit.Memgit, tmp_path: Path) -> None:
    build(repo, mem)
    ws = mem.workspace
    past = asof.at(ws, "v1")
    # 24 files at v1: 3 edited since, 2 deleted, 1 renamed, 1 a copy (indexed under its path
    # id): those are read from the commit, the rest reused (the file edited behind the index's
    # back too: the index still holds the bytes v1 has).
    assert len(past.blobs) == 24
    assert past.reused == 24 - 3 - 2 - 1 - 1
    slow = checkout_index(repo, mem, "v1", tmp_path)
    assert contents(past.index) == contents(slow)
    config = ws.config
    for query in QUERIES:
        fast_hits = asof.recall(ws, "v1", query, k=8)
        slow_hits = recall_mod.recall(slow, query, k=8, config=config, path_prefix=ws.path_prefix(), sync=False)
        assert [(h.id, h.path, round(h.score, 9), h.memory) for h in fast_hits] == \
            [(h.id, h.path, round(h.score, 9), h.memory) for h in slow_hits], query
    assert any(h.memory.body.startswith("Deploys go to the blue pool")
               for h in asof.recall(ws, "v1", "which pool do deploys go to first?"))


def test_a_file_the_index_has_not_seen_is_read_from_the_commit(repo: Path, mem: memgit.Memgit,
                                                                tmp_path: Path) -> None:
    """A file edited and committed with git alone (no hook, no sync): the work tree's index
    holds other bytes than HEAD, so that file is read from the commit (as is the copy);
    every other one is reused."""
    build(repo, mem)
    before = asof.at(mem.workspace, "HEAD")
    assert before.reused == len(before.blobs) - 1  # the copy
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-a", "-m", "memory: edited by hand")
    past = asof.at(mem.workspace, "HEAD")
    assert past.reused == len(past.blobs) - 2
    held = contents(past.index)
    assert held == contents(checkout_index(repo, mem, "HEAD", tmp_path))
    assert any("Edited without a sync." in row[-2] for row in held["memories"])


def test_without_a_readable_work_tree_index_every_file_is_read(repo: Path, mem: memgit.Memgit,
                                                                tmp_path: Path) -> None:
    build(repo, mem)
    mem.close()
    db = mem.workspace.index_path()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.mkdir()  # the index file cannot be opened: the work tree answers from memory, empty for --at
    warned: list[str] = []
    store = memgit.open(repo, warn=warned.append)
    past = asof.at(store.workspace, "v1")
    assert past.reused == 0
    assert contents(past.index) == contents(checkout_index(repo, store, "v1", tmp_path))


def test_a_reused_file_that_the_commit_makes_a_copy_is_read_again(repo: Path, mem: memgit.Memgit,
                                                                  tmp_path: Path) -> None:
    """v2 holds two files declaring one id: the one named for it is the original. The work
    tree deleted that one since, so its index holds the other as the id's owner; at v2 that
    reused row must become the copy, as a checkout of v2 has it."""
    mem.remember("Deploys go to the blue pool first.", title="Deploy order")
    folder = repo / ".memory"
    (folder / "aaa-notes.md").write_text("---\nid: m-zz1\ntitle: Zebra notes\n---\nThe zebra service "
                                         "restarts nightly.\n", encoding="utf-8")
    (folder / "topic-zz1.md").write_text("---\nid: m-zz1\ntitle: Zebra topic\n---\nThe zebra service "
                                         "owns the stripes table.\n", encoding="utf-8")
    git(repo, "add", "-A", ".memory")
    git(repo, "commit", "-q", "-m", "memory: two files, one id")
    git(repo, "tag", "v2")
    git(repo, "rm", "-q", ".memory/topic-zz1.md")
    git(repo, "commit", "-q", "-m", "memory: the original removed")
    assert [h.id for h in mem.recall("zebra service", record=False)] == ["m-zz1"]
    past = asof.at(mem.workspace, "v2")
    assert past.reused == 2  # the deploy memory and aaa-notes.md, which v2 then makes a copy
    held = contents(past.index)
    assert held == contents(checkout_index(repo, mem, "v2", tmp_path))
    owners = {row[0]: row[2] for row in held["files"]}
    assert owners["topic-zz1.md"] == "m-zz1" and owners["aaa-notes.md"] != "m-zz1"
