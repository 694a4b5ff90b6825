"""`--scope project|user` on the commands that work on one memory store (`--scope all` on
`list` and `stats`): the user's own store (`memgit.store.userstore`) instead of the project's.

The option is added to the commands here, so their bodies stay as they are: the scope is put
in the context, where `open_memgit` finds it. `--scope all` runs the command once per scope:
JSON as one document (a list's items each with their `scope`; other results under
`project` and `user`), text under a `[project]` and a `[user]` line.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable
from contextlib import redirect_stdout
from typing import Any

import click

from memgit.errors import MemgitError

KEY = "memgit.scope"
#: The commands that take `--scope`; those in ALL also take `--scope all`.
SCOPED = ("remember", "show", "list", "edit", "forget", "history", "feedback", "stats", "reflect")
ALL = ("list", "stats")


def add_to(group: click.Group) -> None:
    """Give each command of SCOPED on `group` its `--scope` option."""
    for name in SCOPED:
        command = group.commands[name]
        choices = ["project", "user", "all"] if name in ALL else ["project", "user"]
        command.params.append(click.Option(
            ["--scope"], type=click.Choice(choices), default="project", show_default=True,
            help="The project's memories, the user's own store (personal, in no project)"
                 + (", or both." if name in ALL else ".")))
        if command.callback is not None:
            command.callback = _scoped(command.callback)


def scope_of(ctx: click.Context) -> str:
    """The scope the running command was given (`project` when it takes none)."""
    return str(ctx.meta.get(KEY, "project"))


def _scoped(callback: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def run(*args: Any, scope: str = "project", **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        if scope != "all":
            ctx.meta[KEY] = scope
            return callback(*args, **kwargs)
        outputs: dict[str, str] = {}
        for one in ("project", "user"):
            ctx.meta[KEY] = one
            out = io.StringIO()
            try:
                with redirect_stdout(out):
                    callback(*args, **kwargs)
            except MemgitError as exc:
                if one == "project":
                    raise
                click.echo(f"memgit: user store skipped: {exc}", err=True)
                continue
            outputs[one] = out.getvalue()
        if kwargs.get("as_json"):
            click.echo(json.dumps(_joined({one: json.loads(text) for one, text in outputs.items()}),
                                  ensure_ascii=False, indent=2))
        else:
            for one, text in outputs.items():
                click.echo(f"[{one}]")
                click.echo(text, nl=False)
        return None

    return run


def _joined(results: dict[str, Any]) -> Any:
    if all(isinstance(result, list) for result in results.values()):
        return [{**item, "scope": one} for one, result in results.items() for item in result]
    return results
