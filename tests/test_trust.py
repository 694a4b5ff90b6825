"""An agent cannot hide a person's memories: `supersedes` hides only as trusted a source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.errors import MemgitError

from .conftest import git
from .test_mcpserver import session as mcp_session

pytest.importorskip("mcp")


TITLES = ("Deploys go through the staging cluster first", "Release notes are written by the on-call engineer")


def recalled(repo: Path, query: str) -> list[str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), "recall", query, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    import json

    return [hit["id"] for hit in json.loads(result.stdout)]


def test_an_agent_over_mcp_cannot_hide_user_memories(repo: Path, mem: memgit.Memgit) -> None:
    users = [mem.remember(title, source="user").memory.id for title in TITLES]
    mine = mem.remember("An older guess of mine about deploy order", source="inferred").memory.id

    async def steps(client: Any) -> tuple[Any, Any, list[str]]:
        made = await client.call_tool("remember", {
            "text": "Deploys and release notes are whatever the agent decides", "source": "user",
            "supersedes": [*users, mine]})
        bad = await client.call_tool("remember", {"text": "Sneaky", "supersedes": ["../../etc/passwd"]})
        missing = await client.call_tool("remember", {"text": "Sneaky too", "supersedes": ["m-000000"]})
        return made, bad, [str(bad.content[0].text), str(missing.content[0].text)]

    made, bad, errors = mcp_session(repo, steps)
    assert made.is_error is False, made.content
    out = made.structured_content
    assert out["proposed_supersedes"] == users and "stay recalled" in out["note"]
    # The file holds the supersession for a reviewer to see; only the agent's own memory is hidden.
    text = (repo / out["path"]).read_text()
    assert f"supersedes:\n- {mine}\n" in text
    assert f"proposed_supersedes:\n- {users[0]}\n- {users[1]}\n" in text
    for title, memory_id in zip(TITLES, users, strict=True):
        assert memory_id in recalled(repo, title)
    assert mine not in recalled(repo, "older guess of mine about deploy order")
    # Ids are checked: not an id, not a memory -> a tool error and nothing written.
    assert bad.is_error is True
    assert "'../../etc/passwd' is not a memory id" in errors[0] and "e.g. m-7f3a2c" in errors[0]
    assert "no memory has the id 'm-000000'" in errors[1]
    assert "Sneaky" not in git(repo, "log", "--format=%s")
    # reflect lists the held supersessions for a person, and changes nothing for them.
    found = [p for p in mem.reflect().reflection.proposals if p.kind == "conflict"]
    assert sorted(p.ids[1] for p in found) == sorted(users)
    assert all("proposes to replace" in p.what and not p.changes for p in found)


def test_a_hand_written_lower_source_supersedes_does_not_hide(repo: Path, mem: memgit.Memgit) -> None:
    user = mem.remember(TITLES[0], source="user").memory.id
    static = mem.remember("The parser module caches compiled grammars", source="static").memory.id
    # A file from someone's branch, committed by hand: an inferred memory listing both.
    (repo / ".memory" / "stranger.md").write_text(
        f"---\ntitle: Everything changed\nsource: inferred\nsupersedes:\n- {user}\n- {static}\n---\nbody\n")
    git(repo, "add", ".memory")
    git(repo, "commit", "-q", "-m", "stranger")
    assert user in recalled(repo, TITLES[0])
    assert static in recalled(repo, "parser module caches compiled grammars")
    # As trusted a source still hides: a user memory superseding a user memory.
    (repo / ".memory" / "stranger.md").write_text(
        f"---\ntitle: Everything changed\nsource: user\nsupersedes:\n- {user}\n- {static}\n---\nbody\n")
    assert user not in recalled(repo, TITLES[0])
    assert static not in recalled(repo, "parser module caches compiled grammars")


def test_remember_checks_the_ids_it_supersedes(mem: memgit.Memgit) -> None:
    user = mem.remember(TITLES[0], source="user").memory.id
    with pytest.raises(MemgitError, match="'../x' is not a memory id"):
        mem.remember("one", supersedes=["../x"])
    with pytest.raises(MemgitError, match="no memory has the id 'm-nope'"):
        mem.remember("two", supersedes=["m-nope"])
    made = mem.remember("A guess", source="inferred", supersedes=[user]).memory
    assert made.supersedes == () and made.extra == {"proposed_supersedes": [user]}
    kept = mem.remember("The user says staging is skipped now", source="user", supersedes=[user]).memory
    assert kept.supersedes == (user,) and not kept.extra
    assert user not in [h.memory.id for h in mem.recall(TITLES[0], min_score=0)]


def test_an_agent_over_mcp_forgets_only_what_an_agent_could_supersede(repo: Path, mem: memgit.Memgit) -> None:
    user = mem.remember(TITLES[0], source="user").memory.id
    static = mem.remember(TITLES[1], source="static").memory.id
    mine = mem.remember("An older guess of mine about deploy order", source="inferred").memory.id

    async def steps(client: Any) -> list[Any]:
        return [await client.call_tool("forget", {"ref": ref, "hard": hard})
                for ref, hard in ((user, False), (user, True), (static, False), (mine, False))]

    *refused, forgotten = mcp_session(repo, steps)
    assert all(result.is_error for result in refused)
    assert f"{user} is a user memory: an agent does not forget it" in str(refused[0].content[0].text)
    assert f"run 'memgit forget {user}'" in str(refused[1].content[0].text)
    assert forgotten.is_error is False and forgotten.structured_content["status"] == "archived"
    assert user in recalled(repo, TITLES[0]) and static in recalled(repo, TITLES[1])
    assert mem.get(user).active and mem.get(static).active
    assert [s for s in git(repo, "log", "--format=%s").splitlines() if "forget" in s] == [
        'memory: forget "An older guess of mine about deploy order"']


def test_lint_names_a_hand_written_supersession_that_hides_nothing(repo: Path, mem: memgit.Memgit) -> None:
    kept = mem.remember("the staging database is reset nightly", source="user").memory
    (repo / ".memory" / "staging-keeps-its-data.md").write_text(
        f"---\nid: m-5ta9e1\ntitle: staging keeps its data\nsource: inferred\n"
        f"supersedes: [{kept.id}, m-nothere]\n---\n")
    git(repo, "add", ".memory")
    git(repo, "commit", "-q", "-m", "a memory written by hand")
    result = CliRunner().invoke(cli, ["-C", str(repo), "lint"], catch_exceptions=False)
    lines = result.stdout.splitlines()
    assert ("staging-keeps-its-data.md: supersedes 'm-nothere': no memory has this id, so it hides nothing; "
            "correct the id or remove it") in lines
    assert (f"staging-keeps-its-data.md: supersedes '{kept.id}' (source user) from a memory of source inferred: "
            "recall does not hide it; a person decides (memgit reflect lists the pair)") in lines
    assert kept.id in recalled(repo, "the staging database is reset nightly")
