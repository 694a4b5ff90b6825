"""The `memgit` group: its options, and every command on it.

Each module of `memgit.cli` defines its commands as plain click commands and lists them in
`COMMANDS`; this is the one place that adds them to the group."""

from __future__ import annotations

import click

from memgit.cli import agents, capture, memories, recall, reflect, repository, review
from memgit.cli.common import Group

COMMAND_MODULES = (memories, repository, recall, reflect, agents, capture, review)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "path", default=".", metavar="PATH", help="Run as if memgit was started in PATH.")
@click.option(
    "--memory-dir",
    metavar="DIR",
    help="Use DIR as the memory folder instead of <repo>/.memory (reads work on any folder).",
)
@click.version_option(package_name="memgit", prog_name="memgit")
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


def main() -> None:
    cli(prog_name="memgit")
