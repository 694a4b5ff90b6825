"""Installing memgit's hooks into an agent's settings, and taking them out again.

`memgit hooks` works on *targets*: each target knows where its settings live and which
events to register. Claude Code and Codex share one settings shape (event → matcher groups
→ command handlers) in a JSON file: `.claude/settings.json` (or `~/.claude/settings.json`
with `--user`) and `.codex/hooks.json` (or `~/.codex/hooks.json`). Another target (git
hooks, say) registers itself in `TARGETS` with the same three methods.

Install merges: it never touches another tool's handlers, keeps the file's indentation and
key order, replaces memgit's own handlers (recognised by `memgit-hook` or `-m memgit.hookrun`
in the command) so that running it twice changes nothing, and `--dry-run` prints the change
as a diff. Uninstall removes exactly memgit's handlers, and groups and events it leaves empty.

The project's settings are committed and shared, so their command is the same on every
machine: `memgit-hook AGENT EVENT`, found on PATH (a teammate without memgit gets a hook that
does nothing). The user's settings (`--user`) name this machine's interpreter instead,
`'<python>' -I -m memgit.hookrun AGENT EVENT`, so they work whatever PATH the agent has;
`status` says when that interpreter has gone or `memgit-hook` is not on PATH. Both end in
`2>/dev/null || true`: a missing memgit must not break a session.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from memgit import launch
from memgit.agents.sessionfiles import claude_home, codex_home
from memgit.errors import MemgitError
from memgit.git import localstate

MARKER = "-m memgit.hookrun"
#: A handler an older memgit wrote: `python -m memgit.hookrun`, without `-I` (or `-E -P`).
_UNISOLATED = re.compile(r"(?<! -I)(?<! -P) -m memgit\.hookrun ")


@dataclass(frozen=True)
class Event:
    name: str  # the agent's event name
    run: str  # memgit.hookrun's event
    matcher: str | None
    timeout: int
    optional: bool = False  # only with --prompts


@dataclass(frozen=True)
class Plan:
    """A settings file before and after a change; `diff` is what `--dry-run` prints."""

    path: Path
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(True),
                (self.after or "").splitlines(True),
                str(self.path),
                str(self.path),
            )
        )


class Target(Protocol):
    """What `memgit hooks` needs of a target; a new one (git hooks) goes into `TARGETS`."""

    @property
    def name(self) -> str: ...

    def install(self, root: Path, *, user: bool = False, prompts: bool = False) -> Plan: ...
    def uninstall(self, root: Path, *, user: bool = False) -> Plan: ...
    def status(self, root: Path) -> list[dict[str, Any]]: ...


def hook_command(agent: str, event: str, python: str | None = None, *, shared: bool = False) -> str:
    """The handler's command: `memgit-hook` from PATH when `shared` (committed settings),
    else this interpreter, isolated."""
    if shared:
        return f"{launch.HOOK_COMMAND} {agent} {event} 2>/dev/null || true"
    return f"{launch.command('memgit.hookrun', agent, event, python=python)} 2>/dev/null || true"


def ours(command: object) -> bool:
    """Whether a handler's command is one memgit wrote."""
    text = str(command)
    return MARKER in text or text.startswith(f"{launch.HOOK_COMMAND} ")


@dataclass(frozen=True)
class JsonHooks:
    """An agent whose hooks live in a JSON file of the Claude Code shape."""

    name: str
    project: str
    user: Callable[[], Path]
    events: tuple[Event, ...]
    note: str = ""
    python: Callable[[], str] = field(default=lambda: sys.executable)

    def path(self, root: Path, user: bool) -> Path:
        return self.user() if user else project_file(root, self.project)

    def install(self, root: Path, *, user: bool = False, prompts: bool = False) -> Plan:
        path = self.path(root, user)
        before, doc, indent = _read(path)
        hooks = _strip(doc)
        for event in self.events:
            if event.optional and not prompts:
                continue
            group: dict[str, Any] = {} if event.matcher is None else {"matcher": event.matcher}
            group["hooks"] = [
                {
                    "type": "command",
                    "command": hook_command(self.name, event.run, self.python(), shared=not user),
                    "timeout": event.timeout,
                }
            ]
            hooks.setdefault(event.name, []).append(group)
        doc["hooks"] = hooks
        return Plan(path, before, _dump(doc, indent))

    def uninstall(self, root: Path, *, user: bool = False) -> Plan:
        path = self.path(root, user)
        before, doc, indent = _read(path)
        if before is None:
            return Plan(path, None, None)
        hooks = _strip(doc)
        if hooks:
            doc["hooks"] = hooks
        else:
            doc.pop("hooks", None)
        return Plan(path, before, _dump(doc, indent) if doc else None)

    def status(self, root: Path) -> list[dict[str, Any]]:
        rows = []
        for scope, path in (("project", self.path(root, False)), ("user", self.path(root, True))):
            try:
                _, doc, _ = _read(path)
            except MemgitError as exc:
                rows.append(
                    {"agent": self.name, "scope": scope, "path": str(path), "events": [], "problem": str(exc)}
                )
                continue
            events, pythons = [], set()
            for name, groups in (doc.get("hooks") or {}).items():
                for command in _commands(groups):
                    if ours(command):
                        events.append(name)
                        pythons.add(shlex.split(command)[0])
            row: dict[str, Any] = {
                "agent": self.name,
                "scope": scope,
                "path": str(path),
                "events": sorted(set(events)),
                "problem": None,
            }
            for python in sorted(pythons):
                row["problem"] = runs(python)
            if any(ours(c) and _UNISOLATED.search(c) for groups in (doc.get("hooks") or {}).values()
                   for c in _commands(groups)):
                again = f"memgit hooks install {self.name}{' --user' if scope == 'user' else ''}"
                row["problem"] = ("written by an older memgit: its Python runs without -I, so a memgit/ "
                                  f"folder in the repository would run; run '{again}' again")
            if events and self.note:
                row["note"] = self.note
            rows.append(row)
        return rows


