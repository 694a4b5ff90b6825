"""`memgit mcp` through the SDK's own client over real stdio, against a real repository."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import memgit

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

TOOLS = {"recall", "remember", "show", "forget", "list_topics", "checkpoint", "resume", "reflect",
         "pending_captures", "apply_capture", "verify"}


def session(repo: Path, steps: Any) -> Any:
    """Start `memgit mcp` in `repo`, run `steps(client)`, return what it returns."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(repo),
                                   env=dict(os.environ))

    async def main() -> Any:
        async with Client(params) as client:
            return await steps(client)

    return anyio.run(main)


def data(result: Any) -> Any:
    assert result.is_error is False, result.content
    return result.structured_content


def error(result: Any) -> str:
    assert result.is_error is True
    return str(result.content[0].text)


def test_tools_and_a_whole_session(repo: Path, mem: memgit.Memgit) -> None:
    async def steps(client: Any) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert tool.description and tool.input_schema["type"] == "object"
        assert tools["recall"].input_schema["required"] == ["query"]
        made = data(await client.call_tool("remember", {
            "text": "the cache key includes the locale", "kind": "convention", "entity": "src/cache.py",
            "tags": ["cache"]}))
        assert made["created"] is True and made["path"].startswith(".memory/")
        again = data(await client.call_tool("remember", {"text": "The cache key includes the locale."}))
        assert again["duplicate_of"] == made["id"]
        hits = data(await client.call_tool("recall", {"query": "what is in the cache key?", "k": 3}))["hits"]
        assert [h["id"] for h in hits] == [made["id"]]
        budgeted = data(await client.call_tool("recall", {"query": "cache key", "budget": 1}))
        assert budgeted["hits"] == [] and budgeted["reason"]
        shown = data(await client.call_tool("show", {"ref": made["id"]}))
        assert shown["kind"] == "convention" and shown["source"] == "inferred"
        topics = data(await client.call_tool("list_topics", {}))
        assert topics == {"total": 1, "kinds": {"convention": 1}, "entities": {"src/cache.py": 1},
                          "tags": {"cache": 1}}
        gone = data(await client.call_tool("forget", {"ref": made["id"]}))
        assert gone["status"] == "archived"
        assert data(await client.call_tool("recall", {"query": "cache key"}))["hits"] == []

    session(repo, steps)
    assert "memory: forget" in __import__("subprocess").run(
        ["git", "log", "-1", "--format=%s"], cwd=repo, capture_output=True, text=True).stdout


def test_errors_are_tool_errors_and_the_server_keeps_going(repo: Path, mem: memgit.Memgit) -> None:
    async def steps(client: Any) -> list[str]:
        messages = [
            error(await client.call_tool("show", {"ref": "m-nothere"})),
            error(await client.call_tool("recall", {})),
            error(await client.call_tool("recall", {"query": "x", "k": 0})),
            error(await client.call_tool("recall", {"query": 42})),
            error(await client.call_tool("remember", {"text": 'the staging password = "Xk29!aa-Q71z"'})),
            error(await client.call_tool("remember", {"text": "x", "kind": "rumour"})),
            error(await client.call_tool("forget", {"ref": ""})),
            error(await client.call_tool("no_such_tool", {})),
        ]
        data(await client.call_tool("list_topics", {}))  # still serving
        return messages

    messages = session(repo, steps)
    assert "no memory 'm-nothere'" in messages[0]
    assert "query" in messages[1] and "k" in messages[2] and "query" in messages[3]
    assert "Field required" in messages[1] and "greater than or equal to 1" in messages[2]
    assert "valid string" in messages[3]
    assert "looks like a secret" in messages[4] and "was not saved" in messages[4]
    assert "unknown kind 'rumour'" in messages[5]
    assert "forget" in messages[6] and "ref" in messages[6] and "at least 1 character" in messages[6]
    assert messages[7] == "Unknown tool: no_such_tool"
    assert mem.list() == []


def test_corrupt_file_and_files_changed_between_calls(repo: Path, mem: memgit.Memgit) -> None:
    mem.remember("deploys run from the release workflow")
    (repo / ".memory" / "broken.md").write_bytes(b"---\ntitle: x\n\0\0binary")
    (repo / ".memory" / "odd.md").write_text("---\ntitle: [unclosed\nkind: lesson\n---\n\nOdd release notes body.\n")

    async def steps(client: Any) -> tuple[list[str], list[str]]:
        first = [h["title"] for h in data(await client.call_tool("recall", {"query": "release"}))["hits"]]
        (repo / ".memory" / "new.md").write_text("# Release trains leave on Tuesdays\n\nCut the branch on Monday.\n")
        second = [h["title"] for h in data(await client.call_tool("recall", {"query": "release trains"}))["hits"]]
        return first, second

    first, second = session(repo, steps)
    assert "deploys run from the release workflow" in first
    assert second[0] == "Release trains leave on Tuesdays"


def test_without_a_memory_folder(repo: Path) -> None:
    async def steps(client: Any) -> str:
        return error(await client.call_tool("recall", {"query": "anything"}))

    assert "run 'memgit init' first" in session(repo, steps)


