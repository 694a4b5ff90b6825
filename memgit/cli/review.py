"""`memgit diff`: the memory changes of a revision range, for a review."""

from __future__ import annotations

import click

from memgit.cli.common import echo_json, json_option, open_memgit


@click.command()
@click.argument("rev_range", required=False, metavar="[REV_RANGE]")
@json_option
@click.pass_context
def diff(ctx: click.Context, rev_range: str | None, as_json: bool) -> None:
    """Memory changes of REV_RANGE (main...HEAD, A..B, A; none: HEAD to the work tree), and any
    other file changed under .memory/, as Markdown for a pull-request comment."""
    from memgit.git.memdiff import markdown  # when the command runs: `memgit --help` stays light

    found = open_memgit(ctx).review(rev_range)
    if as_json:
        echo_json([change.to_dict() for change in found.memories] + [f.to_dict() for f in found.files])
    else:
        click.echo(markdown(found.memories, files=found.files, under=found.under), nl=False)


COMMANDS = (diff,)
