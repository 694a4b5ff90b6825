"""`memgit hooks install/uninstall/status`: merged into the agents' settings, never clobbered."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from click.testing import CliRunner

from memgit.cli import cli

DATA = Path(__file__).parent / "data" / "agents" / "settings"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_install_merges_keeps_formatting_and_uninstall_restores_the_bytes(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    shutil.copy(DATA / "settings_with_user_hooks.json", settings)
    original = settings.read_bytes()

    dry = run("-C", str(repo), "hooks", "install", "claude", "--dry-run")
    assert dry.exit_code == 0 and '+        "PreCompact": [' in dry.stdout
    assert settings.read_bytes() == original  # a dry run writes nothing

    assert run("-C", str(repo), "hooks", "install", "claude").exit_code == 0
    doc = json.loads(settings.read_text())
    assert list(doc) == ["permissions", "hooks"]  # key order kept
    assert list(doc["hooks"]) == ["PostToolUse", "SessionStart", "PreCompact", "SessionEnd"]
    starts = doc["hooks"]["SessionStart"]
    assert starts[0]["hooks"][0]["command"] == "echo 'Remember: the staging DB is read-only'"
    ours = starts[1]["hooks"][0]["command"]
    assert starts[1]["matcher"] == "startup|resume|clear|compact"
    assert ours == "memgit-hook claude session-start 2>/dev/null || true"  # the same on every machine
    assert '\n    "hooks": {\n        "PostToolUse"' in settings.read_text()  # its 4-space indent

    installed = settings.read_bytes()
    again = run("-C", str(repo), "hooks", "install", "claude")
    assert "nothing to do" in again.stderr and settings.read_bytes() == installed  # idempotent

    assert run("-C", str(repo), "hooks", "uninstall", "claude").exit_code == 0
    assert settings.read_bytes() == original


def test_install_codex_with_prompts_then_uninstall_removes_the_file_it_made(repo: Path) -> None:
    assert run("-C", str(repo), "hooks", "install", "codex", "--prompts").exit_code == 0
    doc = json.loads((repo / ".codex" / "hooks.json").read_text())
    assert list(doc["hooks"]) == ["SessionStart", "PreCompact", "Stop", "UserPromptSubmit"]
    status = run("-C", str(repo), "hooks", "status")
    assert "codex  project PreCompact, SessionStart, Stop, UserPromptSubmit" in status.stdout
    assert "trust them" in status.stdout and "claude project not installed" in status.stdout
    assert run("-C", str(repo), "hooks", "uninstall", "codex").exit_code == 0
    assert not (repo / ".codex" / "hooks.json").exists()


def test_user_scope_and_a_vanished_interpreter(repo: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    assert run("-C", str(repo), "hooks", "install", "claude", "--user").exit_code == 0
    path = tmp_path / "claude-home" / "settings.json"
    text = path.read_text()
    python = json.loads(text)["hooks"]["SessionEnd"][0]["hooks"][0]["command"].split()[0]
    path.write_text(text.replace(python, "/gone/venv/bin/python"))
    status = json.loads(run("-C", str(repo), "hooks", "status", "--json").stdout)
    (user,) = [row for row in status["targets"] if row["agent"] == "claude" and row["scope"] == "user"]
    assert user["events"] == ["PreCompact", "SessionEnd", "SessionStart"]
    assert user["problem"].startswith("/gone/venv/bin/python is gone: run 'memgit hooks install'")
    run("-C", str(repo), "hooks", "install", "claude", "--user")  # repairs it
    assert "/gone/" not in path.read_text()


def test_bad_settings_and_unknown_targets_are_refused(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}')
    result = run("-C", str(repo), "hooks", "install", "claude")
    assert result.exit_code == 1 and "is not valid JSON" in result.stderr
    assert settings.read_text() == '{"hooks": {,}'
    result = run("-C", str(repo), "hooks", "install", "vim")
    assert result.exit_code == 1 and "unknown hook target 'vim'; use one of claude, codex" in result.stderr


def test_project_settings_are_the_same_on_every_machine_and_harmless_without_memgit(
        repo: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import dataclasses
    import subprocess

    from memgit.agents import agenthooks, mcpsetup

    assert run("-C", str(repo), "hooks", "install", "claude", "--mcp").exit_code == 0
    assert run("-C", str(repo), "hooks", "install", "codex", "--mcp").exit_code == 0
    shared = (".claude/settings.json", ".codex/hooks.json", ".mcp.json", ".codex/config.toml")
    committed = {p: (repo / p).read_bytes() for p in shared}
    for path, data in committed.items():
        assert b"python" not in data and str(repo).encode() not in data, path
    # A teammate whose memgit lives in another interpreter installs again: nothing changes.
    for name in ("claude", "codex"):
        teammate = "/home/teammate/venv/bin/python"
        elsewhere = dataclasses.replace(agenthooks.TARGETS[name], python=lambda: teammate)
        assert not elsewhere.install(repo, prompts=False).changed
        assert not mcpsetup.plan(name, repo, python=teammate).changed
    # A teammate without memgit: every hook does nothing, says nothing, and lets the agent go on.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    for settings in (".claude/settings.json", ".codex/hooks.json"):
        for groups in json.loads(committed[settings])["hooks"].values():
            command = groups[0]["hooks"][0]["command"]
            done = subprocess.run(["sh", "-c", command], cwd=repo, input=b'{"session_id": "s"}',
                                  capture_output=True, timeout=60)
            assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), command
    status = json.loads(run("-C", str(repo), "hooks", "status", "--json").stdout)
    (project,) = [row for row in status["targets"] if row["agent"] == "claude" and row["scope"] == "project"]
    assert project["problem"].startswith("memgit-hook is not on PATH here")


def test_handlers_an_older_memgit_wrote_unisolated_are_reported_then_replaced(repo: Path) -> None:
    """`'<python>' -m memgit.hookrun …` (no -I) imports a `memgit/` folder of the repository it
    runs in: status says so, and installing again writes `memgit-hook`."""
    assert run("-C", str(repo), "hooks", "install", "claude").exit_code == 0
    settings = repo / ".claude" / "settings.json"
    older = f"'{sys.executable}' -m memgit.hookrun claude"
    settings.write_text(settings.read_text().replace("memgit-hook claude", older))
    status = json.loads(run("-C", str(repo), "hooks", "status", "--json").stdout)
    (project,) = [row for row in status["targets"] if row["agent"] == "claude" and row["scope"] == "project"]
    assert project["problem"].startswith("written by an older memgit: its Python runs without -I")
    assert "run 'memgit hooks install claude' again" in project["problem"]

    assert run("-C", str(repo), "hooks", "install", "claude").exit_code == 0
    text = settings.read_text()
    assert "memgit.hookrun" not in text and "memgit-hook claude session-end" in text
    status = json.loads(run("-C", str(repo), "hooks", "status", "--json").stdout)
    (project,) = [row for row in status["targets"] if row["agent"] == "claude" and row["scope"] == "project"]
    assert project["problem"] is None or "not on PATH" in project["problem"]


def test_an_mcp_server_registered_by_an_older_memgit_is_reported(repo: Path) -> None:
    """`.mcp.json` naming `python -m memgit mcp` (no -I) runs a project's `memgit/` folder: status
    says so, and `install --mcp` writes `memgit mcp`."""
    mcp = repo / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"memgit": {"type": "stdio", "command": sys.executable,
                                                         "args": ["-m", "memgit", "mcp"]}}}))
    status = json.loads(run("-C", str(repo), "hooks", "status", "--json").stdout)
    (project,) = [row for row in status["targets"] if row["agent"] == "claude" and row["scope"] == "project"]
    assert "registered as an older memgit wrote it" in project["problem"]
    assert "run 'memgit hooks install claude --mcp' again" in project["problem"]

    assert run("-C", str(repo), "hooks", "install", "claude", "--mcp").exit_code == 0
    assert json.loads(mcp.read_text())["mcpServers"]["memgit"]["command"] == "memgit"
    status = json.loads(run("-C", str(repo), "hooks", "status", "--json").stdout)
    (project,) = [row for row in status["targets"] if row["agent"] == "claude" and row["scope"] == "project"]
    assert project["problem"] is None or "not on PATH" in project["problem"]
