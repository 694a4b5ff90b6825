"""The store through the library front door: real git repositories, real commits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import memgit
from memgit.errors import MemgitError
from memgit.memory import format as fmt

from .conftest import git


def log(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def test_init_is_idempotent_and_committed(repo: Path) -> None:
    mem = memgit.open(repo)
    assert mem.init() is True
    assert mem.init() is False
    assert (repo / ".memory" / "config.toml").is_file()
    assert log(repo)[0] == "memory: init"


def test_remember_commits_only_the_memory(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    (repo / "staged.txt").write_text("user work\n")
    git(repo, "add", "staged.txt")
    (repo / "README.md").write_text("unstaged edit\n")
    result = mem.remember(
        "parse_config returns a tuple (path, Config)",
        kind="decision",
        entity="src/config.py::parse_config",
    )
    assert result.created and result.commit
    assert log(repo)[0] == 'memory: add "parse_config returns a tuple (path, Config)"'
    files = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert files == [f".memory/{result.memory.path}"]
    status = git(repo, "status", "--porcelain").splitlines()
    assert "A  staged.txt" in status and " M README.md" in status
    stored = mem.get(result.memory.id)
    assert stored.entity == "src/config.py::parse_config"
    assert stored.confidence == 0.9 and stored.created == stored.updated


def test_remember_same_text_is_not_duplicated(mem) -> None:  # type: ignore[no-untyped-def]
    first = mem.remember("Use uv to add dependencies")
    again = mem.remember("use uv to add   dependencies.")
    assert not again.created and again.duplicate_of == first.memory.id
    assert len(mem.list()) == 1


def test_no_commit_leaves_it_staged(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    before = log(repo)
    result = mem.remember("staged only", commit=False)
    assert log(repo) == before
    assert f"A  .memory/{result.memory.path}" in git(repo, "status", "--porcelain")


def test_over_budget_refused_unless_forced(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    body = "title\n" + "word " * 400
    with pytest.raises(MemgitError, match=r"about 400 tokens, 100 over the budget of 300"):
        mem.remember(body)
    assert mem.remember(body, force=True).created


def test_secret_refused_and_nothing_written(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MemgitError, match="AWS"):
        mem.remember("deploy key is AKIAZ7Q2LMNOPQRSTUV4 for the bucket")
    assert mem.list() == []
    assert mem.remember("password = getpass() is how the CLI asks").created
    assert mem.remember("deploy key is AKIAZ7Q2LMNOPQRSTUV4 for the bucket", allow_secret=True).created


def test_get_by_id_prefix_title(mem) -> None:  # type: ignore[no-untyped-def]
    a = mem.remember("alpha fact").memory
    assert mem.get(a.id) == a
    assert mem.get(a.id[:5]) == a
    assert mem.get("alpha fact") == a
    assert mem.get("ALPHA FACT") == a
    with pytest.raises(MemgitError, match="no memory 'zzz'"):
        mem.get("zzz")


def test_list_filters_and_newest_first(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    a = mem.remember("first", kind="lesson", task_id="T-1", entity="src/a.py").memory
    b = mem.remember("second", kind="decision", source="inferred").memory
    (repo / ".memory" / a.path).write_text(fmt.dump(replace(a, updated="2000-01-01T00:00:00+00:00")))
    assert [m.id for m in mem.list()] == [b.id, a.id]
    assert [m.id for m in mem.list(kind="lesson")] == [a.id]
    assert [m.id for m in mem.list(task_id="T-1")] == [a.id]
    assert [m.id for m in mem.list(entity="src/")] == [a.id]
    assert [m.id for m in mem.list(source="inferred")] == [b.id]
    assert mem.get(b.id).confidence == 0.5


def test_forget_archives_then_hard_deletes(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    m = mem.remember("to be forgotten").memory
    archived = mem.forget(m.id)
    assert archived.status == "archived"
    assert mem.list() == [] and [x.id for x in mem.list(status="archived")] == [m.id]
    assert log(repo)[0] == 'memory: forget "to be forgotten"'
    git(repo, "revert", "--no-edit", "HEAD")
    assert [x.id for x in mem.list()] == [m.id]
    mem.forget(m.id, hard=True)
    assert not (repo / ".memory" / m.path).exists()
    assert log(repo)[0] == 'memory: forget "to be forgotten" (deleted)'


def test_update_history_and_rollback(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    m = mem.remember("the API uses JSON", kind="fact").memory
    first = git(repo, "rev-parse", "HEAD").strip()
    mem.update(m.id, kind="decision", confidence=0.5)
    # A rename (a human reorganising files) must not break history.
    (repo / ".memory" / "team").mkdir()
    git(repo, "mv", f".memory/{m.path}", ".memory/team/api.md")
    git(repo, "commit", "-q", "-m", "move memory")
    changes = mem.history(m.id)
    assert [c.revision.subject for c in changes] == ["move memory", 'memory: edit "the API uses JSON"', 'memory: add "the API uses JSON"']
    assert changes[1].fields["kind"] == ("fact", "decision")
    assert changes[1].fields["confidence"] == (0.9, 0.5)
    restored = mem.rollback(m.id, first)
    assert restored.kind == "fact"
    assert mem.get(m.id).kind == "fact" and mem.get(m.id).path == "team/api.md"
    assert log(repo)[0].startswith('memory: roll back "the API uses JSON" to ')
    with pytest.raises(MemgitError, match="unknown revision"):
        mem.rollback(m.id, "no-such-rev")


def test_bad_file_is_skipped_with_a_warning(repo: Path) -> None:
    warnings: list[str] = []
    mem = memgit.open(repo, warn=warnings.append)
    mem.init()
    good = mem.remember("good memory").memory
    (repo / ".memory" / "broken.md").write_text("---\ntitle: [oops\n---\n")
    (repo / ".memory" / "binary.md").write_bytes(b"\0\1\2")
    assert sorted(m.id for m in mem.list()) == ["broken", good.id]
    assert len(warnings) == 1 and warnings[0].startswith("skipping binary.md: binary file")
    problems = mem.lint()
    assert {p.path for p in problems} == {"broken.md", "binary.md"}


def test_duplicate_ids_reported(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    m = mem.remember("one").memory
    text = (repo / ".memory" / m.path).read_text()
    (repo / ".memory" / "copy.md").write_text(text)
    assert any("duplicate id" in p.message for p in mem.lint())


def test_lint_fix_writes_path_ids_without_touching_the_rest(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    (repo / ".memory" / "notes.md").write_text("---\ntitle: Hand written\nowner: ana\n---\nbody text\n")
    (repo / ".memory" / "plain.md").write_text("No front-matter at all.\n")
    before = {m.id for m in mem.list()}
    assert before == {"notes", "plain"}
    assert mem.lint(fix=True) == []
    assert (repo / ".memory" / "notes.md").read_text() == "---\nid: notes\ntitle: Hand written\nowner: ana\n---\nbody text\n"
    git(repo, "mv", ".memory/notes.md", ".memory/renamed.md")
    assert {m.id for m in mem.list()} == before


def test_symlink_outside_is_not_followed(mem, repo: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: secret stuff\n---\n")
    os.symlink(outside, repo / ".memory" / "link.md")
    assert mem.list() == []
    # Not read, and not hidden either: lint says why the file is no memory.
    assert [(p.path, p.message.split(",")[0]) for p in mem.lint()] == [("link.md", "a symbolic link")]


def test_hostile_paths_refused(mem) -> None:  # type: ignore[no-untyped-def]
    for bad in ("../x.md", "/etc/passwd", "a/../../x.md", "a\\b.md", ""):
        with pytest.raises(MemgitError, match="refusing"):
            mem.store.path_of(bad)


def test_import_export_round_trip(mem, repo: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lines = [
        json.dumps({"id": "imp-1", "title": "one", "body": "first body", "kind": "lesson", "custom": {"k": 1}}),
        "not json",
        json.dumps({"id": "imp-2", "title": "two", "body": "token: 'ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8'"}),
        json.dumps({"id": "imp-3", "title": "three", "kind": "gossip"}),
        json.dumps({"id": "imp-1", "title": "again"}),
        json.dumps({"id": "imp-4", "title": "one", "body": "first body"}),
        json.dumps({"id": "imp-5", "title": "long", "body": "w " * 400}),
        "",
    ]
    report = mem.import_jsonl(lines)
    assert report.imported == 3
    assert [s.split(":")[0] for s in report.skipped] == ["line 2", "line 3", "line 4", "line 5"]
    assert (report.duplicates, report.over_budget) == (1, 1)
    assert log(repo)[0] == "memory: import 3 memories"
    exported = {r["id"]: r for r in mem.export()}
    assert exported["imp-1"]["custom"] == {"k": 1} and exported["imp-1"]["kind"] == "lesson"
    # What export prints, import takes back (into another repository).
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    mem2 = memgit.open(other)
    mem2.init()
    assert mem2.import_jsonl([json.dumps(r) for r in exported.values()]).imported == 3
    assert {m.id: m.body for m in mem2.list()} == {m.id: m.body for m in mem.list()}


def test_commit_rejected_by_hook_keeps_the_file(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'no commits today' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(MemgitError, match="the commit was not made.*the change is written in the working tree"):
        mem.remember("kept despite the hook")
    assert [m.title for m in mem.list()] == ["kept despite the hook"]
    assert git(repo, "diff", "--cached", "--name-only") == ""  # nothing left staged for the user's next commit


def test_not_a_repository_and_no_store(tmp_path: Path, repo: Path) -> None:
    with pytest.raises(MemgitError, match="run 'git init' first"):
        memgit.open(tmp_path)
    with pytest.raises(MemgitError, match="run 'memgit init'"):
        memgit.open(repo).list()


def test_repository_without_commits_and_subdirectory(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    (root / "src" / "deep").mkdir(parents=True)
    git(root, "init", "-q")
    mem = memgit.open(root / "src" / "deep")
    mem.init()
    assert mem.memory_dir == root / ".memory"
    assert mem.remember("works before the first commit").created
    assert git(root, "log", "--format=%s").splitlines() == ['memory: add "works before the first commit"', "memory: init"]


def test_detached_head_and_worktree(mem, repo: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    git(repo, "checkout", "-q", "--detach")
    assert mem.remember("on a detached head").created
    git(repo, "checkout", "-q", "-")
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(worktree))
    wmem = memgit.open(worktree)
    assert wmem.remember("from a worktree").created
    assert wmem.repo is not None and wmem.repo.git_dir != mem.repo.git_dir


def test_bare_repository_is_explained(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(MemgitError, match="bare repository"):
        memgit.open(bare)


def test_memory_dir_outside_a_repository_reads_but_does_not_write(tmp_path: Path) -> None:
    folder = tmp_path / "loose"
    folder.mkdir()
    (folder / "a.md").write_text("---\ntitle: loose memory\n---\nbody\n")
    mem = memgit.open(tmp_path, memory_dir=folder)
    assert [m.title for m in mem.list()] == ["loose memory"]
    with pytest.raises(MemgitError, match="git init"):
        mem.remember("cannot write here")


WRITER = """
import sys, memgit
mem = memgit.open(sys.argv[1])
for i in range(int(sys.argv[3])):
    mem.remember(f"{sys.argv[2]} memory number {i}")
