"""Registering `memgit mcp` with an agent (`memgit hooks install claude|codex --mcp`).

Claude Code reads project servers from `.mcp.json` (`mcpServers`, merged like the hook
settings: other servers stay as they are); Codex from a `[mcp_servers.memgit]` table in
`.codex/config.toml` (the project's, for trusted projects) or `~/.codex/config.toml` (`--user`).
The project's files are committed and shared, so they name the `memgit` command found on
PATH (the same on every machine; a console script does not put the current folder on the
import path). Codex's user config (`--user`) names this machine's interpreter, run isolated
(`-I`), so it works whatever PATH Codex has. Uninstalling removes exactly that entry or table.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from memgit import launch
from memgit.agents import agenthooks
from memgit.agents.agenthooks import Plan
from memgit.agents.sessionfiles import codex_home
from memgit.errors import MemgitError

#: The first line of the TOML table memgit writes; how uninstall recognises it.
TOML_HEADER = "[mcp_servers.memgit]"
_TABLE = re.compile(r"^\[mcp_servers\.memgit\][^\n]*\n(?:(?!\[)[^\n]*\n?)*", re.MULTILINE)


def unisolated(agent: str, root: Path, *, user: bool = False) -> str | None:
    """What to run when memgit's MCP server is registered as an older memgit wrote it
    (`python -m memgit mcp` without `-I`, which imports a `memgit/` folder of the project the
    agent starts it in); None when it is not."""
    try:
        if agent == "claude" and not user:
            server = agenthooks._read(root / ".mcp.json")[1].get("mcpServers", {}).get("memgit", {})
            args = server.get("args", []) if isinstance(server, dict) else []
        elif agent == "codex":
            import tomllib  # only for Codex's settings

            path = codex_home() / "config.toml" if user else agenthooks.project_file(root, ".codex/config.toml")
            table = tomllib.loads(path.read_text(encoding="utf-8")).get("mcp_servers", {}).get("memgit", {})
            args = table.get("args", []) if isinstance(table, dict) else []
        else:
            return None
    except (OSError, ValueError, AttributeError, MemgitError):
        return None
    args = [str(a) for a in args] if isinstance(args, list) else []
    if "-m" not in args or args[args.index("-m") + 1:][:1] != ["memgit"]:
        return None
    if {"-I", "-E"} & set(args[:args.index("-m")]):
        return None
    return f"memgit hooks install {agent} --mcp{' --user' if user else ''}"


def plan(agent: str, root: Path, *, user: bool = False, remove: bool = False, python: str | None = None) -> Plan:
    """The change to the agent's MCP configuration that adds (or removes) memgit's server."""
    if user:
        command, *args = launch.argv("memgit", "mcp", python=python)
    else:
        command, args = "memgit", ["mcp"]
    if agent == "claude":
        if user:
            raise MemgitError("memgit registers its MCP server per project (.mcp.json); for every project "
                              "use 'claude mcp add --scope user memgit -- memgit mcp'")
        path = agenthooks.project_file(root, ".mcp.json")
        before, doc, indent = agenthooks._read(path)
        servers = doc.get("mcpServers", {})
        if not isinstance(servers, dict):
            raise MemgitError(f"'mcpServers' in {path} is not an object; fix it by hand first")
        servers = {k: v for k, v in servers.items() if k != "memgit"}
        if not remove:
            servers["memgit"] = {"type": "stdio", "command": command, "args": args}
        if servers:
            doc["mcpServers"] = servers
        else:
            doc.pop("mcpServers", None)
        return Plan(path, before, agenthooks._dump(doc, indent) if doc else None)
    if agent == "codex":
        path = codex_home() / "config.toml" if user else agenthooks.project_file(root, ".codex/config.toml")
        try:
            old: str | None = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            old = None
        text = _TABLE.sub("", old or "")
        if text != (old or ""):
            text = text.rstrip("\n") + "\n"  # the blank line put before the table goes with it
        if not remove:
            block = f"{TOML_HEADER}\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"
            text = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block
        return Plan(path, old, text if text.strip() else None)
    raise MemgitError(f"no MCP registration for {agent!r}; use claude or codex")
