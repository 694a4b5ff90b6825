"""`memgit rules`: the pinned memories, conventions and preferences in agents' rules files."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from memgit.cli.common import echo_json, json_option, open_memgit, warn
from memgit.errors import MemgitError

if TYPE_CHECKING:
    from memgit.api import Memgit

TARGET_NAMES = ("agents", "claude", "gemini", "cursor", "copilot", "windsurf", "all")
_SAID = {"created": "created, with the memgit block", "updated": "memgit block updated", "added": "memgit block added",
         "unchanged": "memgit block already current", "removed": "memgit block removed",
         "deleted": "deleted (memgit had created it for its block)", "absent": "no memgit block",
         "current": "memgit block is current"}


@click.command()
@click.option("--target", "names", multiple=True, type=click.Choice(TARGET_NAMES), metavar="NAME",
              help="Which file (repeatable): agents (AGENTS.md), claude (CLAUDE.md), gemini (GEMINI.md), "
                   "cursor (.cursor/rules/memgit.mdc), copilot (.github/copilot-instructions.md), "
                   "windsurf (.windsurf/rules/memgit.md), all. Default: the files the project has.")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 when a block is missing, out of date or "
                                            "edited by hand (for CI and pre-commit).")
@click.option("--remove", is_flag=True, help="Take the block out again; a file memgit created for it is deleted.")
@click.option("--force", is_flag=True, help="Overwrite (or with --remove, remove) a block that was edited by hand.")
@json_option
@click.pass_context
def rules(ctx: click.Context, names: Sequence[str], check: bool, remove: bool, force: bool, as_json: bool) -> None:
    """Write the pinned memories and the strongest conventions and preferences into the rules
    files agents read at every session start (AGENTS.md, CLAUDE.md…), between memgit's markers.

    Only the block is ever touched; running it again changes nothing. Once a file has a block,
    git's hooks (after a pull or checkout), `reflect --apply` and `capture --apply` keep it
    current. Without --target: the rules files the project has, else AGENTS.md.
    """
    if check and remove:
        raise click.UsageError("--check and --remove do not go together")
    action = "check" if check else "remove" if remove else "write"
    results = open_memgit(ctx).rules(action, targets=names, force=force)
    if as_json:
        echo_json([{"path": r.path, "state": r.state, "message": r.message, "left_out": list(r.left_out)}
                   for r in results])
    else:
        for result in results:
            click.echo(result.message or f"{result.path}: {_SAID.get(result.state, result.state)}",
                       err=result.state in ("stale", "edited"))
        left = results[0].left_out if results else ()
        if left:
            click.echo(f"left out (over the [rules] budget): {', '.join(left)}", err=True)
    if check and any(r.state != "current" for r in results):
        ctx.exit(1)


def refresh_blocks(mem: Memgit) -> None:
    """After a command changed memories: bring the rules files that have a memgit block up to
    date, saying which on stderr; a problem with them is a warning, never the command's failure."""
    try:
        for result in mem.rules("refresh"):
            click.echo(f"{result.path}: memgit block updated", err=True)
    except MemgitError as exc:
        warn(f"rules files not updated: {exc}")


COMMANDS = (rules,)
