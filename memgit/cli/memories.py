"""One memory at a time: `remember`, `show`, `list`, `edit`, `forget`, `history`, `rollback`."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import click

from memgit.cli.common import echo_json, json_option, no_commit_option, open_memgit, secret_option
from memgit.errors import MemgitError

if TYPE_CHECKING:
    from memgit.api import Memgit
    from memgit.memory.format import Memory


@click.command()
@click.argument("text", required=False)
@click.option("--file", "file_", type=click.File("rb"), help="Read the text from a file ('-' for stdin).")
@click.option("--title", help="Title (default: the first line of the text).")
@click.option("--kind", default="fact", show_default=True, help="fact, preference, convention, decision, lesson, skill, checkpoint, summary.")
@click.option("--entity", default="", help="What it is about: path/to/file.py::Symbol, a path, or a topic.")
@click.option("--source", type=click.Choice(["user", "static", "inferred"]), default="user", show_default=True)
@click.option("--confidence", type=click.FloatRange(0, 1), help="0..1 (default by source: user 0.9, static 0.7, inferred 0.5).")
@click.option("--task", "task_id", help="The task or conversation this memory belongs to.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--edit", "use_editor", is_flag=True, help="Write the memory in $EDITOR, starting from a template.")
@click.option("--force", is_flag=True, help="Accept a body over the token budget.")
@secret_option
@no_commit_option
@json_option
@click.pass_context
def remember(
    ctx: click.Context,
    text: str | None,
    file_: Any,
    title: str | None,
    kind: str,
    entity: str,
    source: str,
    confidence: float | None,
    task_id: str | None,
    tags: Sequence[str],
    use_editor: bool,
    force: bool,
    allow_secret: bool,
    no_commit: bool,
    as_json: bool,
) -> None:
    """Save a memory (text from the argument, --file, stdin, or --edit) as one commit."""
    draft = None
    if use_editor:
        # when the command runs: `memgit --help` stays light
        from memgit.memory.template import strip_template, template

        draft = click.edit(template(kind), extension=".md")
        if draft is None:
            raise MemgitError("the editor was closed without saving; nothing remembered")
        text = strip_template(draft, kind)
        if not text:
            raise MemgitError("nothing was written in the editor; nothing remembered")
    elif file_ is not None:
        if text is not None:
            raise click.UsageError("give the text as an argument or with --file, not both")
        text = _read_text(file_, file_.name)
    elif text is None or text == "-":
        if sys.stdin.isatty():
            raise click.UsageError("give the text as an argument, with --file, on stdin, or use --edit")
        text = _read_text(sys.stdin.buffer, "stdin")
    mem = open_memgit(ctx)
    with _keeping(draft):
        result = mem.remember(
            text or "",
            title=title,
            kind=kind,
            entity=entity,
            source=source,
            confidence=confidence,
            task_id=task_id,
            tags=tags,
            force=force,
            allow_secret=allow_secret,
            commit=not no_commit,
        )
    if as_json:
        echo_json({
            "created": result.created, "duplicate_of": result.duplicate_of, "commit": result.commit,
            **result.memory.to_dict(), "path": mem.rel_path(result.memory),
        })
    else:
        click.echo(result.memory.id)
    if not result.created:
        done = "committed its file, which was not committed yet" if result.commit else "nothing added"
        click.echo(f"already remembered as {result.memory.id} ({result.memory.title}); {done}", err=True)


def _read_text(stream: Any, name: str) -> str:
    data = stream.read()
    try:
        return data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise MemgitError(f"{name} is not UTF-8 text (byte {exc.start}); memories are UTF-8") from None


@contextmanager
def _keeping(draft: str | None) -> Iterator[None]:
    """If saving what the user typed in $EDITOR fails, keep it in a file and say where."""
    try:
        yield
    except MemgitError as exc:
        if draft is None:
            raise
        from memgit.memory.template import save_draft  # when the command runs: `memgit --help` stays light

        raise MemgitError(f"{exc} (what you wrote is kept in {save_draft(draft)})") from None


def _show_text(mem: "Memgit", memory: "Memory") -> str:
    from memgit.memory.format import dump  # when the command runs: `memgit --help` stays light

    return f"# {mem.rel_path(memory)}\n" + dump(memory)


@click.command()
@click.argument("ref")
@json_option
@click.pass_context
def show(ctx: click.Context, ref: str, as_json: bool) -> None:
    """Print a memory, by id, unique id prefix, or exact title."""
    mem = open_memgit(ctx)
    memory = mem.get(ref)
    if as_json:
        echo_json({**memory.to_dict(), "path": mem.rel_path(memory)})
    else:
        click.echo(_show_text(mem, memory), nl=False)


@click.command("list")
@click.option("--kind", help="Only this kind.")
@click.option("--entity", help="Only entities starting with this.")
@click.option("--task", "task_id", help="Only this task.")
@click.option("--source", type=click.Choice(["user", "static", "inferred"]))
@click.option("--status", type=click.Choice(["active", "archived", "all"]), default="active", show_default=True)
@json_option
@click.pass_context
def list_(ctx: click.Context, kind: str | None, entity: str | None, task_id: str | None, source: str | None, status: str, as_json: bool) -> None:
    """List memories, newest first."""
    mem = open_memgit(ctx)
    memories = mem.list(kind=kind, entity=entity, task_id=task_id, source=source, status=None if status == "all" else status)
    if as_json:
        echo_json([{**m.to_dict(), "path": mem.rel_path(m)} for m in memories])
        return
    width = max((len(m.id) for m in memories), default=0)
    for m in memories:
        flag = " (archived)" if not m.active else ""
        click.echo(f"{m.id:<{max(width, 10)}} {m.kind:<10} {m.title}{flag}")


@click.command()
@click.argument("ref")
@click.option("--title")
@click.option("--kind")
@click.option("--entity")
@click.option("--confidence", type=click.FloatRange(0, 1))
@click.option("--task", "task_id")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeatable).")
@click.option("--pin/--unpin", "pinned", default=None,
              help="Give it to the agent at every session start and in the rules files' block (`pinned: true`), or not.")
@secret_option
@no_commit_option
@click.pass_context
def edit(ctx: click.Context, ref: str, title: str | None, kind: str | None, entity: str | None, confidence: float | None,
         task_id: str | None, tags: Sequence[str], pinned: bool | None, allow_secret: bool, no_commit: bool) -> None:
    """Change a memory: with options, set those fields; without, open it in $EDITOR."""
    mem = open_memgit(ctx)
    fields: dict[str, Any] = {"title": title, "kind": kind, "entity": entity, "confidence": confidence, "task_id": task_id,
                              "pinned": pinned}
    changes = {k: v for k, v in fields.items() if v is not None}
    if tags:
        changes["tags"] = tuple(tags)
    if changes:
        memory = mem.update(ref, commit=not no_commit, allow_secret=allow_secret, **changes)
        click.echo(f"edited {memory.id}", err=True)
        return
    from memgit.memory.format import dump  # when the command runs: `memgit --help` stays light

    memory = mem.get(ref)
    edited = click.edit(dump(memory), extension=".md")
    if edited is None:
        click.echo("no change", err=True)
        return
    with _keeping(edited):
        result = mem.edit_text(memory.id, edited, commit=not no_commit, allow_secret=allow_secret, base=memory)
    click.echo(f"edited {memory.id}" if result else "no change", err=True)


@click.command()
@click.argument("ref")
@click.option("--hard", is_flag=True, help="Delete the file instead of archiving it (still a commit git can revert).")
@click.option("--force", is_flag=True, help="Drop changes to the file that are not committed (refused without it).")
@no_commit_option
@click.pass_context
def forget(ctx: click.Context, ref: str, hard: bool, force: bool, no_commit: bool) -> None:
    """Archive a memory so recall no longer returns it (reversible)."""
    memory = open_memgit(ctx).forget(ref, hard=hard, commit=not no_commit, force=force)
    click.echo(f"{'deleted' if hard else 'archived'} {memory.id} ({memory.title})", err=True)


@click.command()
@click.argument("ref")
@json_option
@click.pass_context
def history(ctx: click.Context, ref: str, as_json: bool) -> None:
    """A memory's commits, newest first, with what changed in its front-matter."""
    changes = open_memgit(ctx).history(ref)
    if as_json:
        echo_json([
            {
                "commit": c.revision.sha, "author": c.revision.author, "date": c.revision.date,
                "subject": c.revision.subject, "path": c.revision.path,
                "fields": {k: {"old": _plain(v[0]), "new": _plain(v[1])} for k, v in c.fields.items()},
                "body_changed": c.body_changed,
            }
            for c in changes
        ])
        return
    for number, c in enumerate(changes):
        click.echo(f"{c.revision.sha[:10]} {c.revision.date} {c.revision.subject}")
        if number == len(changes) - 1:
            continue  # the first version: every field is new
        if c.fields and all(new is None for _, new in c.fields.values()):
            click.echo("    (file deleted)")
            continue
        for name, (old, new) in c.fields.items():
            click.echo(f"    {name}: {_plain(old)!r} -> {_plain(new)!r}")
        if c.body_changed:
            click.echo("    body changed")


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@click.command()
@click.argument("ref")
@click.option("--to", "rev", required=True, metavar="REV", help="The commit to restore the memory from.")
@click.option("--force", is_flag=True, help="Drop changes to the file that are not committed (refused without it).")
@no_commit_option
@click.pass_context
def rollback(ctx: click.Context, ref: str, rev: str, force: bool, no_commit: bool) -> None:
    """Restore a memory as it was at REV, as a new commit."""
    memory = open_memgit(ctx).rollback(ref, rev, commit=not no_commit, force=force)
    click.echo(f"rolled back {memory.id} to {rev}" if memory else f"{ref} is already as it was at {rev}; nothing to do", err=True)


COMMANDS = (remember, show, list_, edit, forget, history, rollback)
