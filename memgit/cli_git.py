"""The `memgit diff` and `memgit mcp` commands (git review and the MCP server)."""

from __future__ import annotations

import click

from memgit.cli import _json, _open, cli, json_option


@cli.command()
@click.argument("rev_range", required=False, metavar="[REV_RANGE]")
@json_option
@click.pass_context
def diff(ctx: click.Context, rev_range: str | None, as_json: bool) -> None:
    """Memory changes of REV_RANGE (main...HEAD, A..B, A; none: HEAD to the work tree), and any
    other file changed under .memory/, as Markdown for a pull-request comment."""
    from memgit.git.memdiff import markdown

    found = _open(ctx).review(rev_range)
    if as_json:
        _json([change.to_dict() for change in found.memories] + [f.to_dict() for f in found.files])
    else:
        click.echo(markdown(found.memories, files=found.files, under=found.under), nl=False)


@cli.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve this repository's memory to an agent over MCP (stdio); needs memgit[mcp]."""
    from memgit.mcpserver import serve

    obj = ctx.find_root().obj or {}
    serve(obj.get("path", "."), memory_dir=obj.get("memory_dir"))
