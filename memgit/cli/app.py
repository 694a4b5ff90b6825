"""The `memgit` group: its options, and every command on it.

Each module of `memgit.cli` defines its commands as plain click commands and lists them in
`COMMANDS`; this is the one place that adds them to the group."""

from __future__ import annotations

import click

from memgit.cli import (agents, capture, code, memories, recall, reflect, repository, review, rules, scope,
                        servers)
from memgit.cli.common import Group

COMMAND_MODULES = (memories, repository, recall, reflect, agents, capture, review, servers, rules, code)


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """`memgit --version`: the distribution and its version (`memgit-agent 0.1.0`), and on stderr
    why another package that installs a `memgit` command of its own must not share this one's
    environment, when one does."""
    if not value or ctx.resilient_parsing:
        return
    from memgit import distribution  # only --version and status read the installed metadata

    click.echo(distribution.describe())
    problem = distribution.clash()
    if problem:
        click.echo(f"memgit: warning: {problem}", err=True)
    ctx.exit(0)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "path", default=".", metavar="PATH", help="Run as if memgit was started in PATH.")
@click.option(
    "--memory-dir",
    metavar="DIR",
    help="Use DIR as the memory folder instead of <repo>/.memory (reads work on any folder).",
)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
              help="Show the installed distribution (memgit-agent) and its version, and exit.")
@click.pass_context
def cli(ctx: click.Context, path: str, memory_dir: str | None) -> None:
    """memgit: an AI coding agent's memory, kept as Markdown files in the project's git repository.

    Every change to memory is a commit under .memory/; recall searches a local index that is
    rebuilt from the files whenever they change.
    """
    ctx.obj = {"path": path, "memory_dir": memory_dir}



for _module in COMMAND_MODULES:
    for _command in _module.COMMANDS:
        cli.add_command(_command)
scope.add_to(cli)  # --scope user|project on the commands that work on one store


def main() -> None:
    cli(prog_name="memgit")
