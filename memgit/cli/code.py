"""Memories and the code they describe: `verify`, `doubts`."""

from __future__ import annotations

import click

from memgit.cli.common import echo_json, json_option, no_commit_option, open_memgit


@click.command()
@click.argument("ref")
@no_commit_option
@json_option
@click.pass_context
def verify(ctx: click.Context, ref: str, no_commit: bool, as_json: bool) -> None:
    """Say a memory still holds for its code as it is now: its fingerprints are recorded again (a commit)."""
    memory = open_memgit(ctx).code.verify(ref, commit=not no_commit)
    if as_json:
        echo_json({"id": memory.id, "written_against": memory.extra.get("written_against", [])})
    else:
        click.echo(f"verified {memory.id} ({memory.title}) against the code as it is now", err=True)


@click.command()
@click.argument("rev_range", metavar="REV_RANGE")
@click.option("--fail-pinned", is_flag=True, help="Exit 1 when a pinned memory is left doubtful (for CI).")
@json_option
@click.pass_context
def doubts(ctx: click.Context, rev_range: str, fail_pinned: bool, as_json: bool) -> None:
    """The memories whose code REV_RANGE (origin/main...HEAD, A..B) changes, renames or deletes,
    by symbol, as Markdown for a pull-request comment."""
    found = open_memgit(ctx).code.doubts(rev_range)
    if as_json:
        echo_json(found.to_dict())
    else:
        click.echo(found.markdown(), nl=False)
    failing = found.failing(pinned=True) if fail_pinned else []
    if failing:
        click.echo(f"{len(failing)} pinned memor{'y is' if len(failing) == 1 else 'ies are'} left doubtful: "
                   + ", ".join(d.memory.id for d in failing), err=True)
        ctx.exit(1)


COMMANDS = (verify, doubts)