def runs(python: str) -> str | None:
    """Why the hook command's interpreter cannot run memgit's hooks, or None when it can."""
    if python == launch.HOOK_COMMAND:
        if shutil.which(python) is None:
            return (f"{python} is not on PATH here, so these hooks do nothing on this machine: put the "
                    "folder of memgit's 'memgit' command on PATH, or install with --user")
        return None
    if not os.path.exists(python):
        return f"{python} is gone: run 'memgit hooks install' again from memgit's environment"
    try:
        done = subprocess.run(
            [python, "-c", "import memgit.hookrun"], capture_output=True, timeout=20, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{python} does not start ({exc})"
    return (
        None if done.returncode == 0 else f"{python} cannot import memgit: run 'memgit hooks install' again"
    )


def _commands(groups: Any) -> list[str]:
    out = []
    for group in groups if isinstance(groups, list) else []:
        for handler in (group.get("hooks") or []) if isinstance(group, dict) else []:
            if isinstance(handler, dict) and isinstance(handler.get("command"), str):
                out.append(handler["command"])
    return out


def _strip(doc: dict[str, Any]) -> dict[str, Any]:
    """The `hooks` mapping without memgit's handlers, and without groups or events left empty."""
    hooks = doc.get("hooks")
    if hooks is None:
        return {}
    if not isinstance(hooks, dict):
        raise MemgitError("'hooks' in the settings is not an object; fix it by hand first")
    out: dict[str, Any] = {}
    for name, groups in hooks.items():
        if not isinstance(groups, list):
            out[name] = groups
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [
                    h for h in group["hooks"] if not (isinstance(h, dict) and ours(h.get("command")))
                ]
                if not handlers and group["hooks"]:
                    continue
                group = {**group, "hooks": handlers}
            kept.append(group)
        if kept or not groups:
            out[name] = kept
    return out


def project_file(root: Path, rel: str) -> Path:
    """`root / rel`, a file of the project's own: refused when it is a link, or a folder on the
    way links outside the work tree or into the git directory (a committed link would make memgit
    copy a file of the user's into the project, or write a file outside it)."""
    target, top = root / rel, root.resolve()
    real = target.resolve()
    if target.is_symlink() or not real.is_relative_to(top) or ".git" in real.relative_to(top).parts:
        raise MemgitError(f"{target} is a symbolic link or leads outside the work tree; memgit will not read or "
                          "write through it: replace it with a plain file, or add the entry by hand")
    return target


def _read(path: Path) -> tuple[str | None, dict[str, Any], int | str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}, 2
    except (OSError, UnicodeDecodeError) as exc:
        raise MemgitError(f"cannot read {path} ({exc}); fix it first") from None
    if not text.strip():
        return text, {}, 2
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise MemgitError(
            f"{path} is not valid JSON ({exc}); fix it first, memgit will not overwrite it"
        ) from None
    if not isinstance(doc, dict):
        raise MemgitError(f"{path} is not a JSON object; fix it first")
    match = re.search(r"^([ \t]+)\S", text, re.MULTILINE)
    indent: int | str = (
        2 if match is None else (len(match.group(1)) if " " in match.group(1) else match.group(1))
    )
    return text, doc, indent


def _dump(doc: dict[str, Any], indent: int | str) -> str:
    return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"


def apply(plan: Plan) -> None:
    """Write the plan (atomically), or delete the file when nothing is left in it."""
    if not plan.changed:
        return
    if plan.after is None:
        plan.path.unlink(missing_ok=True)
        return
    localstate.replace(plan.path, plan.after)


TARGETS: dict[str, Target] = {
    "claude": JsonHooks(
        "claude",
        ".claude/settings.json",
        lambda: claude_home() / "settings.json",
        (
            Event("SessionStart", "session-start", "startup|resume|clear|compact", 10),
            Event("PreCompact", "pre-compact", "manual|auto", 30),
            Event("SessionEnd", "session-end", None, 5),
            Event("UserPromptSubmit", "user-prompt", None, 5, optional=True),
        ),
    ),
    "codex": JsonHooks(
        "codex",
        ".codex/hooks.json",
        lambda: codex_home() / "hooks.json",
        (
            Event("SessionStart", "session-start", "startup|resume|clear|compact", 10),
            Event("PreCompact", "pre-compact", "manual|auto", 30),
            Event("Stop", "stop", None, 10),
            Event("UserPromptSubmit", "user-prompt", None, 5, optional=True),
        ),
        note="Codex runs new or changed hooks only after you trust them (/hooks in Codex)",
    ),
}


def target(name: str) -> Target:
    if name not in TARGETS:
        raise MemgitError(f"unknown hook target {name!r}; use one of {', '.join(TARGETS)}")
    return TARGETS[name]
