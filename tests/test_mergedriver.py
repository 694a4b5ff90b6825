"""The merge driver, run by git itself in real repositories: no branch loses a memory."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

import memgit
from memgit.git.mergedriver import merge_texts
from memgit.memory import format as fmt
from memgit.memory import lenient
from memgit.memory.format import Memory

from .conftest import git

T0, T1, T2, T3 = (f"2026-11-0{day}T10:00:00+00:00" for day in (1, 2, 3, 4))


def base_memory(**fields: object) -> Memory:
    values: dict[str, object] = dict(
        id="m-aaa111", title="parse_config returns a tuple", body="It returns (path, Config).\n\nCallers unpack it.",
        kind="decision", entity="src/config.py", confidence=0.7, source="static", created=T0, updated=T0,
        tags=("config", "api"),
    )
    values.update(fields)
    return Memory(**values)  # type: ignore[arg-type]


def put(repo: Path, memory: Memory, message: str = "memory") -> None:
    path = repo / ".memory" / f"{memory.id}.md"
    path.write_text(fmt.dump(memory), encoding="utf-8")
    git(repo, "add", str(path))
    git(repo, "commit", "-q", "-m", message)


def read(repo: Path, memory_id: str) -> Memory:
    path = repo / ".memory" / f"{memory_id}.md"
    memory, _ = lenient.check(path.read_bytes(), path.name)
    assert memory is not None
    return memory


def run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)


def diverge(repo: Path, ours: Memory | None, theirs: Memory | None, start: Memory | None = None) -> None:
    """`main` and `feature` from a common commit holding `start`, each then changing the memory."""
    if start is not None:
        put(repo, start, "start")
    git(repo, "branch", "feature")
    if ours is not None:
        put(repo, ours, "ours")
    git(repo, "switch", "-q", "feature")
    if theirs is not None:
        put(repo, theirs, "theirs")
    git(repo, "switch", "-q", "main")


def integrate(repo: Path, how: str) -> subprocess.CompletedProcess[str]:
    """Bring `feature` and `main` together, leaving the result checked out."""
    if how == "merge":
        return run(repo, "merge", "--no-edit", "feature")
    if how == "merge-reverse":
        git(repo, "switch", "-q", "feature")
        return run(repo, "merge", "--no-edit", "main")
    if how == "rebase":
        git(repo, "switch", "-q", "feature")
        return run(repo, "rebase", "main")
    assert how == "cherry-pick"
    return run(repo, "cherry-pick", "feature")


HOW = ["merge", "merge-reverse", "rebase", "cherry-pick"]


def test_init_registers_the_driver(repo: Path, mem: memgit.Memgit) -> None:
    attributes = (repo / ".gitattributes").read_text()
    assert ".memory/**/*.md merge=memgit" in attributes
    assert "memgit.mergedriver %O %A %B %L %P %S %X %Y" in git(repo, "config", "merge.memgit.driver")
    assert git(repo, "status", "--porcelain") == ""  # committed with the init
    assert mem.status()["merge_driver"] == "configured"
    mem.init()  # again: nothing added twice
    assert (repo / ".gitattributes").read_text() == attributes


@pytest.mark.parametrize("how", HOW)
def test_both_edit_one_memory(repo: Path, mem: memgit.Memgit, how: str) -> None:
    start = base_memory()
    ours = replace(start, confidence=0.9, source="user", tags=("config", "api", "ours-tag"), updated=T1,
                   body="It returns (path, Config).\n\nCallers unpack it.\n\nOurs: see docs/config.md.")
    theirs = replace(start, title="parse_config returns (path, Config)", tags=("config", "theirs-tag"), updated=T2,
                     body="Since 2.0 it returns (path, Config).\n\nCallers unpack it.", files=("src/config.py",))
    diverge(repo, ours, theirs, start)
    result = integrate(repo, how)
    assert result.returncode == 0, result.stdout + result.stderr
    merged = read(repo, start.id)
    assert merged.title == "parse_config returns (path, Config)"  # only theirs changed it
    assert (merged.source, merged.confidence) == ("user", 0.9)  # only ours changed them
    assert sorted(merged.tags) == ["config", "ours-tag", "theirs-tag"]  # union; 'api' removed by theirs
    assert merged.files == ("src/config.py",)
    assert merged.updated == T2
    assert merged.body == "Since 2.0 it returns (path, Config).\n\nCallers unpack it.\n\nOurs: see docs/config.md."
    assert lenient.check((repo / ".memory" / f"{start.id}.md").read_bytes(), "x.md")[1] == []


@pytest.mark.parametrize("how", HOW)
def test_both_add_and_nothing_is_lost(repo: Path, mem: memgit.Memgit, how: str) -> None:
    git(repo, "branch", "feature")
    mine = [mem.remember(f"main memory {i} about caching layer {i}").memory for i in range(3)]
    git(repo, "switch", "-q", "feature")
    theirs = [mem.remember(f"feature memory {i} about retry policy {i}").memory for i in range(3)]
    expected = {m.path: (repo / ".memory" / m.path).read_bytes() for m in theirs}
    git(repo, "switch", "-q", "main")
    expected.update({m.path: (repo / ".memory" / m.path).read_bytes() for m in mine})
    result = integrate(repo, how)
    assert result.returncode == 0, result.stderr
    if how == "cherry-pick":  # one commit of feature: its last memory
        expected = {k: v for k, v in expected.items() if k in {m.path for m in mine} | {theirs[-1].path}}
    for rel, data in expected.items():
        assert (repo / ".memory" / rel).read_bytes() == data  # byte for byte
    ids = {m.id for m in mem.list()}
    assert {m.id for m in mine} <= ids


@pytest.mark.parametrize("archive_last", [True, False])
def test_archive_against_edit(repo: Path, mem: memgit.Memgit, archive_last: bool) -> None:
    start = base_memory()
    archived = replace(start, status="archived", updated=T3 if archive_last else T1)
    edited = replace(start, body=start.body + "\n\nAlso in the CLI.", updated=T2)
    diverge(repo, archived, edited, start)
    for how in ("merge", "merge-reverse"):
        if how == "merge-reverse":
            git(repo, "reset", "-q", "--hard", "main@{1}")
        result = integrate(repo, how)
        assert result.returncode == 0, result.stderr
        merged = read(repo, start.id)
        assert merged.status == "archived"  # a forget is deliberate: a later edit does not undo it
        assert merged.body.endswith("Also in the CLI.")  # the edit is kept either way
        git(repo, "switch", "-q", "main")


def test_body_conflict_leaves_markers_in_the_body_only(repo: Path, mem: memgit.Memgit) -> None:
    start = base_memory()
    ours = replace(start, body="It returns a (path, Config) pair.\n\nCallers unpack it.", tags=("ours",) + start.tags,
                   updated=T1)
    theirs = replace(start, body="It returns a NamedTuple.\n\nCallers unpack it.", updated=T2)
    diverge(repo, ours, theirs, start)
    result = run(repo, "merge", "--no-edit", "feature")
    assert result.returncode != 0
    assert "CONFLICT" in result.stdout and "resolve the conflict markers" in result.stderr
    text = (repo / ".memory" / f"{start.id}.md").read_text()
    front, body = text.split("\n---\n", 1)
    assert "<<<<<<<" not in front and "<<<<<<< HEAD" in body and ">>>>>>> feature" in body
    memory, problems = lenient.check(text, "x.md")
    assert memory is not None and memory.tags == ("ours", "config", "api") and memory.updated == T2
    assert [p.message for p in problems] == ["unresolved merge conflict markers (<<<<<<<): resolve them"]
    assert any("conflict markers" in p.message for p in mem.lint())
    assert [hit.id for hit in mem.recall("parse_config NamedTuple", min_score=0)][:1] == [start.id]


def test_one_deletes_while_the_other_adds(repo: Path, mem: memgit.Memgit) -> None:
    doomed = mem.remember("the old deploy script lives in tools/deploy.sh").memory
    git(repo, "branch", "feature")
    mem.forget(doomed.id, hard=True)
    git(repo, "switch", "-q", "feature")
    added = mem.remember("deploys go through the release workflow now").memory
    git(repo, "switch", "-q", "main")
    assert run(repo, "merge", "--no-edit", "feature").returncode == 0
    ids = {m.id for m in mem.list(status=None)}
    assert added.id in ids and doomed.id not in ids


def test_delete_against_edit_is_a_conflict_that_keeps_the_edit(repo: Path, mem: memgit.Memgit) -> None:
    kept = mem.remember("the cache key includes the locale").memory
    git(repo, "branch", "feature")
    mem.forget(kept.id, hard=True)
    git(repo, "switch", "-q", "feature")
    mem.update(kept.id, confidence=0.6)
    git(repo, "switch", "-q", "main")
    result = run(repo, "merge", "--no-edit", "feature")
    assert result.returncode != 0 and "modify/delete" in result.stdout
    assert (repo / ".memory" / kept.path).exists()  # git leaves the edited file for a person to decide


def test_fresh_clone_lacks_the_driver_and_a_write_registers_it(tmp_path: Path, repo: Path, mem: memgit.Memgit) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    other = memgit.open(clone, warn=lambda message: None)
    assert other.status()["merge_driver"].startswith("missing: .gitattributes names the memgit merge driver")
    other.remember("the clone's first memory")
    assert other.status()["merge_driver"] == "configured"


def test_status_in_a_clone_says_how_to_fix_it(tmp_path: Path, repo: Path, mem: memgit.Memgit) -> None:
    from click.testing import CliRunner

    from memgit.cli import cli

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    out = CliRunner().invoke(cli, ["-C", str(clone), "status"], catch_exceptions=False).output
    assert "run 'memgit init' to register it" in out
    CliRunner().invoke(cli, ["-C", str(clone), "init"], catch_exceptions=False)
    assert "merge_driver:      configured" in CliRunner().invoke(cli, ["-C", str(clone), "status"]).output


# -- the rules, without git ------------------------------------------------------------------


def texts(*memories: Memory | None) -> list[str]:
    return [fmt.dump(m) if m is not None else "" for m in memories]


def test_confidence_follows_the_source_rule_when_both_changed() -> None:
    start = base_memory()
    ours = replace(start, source="inferred", confidence=0.95, updated=T2)
    theirs = replace(start, source="user", confidence=0.6, updated=T1)
    merged = merge_texts(*texts(start, ours, theirs), path="m.md")
    memory = lenient.parse(merged.text)
    assert (memory.source, memory.confidence, memory.updated) == ("user", 0.6, T2)
    higher = merge_texts(*texts(start, replace(start, confidence=0.8), replace(start, confidence=0.75)), path="m.md")
    assert lenient.parse(higher.text).confidence == 0.8


def test_both_changed_a_field_the_later_wins_and_it_is_noted() -> None:
    start = base_memory()
    ours = replace(start, kind="lesson", updated=T2)
    theirs = replace(start, kind="convention", updated=T3)
    merged = merge_texts(*texts(start, ours, theirs), path="m.md")
    assert lenient.parse(merged.text).kind == "convention"
    assert merged.notes == ["m.md: both sides changed 'kind'; kept theirs ('convention'), updated later"]


def test_added_on_both_sides_without_an_ancestor() -> None:
    ours = base_memory(tags=("a",), updated=T1)
    theirs = base_memory(tags=("b",), updated=T2, body="Another body.")
    merged = merge_texts("", *texts(ours, theirs), path="m.md")
    assert merged.conflict  # two different bodies and no ancestor: a person decides
    memory, _ = lenient.check(merged.text, "m.md")
    assert memory is not None and memory.tags == ("a", "b")


def test_unknown_keys_and_hand_written_files() -> None:
    start = base_memory(extra={"reviewed_by": "ana"})
    ours = replace(start, extra={"reviewed_by": "ana", "ticket": "OPS-1"}, updated=T1)
    theirs = replace(start, extra={}, updated=T2)
    memory = lenient.parse(merge_texts(*texts(start, ours, theirs), path="m.md").text)
    assert dict(memory.extra) == {"ticket": "OPS-1"}
    plain = merge_texts("a\nb\nc\n", "A\nb\nc\n", "a\nb\nC\n", path="notes.md")  # no front-matter: plain text
    assert (plain.text, plain.conflict) == ("A\nb\nC\n", False)


def test_a_hand_written_file_keeps_its_comments() -> None:
    start = "---\nid: m-bbb222\ntitle: Deploys  # short\nconfidence: 0.8  # a guess\ntags: [a]\n---\n\nBody.\n"
    ours = start.replace("tags: [a]", "tags: [a, b]")
    theirs = start.replace("Body.", "Body, edited.")
    merged = merge_texts(start, ours, theirs, path="m.md")
    assert "confidence: 0.8  # a guess" in merged.text and "Body, edited." in merged.text
    assert lenient.parse(merged.text).tags == ("a", "b")


def test_bad_inputs_never_lose_a_side(tmp_path: Path) -> None:
    from memgit.git.mergedriver import main

    start = fmt.dump(base_memory())
    crlf = merge_texts(start.replace("\n", "\r\n"), start.replace("\n", "\r\n").replace("tags:", "tags:\r\n- new"),
                       start.replace("\n", "\r\n").replace("Callers unpack it.", "Callers unpack it twice."),
                       path="m.md")
    assert not crlf.conflict and "\r\n- new\r\n" in crlf.text and "unpack it twice." in crlf.text
    broken = start.replace("kind: decision", "kind: [unclosed")
    merged = merge_texts(start, broken, start.replace("Callers", "Callers always"), path="m.md")
    assert "kind: [unclosed" in merged.text and "Callers always" in merged.text  # read as text, both kept
    files = [tmp_path / name for name in ("O", "A", "B")]
    files[0].write_bytes(b"")
    files[1].write_bytes(start.encode())
    files[2].write_bytes(b"\xff\xfe\x00binary\x00")
    assert main([str(f) for f in files] + ["7", ".memory/m.md", "%S", "%X", "%Y"]) == 1
    text = files[1].read_bytes()
    assert b"<<<<<<< HEAD" in text and start.encode() in text.replace(b"<<<<<<< HEAD\n", b"")
    assert main(["only-one"]) == 2


def test_a_driver_whose_python_is_gone_is_registered_again(tmp_path: Path, repo: Path, mem: memgit.Memgit) -> None:
    git(repo, "config", "merge.memgit.driver", f"{tmp_path}/gone/python -m memgit.mergedriver %O %A %B %L %P")
    assert mem.status()["merge_driver"].startswith("broken: its interpreter is gone")
    mem.remember("any write registers it again")
    assert mem.status()["merge_driver"] == "configured"
