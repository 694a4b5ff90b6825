"""The `memgit` command: parse options, call one `Memgit` method, print.

Data goes to stdout, messages to stderr. `memgit.cli.app` holds the group and adds the
commands of every module here; `memgit.cli:main` is the console script's entry point."""

from memgit.cli.app import cli, main

__all__ = ["cli", "main"]
