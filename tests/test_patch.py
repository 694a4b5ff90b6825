"""memgit edits a hand-written file by changing only the lines of the fields it sets."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memgit.memory import format as fmt
from memgit.memory import lenient
from memgit.memory.patch import patch

from .conftest import git

HAND_WRITTEN = (
    "\ufeff---\r\n"
    "# Written by hand; keep the comments.\r\n"
    "kind: lesson\r\n"
    "title: 'Deploys need the VPN: staging is private'\r\n"
    "confidence: 0.8   # a guess\r\n"
    "tags:\r\n"
    "  - ops\r\n"
    "  - vpn\r\n"
    "id: m-deploy\r\n"
    "owner: ana\r\n"
    "---\r\n"
    "\r\n"
    "Connect to the VPN before `make deploy`; staging.example is not public.\r\n"
)


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def changed_lines(repo: Path) -> list[str]:
    """The -/+ lines of the last commit's diff (CR kept: a CRLF file must stay CRLF)."""
    diff = subprocess.run(["git", "show", "--format=", "--unified=0", "HEAD"], cwd=repo, check=True,
                          capture_output=True).stdout.decode()
    return [line for line in diff.split("\n") if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))]


def test_edit_changes_only_the_confidence_and_updated_lines(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".memory" / "deploy.md"
    path.write_bytes(HAND_WRITTEN.encode())
    commit_all(repo, "hand-written memory")
    updated = mem.update("m-deploy", confidence=0.5)
    assert changed_lines(repo) == [
        "-confidence: 0.8   # a guess\r",
        "+confidence: 0.5   # a guess\r",
        f"+updated: {updated.updated}\r",
    ]
    text = path.read_bytes().decode()
    assert text.startswith("\ufeff---\r\n# Written by hand") and "\n" not in text.replace("\r\n", "")
    assert mem.get("m-deploy").confidence == 0.5 and mem.get("m-deploy").extra == {"owner": "ana"}


def test_forget_and_list_edits_keep_the_rest(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".memory" / "deploy.md"
    path.write_bytes(HAND_WRITTEN.encode())
    commit_all(repo, "hand-written memory")
    mem.update("m-deploy", tags=("ops", "network"), title="Deploys need the VPN")
    assert changed_lines(repo)[:6] == [
        "-title: 'Deploys need the VPN: staging is private'\r",
        "+title: Deploys need the VPN\r",
        "-  - ops\r",  # the list is rewritten as memgit writes lists
        "-  - vpn\r",
        "+- ops\r",
        "+- network\r",
    ]
    before = mem.get("m-deploy")
    archived = mem.forget("m-deploy")
    lines = changed_lines(repo)  # `updated` may be the same second as the edit above
    assert "+status: archived\r" in lines
    assert set(lines) <= {f"-updated: {before.updated}\r", f"+updated: {archived.updated}\r", "+status: archived\r"}
    assert "# Written by hand; keep the comments." in path.read_bytes().decode()


def test_edit_of_a_leniently_read_file_writes_valid_values_only_where_it_changes(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".memory" / "odd.md"
    path.write_text("---\ntitle: Odd one\nkind: Gotcha\ncreated: 2023-05-08T13:56:00\nconfidence: high\n---\nbody\n")
    commit_all(repo, "odd memory")
    mem.update("odd", confidence=0.6, kind="lesson")
    text = path.read_text()
    assert "confidence: 0.6\n" in text and "kind: lesson\n" in text
    assert "created: 2023-05-08T13:56:00\n" in text  # not memgit's field to fix; lint still reports it
    assert [p.message for p in mem.lint()][0].startswith("'created' has no timezone")


@pytest.mark.parametrize(
    ("text", "changes", "expected"),
    [
        ("---\ntitle: t\n---\nbody\n", {"confidence": 0.5}, "---\ntitle: t\nconfidence: 0.5\n---\nbody\n"),
        ("---\ntitle: t\n---\n", {"confidence": 0.5, "updated": "2026-01-01"},
         "---\ntitle: t\nconfidence: 0.5\nupdated: 2026-01-01\n---\n"),
        ("---\ntitle: t\ntask_id: T-1\n---\n", {"task_id": None}, "---\ntitle: t\n---\n"),
        ("---\ntitle: t\nstatus: archived\n---\n", {"status": "active"}, "---\ntitle: t\n---\n"),
        ("---\ntitle: t\n---", {"status": "archived"}, "---\ntitle: t\nstatus: archived\n---\n"),
        ("---\ntitle: t\n---\n\n\nold body\n", {"body": "new body"}, "---\ntitle: t\n---\n\n\nnew body\n"),
        ("plain note\n", {"confidence": 0.5}, "---\nconfidence: 0.5\n---\n\nplain note\n"),
        ("---\ntitle: a #b\n---\n", {"title": "c"}, "---\ntitle: c #b\n---\n"),
        ("---\ntitle: 'a #b'\n---\n", {"title": "c"}, "---\ntitle: c\n---\n"),
        ("---\ntitle: t\ntags: [a, b]\n---\n", {"tags": ("c",)}, "---\ntitle: t\ntags:\n- c\n---\n"),
    ],
)
def test_patch(text: str, changes: dict[str, object], expected: str) -> None:
    assert patch(text, changes) == expected


def test_patch_refuses_what_it_cannot_do_safely() -> None:
    assert patch("---\ntitle: t\n", {"confidence": 0.5}) is None  # never closed
    assert patch("---\ntitle: a\ntitle: b\n---\n", {"title": "c"}) is None  # a key twice
    assert patch("plain note\n", {"body": "x"}) is None
    assert patch("---\rtitle: t\r---\r", {"confidence": 0.5}) is None  # CR-only line endings


def test_example_files_patch_to_the_same_text_as_dump() -> None:
    from .conftest import EXAMPLE

    for path in sorted(EXAMPLE.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        memory = lenient.parse(text, path.name)
        new = fmt.Memory(**{**memory.__dict__, "confidence": 0.42, "title": "A new title"})
        assert patch(text, {"confidence": 0.42, "title": "A new title"}) == fmt.dump(new), path.name


_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40).map(lambda s: " ".join(s.split()))


@given(
    title=_text.filter(bool),
    body=st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n"), max_size=80),
    tags=st.lists(_text.filter(bool), max_size=3),
    new_title=_text.filter(bool),
    new_tags=st.lists(_text.filter(bool), max_size=3),
    confidence=st.floats(0, 1),
    task_id=st.none() | _text.filter(bool),
    crlf=st.booleans(),
)
def test_patch_reads_back_as_the_edit_property(title: str, body: str, tags: list[str], new_title: str,
                                               new_tags: list[str], confidence: float, task_id: str | None,
                                               crlf: bool) -> None:
    old = fmt.Memory(id="m-abc", title=title, body=body.strip(), tags=tuple(tags))
    text = fmt.dump(old)
    text = text.replace("\n", "\r\n") if crlf else text
    changes = {"title": new_title, "tags": tuple(new_tags), "confidence": confidence, "task_id": task_id}
    patched = patch(text, changes)
    assert patched is not None
    assert lenient.check(patched, "x.md")[0] == fmt.Memory(**{**old.__dict__, **changes})  # type: ignore[arg-type]
    assert ("\r\n" in patched) is crlf and (crlf or "\r" not in patched)