def test_help_does_not_import_the_sdk() -> None:
    import subprocess

    code = ("import sys; from click.testing import CliRunner; from memgit.cli import cli; "
            "CliRunner().invoke(cli, ['--help']); CliRunner().invoke(cli, ['mcp', '--help']); "
            "print(json.dumps(sorted(m for m in ('mcp', 'pydantic', 'git', 'merge3') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_checkpoint_resume_and_reflect_over_mcp(repo: Path, mem: memgit.Memgit) -> None:
    first = mem.remember("Retries use exponential backoff in ingest/http.py", kind="convention",
                         task_id="T-7").memory
    second = mem.remember("Retries use exponential back-off in ingest/http.py.", kind="convention",
                          force=True).memory
    head = __import__("subprocess").run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                                        text=True).stdout

    async def steps(client: Any) -> None:
        saved = data(await client.call_tool("checkpoint", {"intent": "make retries configurable for the ingest",
                                                           "task": "T-7"}))
        assert saved["task"] == "T-7" and saved["path"].startswith(".memory/")
        resumed = data(await client.call_tool("resume", {"task": "T-7"}))
        assert saved["id"] in resumed["ids"] and "make retries configurable" in resumed["text"]
        proposed = data(await client.call_tool("reflect", {}))
        assert "proposals" in proposed and proposed["summary"]["proposals"] == len(proposed["proposals"])
        assert all(isinstance(p["diff"], str) for p in proposed["proposals"])
        [merge] = [p for p in proposed["proposals"] if p["kind"] == "merge"]
        assert sorted(merge["ids"]) == sorted([first.id, second.id]) and merge["category"] == "duplicates"
        diff = merge["diff"]
        assert diff.count("deleted file mode 100644") == 1  # one of the two goes
        gone = first.id if f"-id: {first.id}" in diff else second.id
        assert f"-id: {gone}\n" in diff and f"+supersedes:\n+- {gone}\n" in diff  # the other supersedes it
        bad = await client.call_tool("reflect", {"only": ["nonsense"]})
        assert "unknown kind of proposal" in error(bad)

    session(repo, steps)
    # Nothing was committed by reflect (a proposal only), and the checkpoint is staged, not committed.
    assert __import__("subprocess").run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                                        text=True).stdout == head


def test_a_remember_the_repositorys_own_hook_refuses_is_a_tool_error_that_says_why(
        repo: Path, mem: memgit.Memgit) -> None:
    """Not memgit's error: the project's pre-commit hook says no. The agent is told the hook's own
    words and where the memory is; the file is kept, and the server goes on."""
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text('#!/bin/sh\necho "policy: memory commits need a ticket" >&2\nexit 1\n')
    hook.chmod(0o755)

    async def steps(client: Any) -> tuple[str, list[str]]:
        refused = error(await client.call_tool("remember", {"text": "the cache key includes the locale"}))
        hits = data(await client.call_tool("recall", {"query": "cache key locale"}))["hits"]
        return refused, [h["title"] for h in hits]

    refused, titles = session(repo, steps)
    assert "the commit was not made (policy: memory commits need a ticket)" in refused
    [kept] = (repo / ".memory").glob("the-cache-key-includes-the-locale-*.md")
    assert f"the change is written in the working tree (.memory/{kept.name})" in refused
    assert "run 'memgit finish' to commit it once the cause is fixed, or 'memgit abandon' to undo it" \
        in refused
    assert titles == ["the cache key includes the locale"]  # still serving, and the memory is not lost


def test_a_server_started_outside_a_repository_says_so_and_exits(tmp_path: Path) -> None:
    import subprocess

    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    started = subprocess.run([sys.executable, "-m", "memgit", "mcp"], cwd=outside, input="",
                             capture_output=True, text=True, timeout=60, check=False)
    assert started.returncode != 0 and started.stdout == ""  # nothing on stdout: that is the protocol's
    assert f"Error: {outside} is not inside a git repository; run 'git init' first" in started.stderr


def test_a_memory_folder_the_server_may_not_write_is_a_tool_error(repo: Path, mem: memgit.Memgit) -> None:
    """Not memgit's error: the operating system refuses the write (the server runs as a process
    the folder's mode refuses, as root too: see tests/unprivileged.py)."""
    from .unprivileged import argv

    command = argv([sys.executable, "-m", "memgit", "mcp"])
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(repo), env=dict(os.environ))
    folder = repo / ".memory"
    folder.chmod(0o555)

    async def main() -> tuple[str, Any]:
        async with Client(params) as client:
            refused = error(await client.call_tool("remember", {"text": "the cache key includes the locale"}))
            return refused, data(await client.call_tool("list_topics", {}))

    try:
        refused, topics = anyio.run(main)
    finally:
        folder.chmod(0o755)
    assert refused.startswith(f"Error executing tool remember: cannot write {folder}/the-cache-key-")
    assert refused.endswith(".md (Permission denied); check permissions and disk space.\nThe change is "
                            "kept in memgit's journal: run 'memgit finish' to commit it once the cause is "
                            "fixed, or 'memgit abandon' to undo it.")
    assert topics["total"] == 0 and mem.list() == []  # the server went on; nothing half-written
    assert __import__("subprocess").run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                                        text=True).stdout == ""
    assert mem.status()["interrupted_change"].startswith("'memory: ")  # what the message promised
