"""The memory folder as a whole: `init`, `lint`, `import`, `export`, `reindex`, `status`, `finish`,
`abandon`."""

from __future__ import annotations

import json
from typing import Any

import click

from memgit.cli.common import Bars, echo_json, json_option, no_commit_option, open_memgit, secret_option


@click.command()
@no_commit_option
@click.pass_context
def init(ctx: click.Context, no_commit: bool) -> None:
    """Create .memory/ and its config.toml in this repository (safe to run again)."""
    mem = open_memgit(ctx)
    created = mem.init(commit=not no_commit)
    where = mem.memory_dir
    click.echo(f"Initialised {where}" if created else f"{where} already exists; nothing to do", err=True)


@click.command()
@click.option("--fix", is_flag=True, help="Write path-derived ids into hand-written files that lack one.")
@json_option
@click.pass_context
def lint(ctx: click.Context, fix: bool, as_json: bool) -> None:
    """Check every memory file; exit 1 listing every problem."""
    problems = open_memgit(ctx).lint(fix=fix)
    if as_json:
        echo_json([{"path": p.path, "line": p.line, "message": p.message} for p in problems])
    else:
        for problem in problems:
            click.echo(str(problem))
    if problems:
        click.echo(f"{len(problems)} problem(s)", err=True)
        ctx.exit(1)


@click.command("import")
@click.argument("source", type=click.File("rb"))
@secret_option
@no_commit_option
@json_option
@click.pass_context
def import_(ctx: click.Context, source: Any, allow_secret: bool, no_commit: bool, as_json: bool) -> None:
    """Import memories from a JSON Lines file ('-' for stdin) in one commit."""
    lines = source.readlines()
    mem = open_memgit(ctx)
    bars, read = Bars(), [0]

    def importing(n: int) -> None:
        read[0] += n
        bars.show("importing", read[0], len(lines))

    try:
        report = mem.import_jsonl(lines, allow_secret=allow_secret, commit=not no_commit, progress=importing,
                                  embed_progress=lambda done, total: bars.show("embedding", done, total))
    finally:
        bars.close()
    for message in report.skipped:
        click.echo(f"skipped {message}", err=True)
    for message in report.warnings:
        click.echo(f"warning: {message}", err=True)
    summary = {
        "imported": report.imported,
        "skipped": len(report.skipped),
        "present": report.present,
        "duplicates": report.duplicates,
        "over_budget": report.over_budget,
        "commit": report.commit,
    }
    if as_json:
        echo_json(summary)
    else:
        click.echo(
            f"imported {report.imported}, skipped {len(report.skipped)}, {report.present} already present, "
            f"{report.duplicates} duplicate(s), {report.over_budget} over the token budget",
            err=True,
        )
    if report.skipped:
        ctx.exit(1)


@click.command()
@click.option("--active", "active_only", is_flag=True, help="Leave archived memories out.")
@click.pass_context
def export(ctx: click.Context, active_only: bool) -> None:
    """Print every memory as JSON Lines (the import format)."""
    for record in open_memgit(ctx).export(include_archived=not active_only):
        click.echo(json.dumps(record, ensure_ascii=False))


@click.command()
@click.pass_context
def reindex(ctx: click.Context) -> None:
    """Rebuild the index from the memory files, embedding every memory (resumable)."""
    mem = open_memgit(ctx)
    bars = Bars()
    try:
        report = mem.reindex(progress=lambda done, total: bars.show("embedding", done, total))
    finally:
        bars.close()
    click.echo(f"indexed {report.added + report.changed} memories, embedded {report.embedded}", err=True)


@click.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Where the index is, what it holds, and which recall channels are on."""
    from memgit import distribution  # only status and --version read the installed metadata

    info = {"installed": distribution.describe()} | open_memgit(ctx).status()
    problem = distribution.clash()
    if problem:
        click.echo(f"memgit: warning: {problem}", err=True)
    if as_json:
        echo_json(info | {"install_problem": problem})
        return
    for key, value in info.items():
        click.echo(f"{key + ':':<18} {value}")
    if info.get("interrupted_change"):
        click.echo("a memgit change did not finish: 'memgit finish' commits it, 'memgit abandon' undoes it", err=True)


@click.command()
@click.pass_context
def finish(ctx: click.Context) -> None:
    """Commit the change a memgit command left unfinished (killed, or its commit refused)."""
    if open_memgit(ctx).finish() is None:  # when there was one, memgit's warning said what became of it
        click.echo("nothing to finish", err=True)


@click.command()
@click.pass_context
def abandon(ctx: click.Context) -> None:
    """Undo the change a memgit command left unfinished: its files back as before, nothing staged."""
    done = open_memgit(ctx).abandon()
    if done is None:
        click.echo("nothing to abandon", err=True)
    else:
        click.echo(f"abandoned {done.summary}: {len(done.restored)} file(s) put back", err=True)


COMMANDS = (init, lint, import_, export, reindex, status, finish, abandon)
