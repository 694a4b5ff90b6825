"""Trust you can see: recall's `--json`, the MCP tool and injected text say who wrote a memory
and whether a person merged it into the default branch — with real branches, merges and
clones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli

from .conftest import git

PROMPT = "how often do the pools rotate?"


def run(repo: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)


def trust_of(repo: Path, query: str = PROMPT) -> dict[str, dict[str, Any]]:
    done = run(repo, "recall", query, "--json", "--min-score", "0")
    assert done.exit_code == 0, done.stderr
    return {hit["id"]: hit["trust"] for hit in json.loads(done.stdout)}


def injected(repo: Path, query: str = PROMPT) -> str:
    done = run(repo, "recall", query, "--format", "markdown", "--min-score", "0")
    assert done.exit_code == 0, done.stderr
    return str(done.stdout)


def agent_memory(repo: Path, day: str = "Mondays") -> str:
    """What an agent's `remember` writes (source inferred), committed on the current branch."""
    store = memgit.open(repo, warn=lambda message: None)
    title = "Pool rotation" + ("" if day == "Mondays" else f" on {day}")
    return store.remember(f"The pools rotate weekly, on {day}.", title=title, source="inferred").memory.id


def test_a_feature_branch_memory_is_unreviewed_until_merged(repo: Path, mem: memgit.Memgit) -> None:
    person = mem.remember("Deploy pools rotate in the order blue, green.", title="Pool order").memory.id
    git(repo, "checkout", "-q", "-b", "feature")
    agent = agent_memory(repo)

    trust = trust_of(repo)
    assert trust[agent] == {"source": "inferred", "review": "unreviewed", "branch": "main"}
    assert trust[person] == {"source": "user", "review": "reviewed", "branch": "main"}
    text = injected(repo)
    assert f"`{agent}` · fact · .memory/pool-rotation-{agent[2:]}.md · agent-written, not merged into main\n" in text
    assert f"`{person}` · fact · .memory/pool-order-{person[2:]}.md\n" in text  # a reviewed user memory: no words
    listing = run(repo, "recall", PROMPT, "--min-score", "0").stdout
    assert "· agent-written, not merged into main" in listing

    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    git(repo, "checkout", "-q", "feature")  # still on the branch: the memory is on main now
    assert trust_of(repo)[agent] == {"source": "inferred", "review": "reviewed", "branch": "main"}
    text = injected(repo)
    assert "not merged" not in text and "· agent-written, reviewed on main\n" in text


def test_edited_on_the_branch_and_not_committed(repo: Path, mem: memgit.Memgit) -> None:
    merged = mem.remember("Pools rotate every two weeks.", title="Pool rotation schedule").memory
    git(repo, "checkout", "-q", "-b", "feature")
    mem.update(merged.id, body="Pools rotate every week now.")
    staged = mem.checkpoint(intent="rotate the pools weekly", task_id="pools")  # staged, no commit
    trust = trust_of(repo, "pools rotate")
    assert trust[merged.id]["review"] == "changed"
    assert trust[staged.id] == {"source": "inferred", "review": "unreviewed", "branch": "main"}
    assert "· from the user, edited since main\n" in injected(repo, "pools rotate weekly")
    # Back as main has it (an uncommitted edit undone): reviewed again, whatever the line ends.
    path = repo / ".memory" / merged.path
    git(repo, "checkout", "-q", "main", "--", f".memory/{merged.path}")
    assert trust_of(repo, "pools rotate")[merged.id]["review"] == "reviewed"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))  # a checkout with core.autocrlf
    assert trust_of(repo, "pools rotate")[merged.id]["review"] == "reviewed"


def test_a_clone_compares_with_origin_head(repo: Path, mem: memgit.Memgit, tmp_path: Path) -> None:
    mem.remember("Deploy pools rotate in the order blue, green.", title="Pool order")
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(origin))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    assert git(clone, "symbolic-ref", "refs/remotes/origin/HEAD").strip() == "refs/remotes/origin/main"

    git(clone, "checkout", "-q", "-b", "feature")
    agent = agent_memory(clone)
    assert trust_of(clone)[agent] == {"source": "inferred", "review": "unreviewed", "branch": "origin/main"}
    # Merged into the local main only: nobody else has seen it, origin's HEAD decides.
    git(clone, "checkout", "-q", "main")
    git(clone, "merge", "-q", "--ff-only", "feature")
    assert trust_of(clone)[agent]["review"] == "unreviewed"
    assert "agent-written, not merged into main" in injected(clone)
    git(clone, "push", "-q", "origin", "main")  # merged for everyone
    assert trust_of(clone)[agent] == {"source": "inferred", "review": "reviewed", "branch": "origin/main"}


