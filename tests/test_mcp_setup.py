"""`memgit hooks install claude|codex --mcp`: the MCP server registered beside the hooks,
merged into the agent's configuration, and removed exactly by uninstall."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

from click.testing import CliRunner

from memgit.cli import cli


def run(repo: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)


def test_claude_mcp_json_keeps_other_servers(repo: Path) -> None:
    mcp = repo / ".mcp.json"
    mcp.write_text('{\n  "mcpServers": {\n    "other": {"command": "other-server"}\n  }\n}\n')
    assert run(repo, "hooks", "install", "claude", "--mcp").exit_code == 0
    servers = json.loads(mcp.read_text())["mcpServers"]
    assert servers["other"] == {"command": "other-server"}
    # Committed and shared: the command on PATH, never this machine's interpreter.
    assert servers["memgit"] == {"type": "stdio", "command": "memgit", "args": ["mcp"]}
    installed = mcp.read_bytes()
    assert run(repo, "hooks", "install", "claude", "--mcp").exit_code == 0  # idempotent
    assert mcp.read_bytes() == installed
    assert run(repo, "hooks", "uninstall", "claude").exit_code == 0
    assert json.loads(mcp.read_text()) == {"mcpServers": {"other": {"command": "other-server"}}}


def test_codex_config_toml_table_added_and_removed(repo: Path) -> None:
    config = repo / ".codex" / "config.toml"
    config.parent.mkdir()
    original = 'model = "o4"\n\n[mcp_servers.other]\ncommand = "other"\n'
    config.write_text(original)
    assert run(repo, "hooks", "install", "codex", "--mcp").exit_code == 0
    data = tomllib.loads(config.read_text())
    assert data["model"] == "o4" and data["mcp_servers"]["other"] == {"command": "other"}
    assert data["mcp_servers"]["memgit"] == {"command": "memgit", "args": ["mcp"]}
    installed = config.read_bytes()
    assert run(repo, "hooks", "install", "codex", "--mcp").exit_code == 0
    assert config.read_bytes() == installed
    assert run(repo, "hooks", "uninstall", "codex").exit_code == 0
    assert config.read_text() == original


def test_codex_user_config_names_this_interpreter_isolated(repo: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert run(repo, "hooks", "install", "codex", "--user", "--mcp").exit_code == 0
    data = tomllib.loads((tmp_path / "codex-home" / "config.toml").read_text())
    assert data["mcp_servers"]["memgit"] == {"command": sys.executable, "args": ["-I", "-m", "memgit", "mcp"]}
