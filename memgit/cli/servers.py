"""`memgit mcp`: the MCP server itself, and its registration in agents' and editors' files."""

from __future__ import annotations

import click

from memgit.cli.agents import _finish, _root

AGENTS = ("claude", "codex", "cursor", "vscode", "windsurf", "gemini")


@click.group(invoke_without_command=True)
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve this repository's memory to an agent over MCP (stdio); needs memgit-agent[mcp].
    'memgit mcp install EDITOR' registers it in an editor's or agent's MCP file."""
    if ctx.invoked_subcommand is not None:
        return
    from memgit.mcpserver import serve  # when the command runs: `memgit --help` stays light

    obj = ctx.find_root().obj or {}
    serve(obj.get("path", "."), memory_dir=obj.get("memory_dir"))


def _plan(ctx: click.Context, editor: str, user: bool, remove: bool):  # type: ignore[no-untyped-def]
    if editor in ("claude", "codex"):
        from memgit.agents import mcpsetup  # when the command runs: `memgit --help` stays light

        return mcpsetup.plan(editor, _root(ctx), user=user, remove=remove)
    from memgit.agents import mcpfiles  # when the command runs: `memgit --help` stays light

    return mcpfiles.plan(editor, _root(ctx), user=user, remove=remove)


@mcp.command()
@click.argument("editor", type=click.Choice(AGENTS))
@click.option("--user", is_flag=True, help="Register it in the user's file, for every project.")
@click.option("--dry-run", is_flag=True, help="Print the change to the file; write nothing.")
@click.pass_context
def install(ctx: click.Context, editor: str, user: bool, dry_run: bool) -> None:
    """Register 'memgit mcp' in EDITOR's MCP file (the project's, or the user's with --user), merged
    with the servers and settings already there."""
    plan = _plan(ctx, editor, user, remove=False)
    _finish(plan, dry_run, f"registered memgit's MCP server for {editor} in {plan.path}")


@mcp.command()
@click.argument("editor", type=click.Choice(AGENTS))
@click.option("--user", is_flag=True, help="Remove it from the user's file instead of the project's.")
@click.option("--dry-run", is_flag=True, help="Print the change to the file; write nothing.")
@click.pass_context
def uninstall(ctx: click.Context, editor: str, user: bool, dry_run: bool) -> None:
    """Remove exactly the entry 'memgit mcp install' wrote (a file left with nothing else is deleted)."""
    plan = _plan(ctx, editor, user, remove=True)
    _finish(plan, dry_run, f"removed memgit's MCP server for {editor} from {plan.path}")
    if plan.changed and plan.after is None and not dry_run and not user and plan.path.parent != _root(ctx):
        try:
            plan.path.parent.rmdir()  # the project's `.cursor/` install made, when nothing else is in it
        except OSError:
            pass


COMMANDS = (mcp,)