def test_only_the_clone_chooses_the_reviewed_branch(repo: Path, mem: memgit.Memgit) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    agent = agent_memory(repo)
    config = repo / ".memory" / "config.toml"
    config.write_text(config.read_text() + '\n[review]\nbranch = "feature"\n')
    git(repo, "commit", "-q", "-am", "this branch vouches for itself")
    done = run(repo, "recall", PROMPT, "--json", "--min-score", "0")
    hits = json.loads(done.stdout)
    assert hits[0]["trust"]["review"] == "unreviewed" and hits[0]["trust"]["branch"] == "main"
    assert "[review] branch" in done.stderr and "a branch must not vouch for its own memories" in done.stderr
    git(repo, "config", "memgit.review.branch", "feature")  # the clone's own choice is honoured
    assert trust_of(repo)[agent] == {"source": "inferred", "review": "reviewed", "branch": "feature"}
    git(repo, "config", "memgit.review.branch", "no-such-branch")
    assert trust_of(repo)[agent] == {"source": "inferred", "review": "unknown", "branch": None}


def test_no_default_branch_says_unknown(repo: Path, mem: memgit.Memgit) -> None:
    git(repo, "branch", "-m", "main", "trunk")
    agent = agent_memory(repo)
    assert trust_of(repo)[agent] == {"source": "inferred", "review": "unknown", "branch": None}
    assert "· agent-written\n" in injected(repo)


def test_a_recall_at_a_commit_is_judged_by_that_commit(repo: Path, mem: memgit.Memgit) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    agent = agent_memory(repo)
    git(repo, "tag", "on-feature")
    git(repo, "checkout", "-q", "main")
    hits = json.loads(run(repo, "recall", PROMPT, "--json", "--at", "on-feature").stdout)
    assert hits[0]["id"] == agent and hits[0]["trust"]["review"] == "unreviewed"


def test_the_prompt_hook_and_the_mcp_tool_show_it(repo: Path, mem: memgit.Memgit) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    agent = agent_memory(repo)
    payload = json.dumps({"session_id": "s-1", "transcript_path": "", "cwd": str(repo),
                          "hook_event_name": "UserPromptSubmit", "prompt": PROMPT})
    done = subprocess.run([sys.executable, "-m", "memgit.hookrun", "claude", "user-prompt"], input=payload.encode(),
                          cwd=repo, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"`{agent}` · fact · .memory/pool-rotation-{agent[2:]}.md · agent-written, not merged into main" in context

    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(repo),
                                   env=dict(os.environ))

    async def main() -> Any:
        async with Client(params) as client:
            return await client.call_tool("recall", {"query": PROMPT})

    hits = anyio.run(main).structured_content["hits"]
    assert hits[0]["trust"] == {"source": "inferred", "review": "unreviewed", "branch": "main"}


def test_a_long_lived_process_sees_the_branch_move(repo: Path, mem: memgit.Memgit) -> None:
    """An MCP server keeps one store open: the default branch's tip is looked up again only
    when git's ref files change — a merge, refs packed, a merge on top of packed refs."""
    git(repo, "checkout", "-q", "-b", "feature")
    first = agent_memory(repo)
    server = memgit.open(repo, warn=lambda message: None)

    def state(memory_id: str) -> str:
        hits = {hit.id: hit for hit in server.recall(PROMPT, 10, min_score=0)}
        review = hits[memory_id].review
        return review.state if review else "unknown"

    assert state(first) == "unreviewed"
    assert state(first) == "unreviewed"  # the cached answer
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "feature")
    assert state(first) == "reviewed"
    git(repo, "pack-refs", "--all", "--prune")
    assert state(first) == "reviewed"
    second = agent_memory(repo, "Tuesdays")  # on main: committed there, so reviewed
    git(repo, "checkout", "-q", "-b", "later")
    third = agent_memory(repo, "Fridays")
    assert (state(second), state(third)) == ("reviewed", "unreviewed")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "later")
    assert state(third) == "reviewed"
    server.close()


def test_session_start_marks_a_pinned_memory_nobody_merged(repo: Path, mem: memgit.Memgit) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    agent = agent_memory(repo)
    memgit.open(repo, warn=lambda message: None).update(agent, pinned=True)
    payload = json.dumps({"session_id": "s-2", "transcript_path": "", "cwd": str(repo),
                          "hook_event_name": "SessionStart", "source": "startup"})
    done = subprocess.run([sys.executable, "-m", "memgit.hookrun", "claude", "session-start"],
                          input=payload.encode(), cwd=repo, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"`{agent}` · fact · .memory/pool-rotation-{agent[2:]}.md · agent-written, not merged into main" in context
