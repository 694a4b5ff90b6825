"""Registering memgit's merge driver: `.gitattributes` (committed) and the clone's git config.

`.gitattributes` travels with the repository, but git config does not: a fresh clone names
the driver without defining it, and git then silently falls back to a plain text merge.
`memgit status` reports that; `memgit init` (run again) and every memgit write fix it.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from memgit import launch
from memgit.git import repo as gitrepo

DRIVER = "memgit"
PATTERNS = ("**/*.md", "**/*.MD", "**/*.markdown")


def driver_command() -> str:
    """The command git runs: this interpreter, so the driver works outside any virtualenv,
    isolated (`-I`) so that files of the repository being merged cannot be imported."""
    # %S %X %Y (git >= 2.44) are the conflict labels; older git passes them unexpanded.
    return f"{launch.command('memgit.mergedriver')} %O %A %B %L %P %S %X %Y"


def _prefix(repo: gitrepo.Repo, memory_dir: Path) -> str:
    rel = Path(os.path.relpath(memory_dir, repo.root)).as_posix()
    return "" if rel == "." else rel + "/"


def attribute_lines(repo: gitrepo.Repo, memory_dir: Path) -> list[str]:
    prefix = _prefix(repo, memory_dir)
    return [f"{prefix}{pattern} merge={DRIVER}" for pattern in PATTERNS]


def write_attributes(repo: gitrepo.Repo, memory_dir: Path) -> Path | None:
    """Add the driver's lines to the root `.gitattributes`; returns its path if it changed."""
    path = repo.root / ".gitattributes"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in attribute_lines(repo, memory_dir) if line not in present]
    if not missing:
        return None
    if text and not text.endswith("\n"):
        text += "\n"
    header = "# memgit: merge memory files field by field (memgit init registers the driver)\n"
    path.write_text(text + ("" if header.strip() in present else header) + "\n".join(missing) + "\n", encoding="utf-8")
    return path


def configure(repo: gitrepo.Repo) -> None:
    """Define the driver in this clone's config (worktrees share it)."""
    gitrepo.config_set(repo, f"merge.{DRIVER}.name", "memgit memory merge driver")
    gitrepo.config_set(repo, f"merge.{DRIVER}.driver", driver_command())


def state(repo: gitrepo.Repo, memory_dir: Path) -> str:
    """One line for `memgit status`: whether git will use the driver for memory files."""
    named = gitrepo.attribute(repo, "merge", f"{_prefix(repo, memory_dir)}probe.md") == DRIVER
    command = gitrepo.config_get(repo, f"merge.{DRIVER}.driver")
    if not named:
        return "not set up: .gitattributes does not name it for memory files; run 'memgit init'"
    if command is None:
        return ("missing: .gitattributes names the memgit merge driver but this clone does not define it, so git "
                "merges memory files as plain text; run 'memgit init' to register it")
    if not _runnable(command):
        return f"broken: its interpreter is gone ({command.split()[0]}); run 'memgit init' to register it again"
    return "configured"


def ensure(repo: gitrepo.Repo) -> bool:
    """Register the driver if `.gitattributes` names it and this clone lacks it (or its
    interpreter is gone). Returns True when it registered it. Silent: any write calls it."""
    command = gitrepo.config_get(repo, f"merge.{DRIVER}.driver")
    if command is not None and _runnable(command) and not _unisolated(command):
        return False
    if command is None:
        path = repo.root / ".gitattributes"
        try:
            if f"merge={DRIVER}" not in path.read_text(encoding="utf-8", errors="replace"):
                return False
        except OSError:
            return False
    configure(repo)
    return True


def _unisolated(command: str) -> bool:
    """A driver registered by an older memgit: `python -m memgit.mergedriver`, without `-I`."""
    return " -m memgit.mergedriver " in command and launch.command("memgit.mergedriver") not in command


def _runnable(command: str) -> bool:
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    return os.path.isabs(program) is False or os.access(program, os.X_OK)
