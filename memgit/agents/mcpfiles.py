"""Registering `memgit mcp` in an editor's MCP file: Cursor, VS Code, Windsurf, Gemini CLI.

| editor | project file | user file (`--user`) | servers under |
|---|---|---|---|
| cursor | `.cursor/mcp.json` | `~/.cursor/mcp.json` | `mcpServers` |
| vscode | `.vscode/mcp.json` | (the profile's, through VS Code) | `servers`, `"type": "stdio"` |
| windsurf | — | `~/.codeium/windsurf/mcp_config.json` | `mcpServers` |
| gemini | `.gemini/settings.json` | `~/.gemini/settings.json` | `mcpServers` |

A project file is committed and shared, so it names the `memgit` command on PATH, as Claude
Code's `.mcp.json` does. A user file names this machine's interpreter, isolated (`-I`), told
which project to serve: Cursor expands `${workspaceFolder}`; Windsurf starts servers outside
the project, so its entry names the project it was installed from; Gemini CLI starts them in
the folder it runs in. The entry is edited into the file's own text (`jsontext`): the other
servers, keys, indentation and line endings stay, and uninstall gives back the exact bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgit import launch
from memgit.agents import jsontext
from memgit.agents.agenthooks import Plan, project_file
from memgit.errors import MemgitError

#: The server's name in every file.
NAME = "memgit"


@dataclass(frozen=True)
class Editor:
    """Where an editor reads MCP servers and how it wants an entry."""

    name: str
    project: str | None
    user: Callable[[], Path] | None
    key: str = "mcpServers"
    typed: bool = False  # VS Code wants "type": "stdio" in the entry
    workspace: str | None = None  # the variable the editor expands to the open project


EDITORS: dict[str, Editor] = {
    "cursor": Editor("cursor", ".cursor/mcp.json", lambda: Path.home() / ".cursor" / "mcp.json",
                     workspace="${workspaceFolder}"),
    "vscode": Editor("vscode", ".vscode/mcp.json", None, key="servers", typed=True),
    "windsurf": Editor("windsurf", None, lambda: Path.home() / ".codeium" / "windsurf" / "mcp_config.json"),
    "gemini": Editor("gemini", ".gemini/settings.json", lambda: Path.home() / ".gemini" / "settings.json"),
}


def entry(editor: Editor, root: Path, *, user: bool, python: str | None = None) -> dict[str, Any]:
    """The server entry memgit writes: never anything read from the repository's files."""
    if user:
        where = [] if editor.name == "gemini" else ["-C", editor.workspace or str(root)]
        command, *args = launch.argv("memgit", *where, "mcp", python=python)
    else:
        command, args = "memgit", ["mcp"]
    return {"type": "stdio", "command": command, "args": args} if editor.typed else {"command": command, "args": args}


def path(editor: Editor, root: Path, *, user: bool) -> Path:
    """The file to change, refusing a project file that leads outside the work tree."""
    if user:
        if editor.user is None:
            raise MemgitError(
                "VS Code keeps user MCP servers in its profile: run 'MCP: Open User Configuration' in VS "
                "Code and add memgit there by hand, or register it for this project without --user"
            )
        target = editor.user()
        return target.resolve() if target.is_symlink() else target  # a dotfiles link stays a link
    if editor.project is None:
        raise MemgitError(f"{editor.name} reads MCP servers only from {editor.user() if editor.user else '?'}; "
                          "add --user")
    return project_file(root, editor.project)


def _read(target: Path) -> str | None:
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        return None
    except (OSError, IsADirectoryError) as exc:
        raise MemgitError(f"cannot read {target} ({exc}); fix it first") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise MemgitError(f"{target} is not UTF-8 text; fix it first, memgit will not overwrite it") from None


def _jsonc(text: str) -> bool:
    """Whether `text` parses once comments and trailing commas are taken out (JSONC)."""
    strings = r'"(?:\\.|[^"\\])*"'
    bare = re.sub(rf"({strings})|//[^\n]*|/\*.*?\*/", lambda m: m.group(1) or "", text, flags=re.DOTALL)
    bare = re.sub(rf"({strings})|,(\s*[}}\]])", lambda m: m.group(1) or m.group(2), bare)
    try:
        json.loads(bare)
    except ValueError:
        return False
    return True


def _load(target: Path, text: str, editor: Editor, wanted: dict[str, Any], remove: bool) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        for key in (editor.key, NAME):
            if keys.count(key) > 1:
                raise MemgitError(f"{target} has the key {key!r} twice; remove one by hand first")
        return dict(items)

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except ValueError as exc:
        if _jsonc(text):
            snippet = "\n".join(line[2:] for line in json.dumps({NAME: wanted}, indent=2).splitlines()[1:-1])
            what = (f'remove the "{NAME}" entry from its "{editor.key}" object by hand' if remove else
                    f'add this to its "{editor.key}" object by hand:\n{snippet}')
            raise MemgitError(
                f"{target} has comments or trailing commas, which memgit cannot keep when it edits the file; "
                + what
            ) from None
        raise MemgitError(f"{target} is not valid JSON ({exc}); fix it first, memgit left it as it is") from None


def plan(name: str, root: Path, *, user: bool = False, remove: bool = False, python: str | None = None) -> Plan:
    """The change to the editor's MCP file that adds (or removes) memgit's server."""
    editor = EDITORS.get(name)
    if editor is None:
        raise MemgitError(f"no MCP registration for {name!r}; use one of: claude, codex, {', '.join(EDITORS)}")
    target = path(editor, root, user=user)
    wanted = entry(editor, root, user=user, python=python)
    before = _read(target)
    if before is None or not before.strip():
        if remove:
            return Plan(target, before, before)
        return Plan(target, before, json.dumps({editor.key: {NAME: wanted}}, indent=2) + "\n")
    doc = _load(target, before, editor, wanted, remove)
    if not isinstance(doc, dict):
        raise MemgitError(f"{target} is not a JSON object; fix it first")
    servers = doc.get(editor.key)
    if editor.key in doc and not isinstance(servers, dict):
        raise MemgitError(f"'{editor.key}' in {target} is not an object; fix it by hand first")
    top = jsontext.parse(before)
    if remove:
        if not servers or NAME not in servers:
            return Plan(target, before, before)
        holder = top.get(editor.key)
        assert holder is not None
        inner = jsontext.parse(before, holder.value_start)
        if len(inner.members) > 1:
            return Plan(target, before, jsontext.remove(before, inner, NAME))
        after = jsontext.remove(before, top, editor.key)  # memgit was the only server: its key goes
        return Plan(target, before, None if not jsontext.parse(after).members else after)
    if servers is None:
        return Plan(target, before, jsontext.add(before, top, editor.key, {NAME: wanted}))
    holder = top.get(editor.key)
    assert holder is not None
    inner = jsontext.parse(before, holder.value_start)
    current = inner.get(NAME)
    if current is None:
        return Plan(target, before, jsontext.add(before, inner, NAME, wanted))
    if servers[NAME] == wanted:
        return Plan(target, before, before)
    return Plan(target, before, jsontext.replace(before, current, wanted))
