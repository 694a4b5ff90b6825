"""What every `memgit` command shares: the error handling of the group, opening the
repository's `Memgit`, JSON output, progress bars, and the options several commands take.

Nothing heavy is imported here: `memgit.api` is imported when a command runs."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from memgit.errors import MemgitError

if TYPE_CHECKING:
    from memgit.api import Memgit


class Group(click.Group):
    """Turns a MemgitError anywhere into `Error: …` on stderr and exit status 1; an import or a
    missing name that another package's `memgit` explains, into that explanation."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemgitError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)
        except BrokenPipeError:
            sys.stderr.close()  # `memgit list | head`: not an error
            ctx.exit(0)
        except (ImportError, AttributeError) as exc:
            from memgit.distribution import clash  # only when something is missing

            problem = clash()
            if problem is None:
                raise
            click.echo(f"Error: {exc}: {problem}", err=True)
            ctx.exit(1)


def warn(message: str) -> None:
    click.echo(f"memgit: {message}", err=True)


def open_memgit(ctx: click.Context) -> "Memgit":
    """The `Memgit` of the folder `-C PATH` and `--memory-dir DIR` name, or with `--scope user`
    the user's own store (`remember` creates it)."""
    from memgit.api import open as open_store  # when a command runs: `memgit --help` stays light

    if ctx.meta.get("memgit.scope") == "user":  # memgit.cli.scope
        from memgit.api import open_user  # when a command runs, as above

        return open_user(create=ctx.command.name == "remember", warn=warn, warm=True)
    obj = ctx.find_root().obj or {}
    return open_store(obj.get("path", "."), memory_dir=obj.get("memory_dir"), warn=warn, warm=True)


class Bars:
    """Progress bars on stderr, one after another: a bar with a new label ends the last one."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._label = ""

    def show(self, label: str, done: int, total: int) -> None:
        if self._bar is None or label != self._label:
            self.close()
            self._bar = click.progressbar(length=total, label=label, file=sys.stderr)
            self._bar.__enter__()
            self._label = label
        self._bar.update(done - self._bar.pos)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


class StageBar:
    """One progress bar on stderr over a command's stages, the stage running shown beside it:
    `show(stage, done, total)` as each starts. The caller makes one only for a terminal."""

    def __init__(self, label: str) -> None:
        self._label = label
        self._bar: Any = None

    def show(self, stage: str, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = click.progressbar(length=total, label=self._label, file=sys.stderr,
                                          show_pos=True, item_show_func=lambda item: item, update_min_steps=0)
            self._bar.__enter__()
        self._bar.update(max(0, done - self._bar.pos), stage)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
no_commit_option = click.option(
    "--no-commit", is_flag=True, help="Stage the change instead of committing it (commit it with your own work)."
)
secret_option = click.option(
    "--allow-secret", is_flag=True, help="Save text that looks like a credential anyway."
)