"""


def test_parallel_writers_lose_nothing(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(repo), name, "5"], stderr=subprocess.PIPE)
        for name in ("alpha", "beta", "gamma")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    assert len(mem.list()) == 15
    assert len([s for s in log(repo) if s.startswith("memory: add")]) == 15
    assert git(repo, "status", "--porcelain") == ""


def _hook(repo: Path, body: str) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(0o755)


def test_rerun_after_a_rejected_commit_commits_the_pending_file(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    _hook(repo, "exit 1\n")
    with pytest.raises(MemgitError, match="the commit was not made"):
        mem.remember("pending memory")
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    again = mem.remember("pending memory")
    assert not again.created  # the kept change was finished (committed) first
    assert log(repo)[0] == 'memory: add "pending memory"'
    assert git(repo, "status", "--porcelain") == ""


def test_hook_that_stages_user_work_is_undone(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    (repo / "README.md").write_text("user's unstaged edit\n")
    _hook(repo, "git add -u\n")
    before = log(repo)
    with pytest.raises(MemgitError, match=r"added files memgit did not change \(README.md\)"):
        mem.remember("a memory")
    assert log(repo) == before
    assert (repo / "README.md").read_text() == "user's unstaged edit\n"
    assert [m.title for m in mem.list()] == ["a memory"]


def test_writes_refused_during_a_merge(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    """A real merge stopped on a conflict (git's own MERGE_HEAD, conflicted index): memgit writes
    nothing into it; once the merge is aborted, it writes again."""
    git(repo, "switch", "-q", "-c", "theirs")
    (repo / "README.md").write_text("their project\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "switch", "-q", "main")
    (repo / "README.md").write_text("our project\n")
    git(repo, "commit", "-q", "-am", "ours")
    merging = subprocess.run(["git", "merge", "theirs"], cwd=repo, capture_output=True, text=True,
                             check=False)
    assert merging.returncode == 1 and "CONFLICT (content)" in merging.stdout
    assert (repo / ".git" / "MERGE_HEAD").exists()
    before = log(repo)
    with pytest.raises(MemgitError, match="a merge is in progress"):
        mem.remember("not now")
    assert list((repo / ".memory").glob("*.md")) == [] and log(repo) == before
    assert git(repo, "diff", "--name-only", "--diff-filter=U") == "README.md\n"  # the conflict, untouched
    git(repo, "merge", "--abort")
    assert mem.remember("now").created


def test_detached_head_warns(repo: Path) -> None:
    warnings: list[str] = []
    mem = memgit.open(repo, warn=warnings.append)
    mem.init()
    git(repo, "checkout", "-q", "--detach")
    mem.remember("detached")
    assert any("HEAD is detached" in w for w in warnings)


def test_unusable_paths_give_clear_errors(repo: Path) -> None:
    (repo / ".memory").write_text("a file, not a folder")
    with pytest.raises(MemgitError, match="is not a folder"):
        memgit.open(repo).init()
    (repo / ".memory").unlink()
    (repo / ".git" / "memgit").write_text("in the way")
    with pytest.raises(MemgitError, match="write lock"):
        memgit.open(repo).init()


def test_update_refuses_empty_title_and_unknown_kind(mem) -> None:  # type: ignore[no-untyped-def]
    m = mem.remember("a fact").memory
    with pytest.raises(MemgitError, match="title cannot be empty"):
        mem.update(m.id, title="  ")
    with pytest.raises(MemgitError, match="unknown kind 'gossip'"):
        mem.update(m.id, kind="gossip")
    with pytest.raises(MemgitError, match="unknown kind 'gossip'"):
        mem.list(kind="gossip")
    with pytest.raises(MemgitError, match="give a memory id"):
        mem.get(None)


def test_rollback_to_the_same_content_is_a_no_op(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    m = mem.remember("unchanged").memory
    before = log(repo)
    assert mem.rollback(m.id, "HEAD") is None
    assert log(repo) == before


def test_empty_memory_dir_is_refused(repo: Path) -> None:
    with pytest.raises(MemgitError, match="needs a folder"):
        memgit.open(repo, memory_dir="")


def test_history_and_restore_after_a_hard_forget(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    m = mem.remember("deleted on purpose").memory
    kept = git(repo, "rev-parse", "HEAD").strip()
    mem.forget(m.id, hard=True)
    subjects = [c.revision.subject for c in mem.history(m.id)]
    assert subjects == ['memory: forget "deleted on purpose" (deleted)', 'memory: add "deleted on purpose"']
    restored = mem.rollback(m.id, kept)
    assert restored is not None and restored.path == m.path
    assert mem.get(m.id).title == "deleted on purpose"
    assert log(repo)[0].startswith('memory: restore "deleted on purpose" to ')


def test_glob_like_file_names_are_literal(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    (repo / ".memory" / "notes1.md").write_text("---\ntitle: other notes\n---\nuser's draft\n")
    (repo / ".memory" / "notes[1].md").write_text("---\ntitle: bracket notes\n---\nbody\n")
    git(repo, "add", ".memory")
    git(repo, "commit", "-q", "-m", "hand-written")
    (repo / ".memory" / "notes1.md").write_text("---\ntitle: other notes\n---\nuser's uncommitted edit\n")
    mem.update("bracket notes", confidence=0.5)
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [".memory/notes[1].md"]
    assert " M .memory/notes1.md" in git(repo, "status", "--porcelain")


def test_duplicate_remember_never_commits_edits_to_a_committed_file(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    m = mem.remember("same text").memory
    path = repo / ".memory" / m.path
    path.write_text(path.read_text().replace("confidence: 0.9", "confidence: 0.4"))
    before = log(repo)
    assert mem.remember("same text").commit is None
    assert log(repo) == before and "confidence: 0.4" in path.read_text()


def test_hard_forget_of_a_never_committed_memory(repo: Path) -> None:
    warnings: list[str] = []
    mem = memgit.open(repo, warn=warnings.append)
    mem.init()
    m = mem.remember("staged only", commit=False).memory
    git(repo, "reset", "-q")
    mem.forget(m.id, hard=True)
    assert mem.list() == [] and any("never committed" in w for w in warnings)


def test_lint_fix_with_other_fences(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    (repo / ".memory" / "dashes.md").write_text("----\ntitle: Four dashes\nkind: lesson\n----\nbody\n")
    assert mem.lint(fix=True) == []
    assert (repo / ".memory" / "dashes.md").read_text() == "----\nid: dashes\ntitle: Four dashes\nkind: lesson\n----\nbody\n"
    assert mem.get("dashes").kind == "lesson"


def test_edit_text_refuses_when_the_memory_changed_meanwhile(mem) -> None:  # type: ignore[no-untyped-def]
    from memgit.memory.format import dump

    m = mem.remember("edited twice").memory
    mem.update(m.id, confidence=0.5)  # another agent, while $EDITOR is open
    with pytest.raises(MemgitError, match="changed while you were editing"):
        mem.edit_text(m.id, dump(replace(m, title="mine")), base=m)
    assert mem.get(m.id).confidence == 0.5


def test_recall_through_the_front_door_logs_and_uses_the_right_index(mem, repo: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json as json_mod
    import os as os_mod

    m = mem.remember("parse_config returns a tuple (path, Config)", entity="src/config.py::parse_config").memory
    hits = mem.recall("src/config.py", k=3)
    assert [h.id for h in hits] == [m.id] and hits[0].path == f".memory/{m.path}"
    assert (repo / ".git" / "memgit" / "index.db").is_file()
    logged = [json_mod.loads(line) for line in (repo / ".git" / "memgit" / "recalls.jsonl").read_text().splitlines()]
    assert logged[-1]["ids"] == [m.id] and logged[-1]["query"] == "src/config.py"
    # A folder outside any repository keeps its index in the user's cache directory.
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "a.md").write_text("---\ntitle: uv not pip\n---\nUse uv to add dependencies.\n")
    outside = memgit.open(tmp_path, memory_dir=loose)
    assert [h.title for h in outside.recall("uv dependencies", min_score=0)] == ["uv not pip"]
    cache = Path(os_mod.environ["XDG_CACHE_HOME"]) / "memgit"
    assert list(cache.glob("index-*.db"))


def test_get_through_the_index_sees_hand_edits_and_explains_ambiguity(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    a = mem.remember("first memory").memory
    b = mem.remember("second memory").memory
    path = repo / ".memory" / a.path
    path.write_text(path.read_text().replace("title: first memory", "title: renamed by hand"))
    assert mem.get(a.id).title == "renamed by hand"
    assert mem.get("RENAMED BY HAND").id == a.id
    with pytest.raises(MemgitError, match=rf"'m-' matches 2 memories \(({a.id}, {b.id}|{b.id}, {a.id})\)"):
        mem.get("m-")
