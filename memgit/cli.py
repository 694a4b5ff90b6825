"""The `memgit` command: parse options, call one `Memgit` method, print.

Data goes to stdout, messages to stderr. Nothing heavy is imported at module level so that
`memgit --help` stays fast; `memgit.api` is imported when a command runs.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import click

from memgit.errors import MemgitError

if TYPE_CHECKING:
    from memgit.api import Memgit
    from memgit.memory.format import Memory


class _Group(click.Group):
    """Turns a MemgitError anywhere into `Error: …` on stderr and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemgitError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)
        except BrokenPipeError:
            sys.stderr.close()  # `memgit list | head`: not an error
            ctx.exit(0)


def _warn(message: str) -> None:
    click.echo(f"memgit: {message}", err=True)


def _open(ctx: click.Context) -> "Memgit":
    from memgit.api import open as open_store

    obj = ctx.find_root().obj or {}
    return open_store(obj.get("path", "."), memory_dir=obj.get("memory_dir"), warn=_warn, warm=True)


class _Bars:
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


def _json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))



json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
no_commit_option = click.option(
    "--no-commit", is_flag=True, help="Stage the change instead of committing it (commit it with your own work)."
)
secret_option = click.option(
    "--allow-secret", is_flag=True, help="Save text that looks like a credential anyway."
)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
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


@cli.command()
@no_commit_option
@click.pass_context
def init(ctx: click.Context, no_commit: bool) -> None:
    """Create .memory/ and its config.toml in this repository (safe to run again)."""
    mem = _open(ctx)
    created = mem.init(commit=not no_commit)
    where = mem.memory_dir
    click.echo(f"Initialised {where}" if created else f"{where} already exists; nothing to do", err=True)


@cli.command()
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
    mem = _open(ctx)
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
        _json({
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
        from memgit.memory.template import save_draft

        raise MemgitError(f"{exc} (what you wrote is kept in {save_draft(draft)})") from None


def _show_text(mem: "Memgit", memory: "Memory") -> str:
    from memgit.memory.format import dump

    return f"# {mem.rel_path(memory)}\n" + dump(memory)


@cli.command()
@click.argument("ref")
@json_option
@click.pass_context
def show(ctx: click.Context, ref: str, as_json: bool) -> None:
    """Print a memory, by id, unique id prefix, or exact title."""
    mem = _open(ctx)
    memory = mem.get(ref)
    if as_json:
        _json({**memory.to_dict(), "path": mem.rel_path(memory)})
    else:
        click.echo(_show_text(mem, memory), nl=False)


@cli.command("list")
@click.option("--kind", help="Only this kind.")
@click.option("--entity", help="Only entities starting with this.")
@click.option("--task", "task_id", help="Only this task.")
@click.option("--source", type=click.Choice(["user", "static", "inferred"]))
@click.option("--status", type=click.Choice(["active", "archived", "all"]), default="active", show_default=True)
@json_option
@click.pass_context
def list_(ctx: click.Context, kind: str | None, entity: str | None, task_id: str | None, source: str | None, status: str, as_json: bool) -> None:
    """List memories, newest first."""
    mem = _open(ctx)
    memories = mem.list(kind=kind, entity=entity, task_id=task_id, source=source, status=None if status == "all" else status)
    if as_json:
        _json([{**m.to_dict(), "path": mem.rel_path(m)} for m in memories])
        return
    width = max((len(m.id) for m in memories), default=0)
    for m in memories:
        flag = " (archived)" if not m.active else ""
        click.echo(f"{m.id:<{max(width, 10)}} {m.kind:<10} {m.title}{flag}")


@cli.command()
@click.argument("ref")
@click.option("--title")
@click.option("--kind")
@click.option("--entity")
@click.option("--confidence", type=click.FloatRange(0, 1))
@click.option("--task", "task_id")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeatable).")
@secret_option
@no_commit_option
@click.pass_context
def edit(ctx: click.Context, ref: str, title: str | None, kind: str | None, entity: str | None, confidence: float | None,
         task_id: str | None, tags: Sequence[str], allow_secret: bool, no_commit: bool) -> None:
    """Change a memory: with options, set those fields; without, open it in $EDITOR."""
    mem = _open(ctx)
    fields: dict[str, Any] = {"title": title, "kind": kind, "entity": entity, "confidence": confidence, "task_id": task_id}
    changes = {k: v for k, v in fields.items() if v is not None}
    if tags:
        changes["tags"] = tuple(tags)
    if changes:
        memory = mem.update(ref, commit=not no_commit, allow_secret=allow_secret, **changes)
        click.echo(f"edited {memory.id}", err=True)
        return
    from memgit.memory.format import dump

    memory = mem.get(ref)
    edited = click.edit(dump(memory), extension=".md")
    if edited is None:
        click.echo("no change", err=True)
        return
    with _keeping(edited):
        result = mem.edit_text(memory.id, edited, commit=not no_commit, allow_secret=allow_secret, base=memory)
    click.echo(f"edited {memory.id}" if result else "no change", err=True)


@cli.command()
@click.argument("ref")
@click.option("--hard", is_flag=True, help="Delete the file instead of archiving it (still a commit git can revert).")
@click.option("--force", is_flag=True, help="Drop changes to the file that are not committed (refused without it).")
@no_commit_option
@click.pass_context
def forget(ctx: click.Context, ref: str, hard: bool, force: bool, no_commit: bool) -> None:
    """Archive a memory so recall no longer returns it (reversible)."""
    memory = _open(ctx).forget(ref, hard=hard, commit=not no_commit, force=force)
    click.echo(f"{'deleted' if hard else 'archived'} {memory.id} ({memory.title})", err=True)


@cli.command()
@click.argument("ref")
@json_option
@click.pass_context
def history(ctx: click.Context, ref: str, as_json: bool) -> None:
    """A memory's commits, newest first, with what changed in its front-matter."""
    changes = _open(ctx).history(ref)
    if as_json:
        _json([
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


@cli.command()
@click.argument("ref")
@click.option("--to", "rev", required=True, metavar="REV", help="The commit to restore the memory from.")
@click.option("--force", is_flag=True, help="Drop changes to the file that are not committed (refused without it).")
@no_commit_option
@click.pass_context
def rollback(ctx: click.Context, ref: str, rev: str, force: bool, no_commit: bool) -> None:
    """Restore a memory as it was at REV, as a new commit."""
    memory = _open(ctx).rollback(ref, rev, commit=not no_commit, force=force)
    click.echo(f"rolled back {memory.id} to {rev}" if memory else f"{ref} is already as it was at {rev}; nothing to do", err=True)


@cli.command()
@click.option("--fix", is_flag=True, help="Write path-derived ids into hand-written files that lack one.")
@json_option
@click.pass_context
def lint(ctx: click.Context, fix: bool, as_json: bool) -> None:
    """Check every memory file; exit 1 listing every problem."""
    problems = _open(ctx).lint(fix=fix)
    if as_json:
        _json([{"path": p.path, "line": p.line, "message": p.message} for p in problems])
    else:
        for problem in problems:
            click.echo(str(problem))
    if problems:
        click.echo(f"{len(problems)} problem(s)", err=True)
        ctx.exit(1)


@cli.command("import")
@click.argument("source", type=click.File("rb"))
@secret_option
@no_commit_option
@json_option
@click.pass_context
def import_(ctx: click.Context, source: Any, allow_secret: bool, no_commit: bool, as_json: bool) -> None:
    """Import memories from a JSON Lines file ('-' for stdin) in one commit."""
    lines = source.readlines()
    mem = _open(ctx)
    bars, read = _Bars(), [0]

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
        _json(summary)
    else:
        click.echo(
            f"imported {report.imported}, skipped {len(report.skipped)}, {report.present} already present, "
            f"{report.duplicates} duplicate(s), {report.over_budget} over the token budget",
            err=True,
        )
    if report.skipped:
        ctx.exit(1)


@cli.command()
@click.option("--active", "active_only", is_flag=True, help="Leave archived memories out.")
@click.pass_context
def export(ctx: click.Context, active_only: bool) -> None:
    """Print every memory as JSON Lines (the import format)."""
    for record in _open(ctx).export(include_archived=not active_only):
        click.echo(json.dumps(record, ensure_ascii=False))


@cli.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, 100), help="How many memories at most (default: [recall] k, 5; [inject] k, 3, for markdown).")
@click.option("--task", "task_id", help="Prefer this task's memories; other tasks only if it has nothing relevant.")
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (repeatable).")
@click.option("--min-score", type=click.FloatRange(0, 1), help="Relevance floor (0 turns it off).")
@click.option("--budget", type=click.IntRange(1), help="Token budget for what is printed (default: [inject] budget, 600, for markdown).")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--all", "include_archived", is_flag=True, help="Include archived memories.")
@click.option("--explain", is_flag=True,
              help="Show the absolute relevance and the strength of every channel (keyword, vector, anchor).")
@click.option("--session", metavar="ID", help="Leave out memories memgit already gave this agent session.")
@json_option
@click.pass_context
def recall(ctx: click.Context, query: str, k: int | None, task_id: str | None, kinds: Sequence[str],
           min_score: float | None, budget: int | None, fmt: str, include_archived: bool, explain: bool,
           session: str | None, as_json: bool) -> None:
    """Find the memories that answer QUERY ('-' reads it from stdin), best first."""
    if query == "-":
        query = sys.stdin.read()
    if not query.strip():
        raise click.UsageError("the query is empty: say what to recall, e.g. memgit recall 'how are configs parsed?'")
    fmt = "json" if as_json else fmt
    mem = _open(ctx)
    if fmt == "markdown":
        given = mem.inject(query, task_id=task_id, kinds=kinds or None, k=k, budget=budget, min_score=min_score)
        if given.text:
            click.echo(given.text, nl=False)
        if given.reason:
            click.echo(given.reason, err=True)
        return
    hits = mem.recall(query, k, task_id=task_id, kinds=kinds or None, min_score=min_score,
                      include_archived=include_archived, session=session)
    reason = "nothing relevant found"
    if budget is not None:
        from memgit.recall.inject import fit

        fitted = fit(hits, budget)
        hits, reason = list(fitted.hits), fitted.reason or reason
    if fmt == "json":
        _json([hit.to_dict() for hit in hits])
    else:
        for hit in hits:
            click.echo(f"{hit.score:.2f}  {hit.id:<10} {hit.title}")
            click.echo(f"      {hit.path}")
            if explain:
                channels = "  ".join(f"{name} {value:.2f}" for name, value in sorted(hit.channels.items()))
                click.echo(f"      relevance {hit.relevance:.2f}  {channels or 'precise match'}")
    if not hits:
        click.echo(reason, err=True)


@cli.command()
@click.pass_context
def reindex(ctx: click.Context) -> None:
    """Rebuild the index from the memory files, embedding every memory (resumable)."""
    mem = _open(ctx)
    bars = _Bars()
    try:
        report = mem.reindex(progress=lambda done, total: bars.show("embedding", done, total))
    finally:
        bars.close()
    click.echo(f"indexed {report.added + report.changed} memories, embedded {report.embedded}", err=True)


@cli.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Where the index is, what it holds, and which recall channels are on."""
    info = _open(ctx).status()
    if as_json:
        _json(info)
        return
    for key, value in info.items():
        click.echo(f"{key + ':':<18} {value}")
    if info.get("interrupted_change"):
        click.echo("a memgit change did not finish: 'memgit finish' commits it, 'memgit abandon' undoes it", err=True)


@cli.command()
@click.pass_context
def finish(ctx: click.Context) -> None:
    """Commit the change a memgit command left unfinished (killed, or its commit refused)."""
    if _open(ctx).finish() is None:  # when there was one, memgit's warning said what became of it
        click.echo("nothing to finish", err=True)


@cli.command()
@click.pass_context
def abandon(ctx: click.Context) -> None:
    """Undo the change a memgit command left unfinished: its files back as before, nothing staged."""
    done = _open(ctx).abandon()
    if done is None:
        click.echo("nothing to abandon", err=True)
    else:
        click.echo(f"abandoned {done.summary}: {len(done.restored)} file(s) put back", err=True)


def _names(values: Sequence[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


@cli.command()
@click.option("--apply", "apply_", is_flag=True, help="Commit every proposal (one commit).")
@click.option("--split", is_flag=True, help="With --apply or --branch: one commit per proposal.")
@click.option("--branch", metavar="NAME", help="Commit the proposals on a new branch NAME from HEAD; "
              "the current branch and working tree are left alone.")
@click.option("--check", is_flag=True, help="Exit 1 when there is anything to propose (for CI).")
@click.option("--only", multiple=True, metavar="KINDS",
              help="Only these kinds of proposal, comma-separated: duplicates, supersessions, stale, "
                   "eviction, promotion, hygiene.")
@click.option("--exclude", multiple=True, metavar="IDS", help="Leave these memories alone (comma-separated).")
@json_option
@click.pass_context
def reflect(ctx: click.Context, apply_: bool, split: bool, branch: str | None, check: bool,
            only: Sequence[str], exclude: Sequence[str], as_json: bool) -> None:
    """Propose changes that keep memory healthy, as a summary and a diff.

    Merges duplicates, archives superseded, stale or unused memories, fixes renamed file
    anchors and pins what is used; each proposal says why, with its evidence. Changes
    nothing unless --apply or --branch.
    """
    if split and not (apply_ or branch):
        raise MemgitError("--split needs --apply or --branch")
    outcome = _open(ctx).reflect(only=_names(only), exclude=_names(exclude), apply=apply_, split=split,
                                 branch=branch)
    found = outcome.reflection
    if as_json:
        _json({**found.to_dict(), "commits": list(outcome.commits), "branch": outcome.branch})
    else:
        click.echo(found.summary())
        diff = found.diff()
        if diff:
            click.echo(diff, nl=False)
    if outcome.commits:
        where = f" on branch {outcome.branch}" if outcome.branch else ""
        click.echo(f"committed {len(outcome.commits)} commit(s){where}: "
                   f"{', '.join(c[:10] for c in outcome.commits)}", err=True)
    if check and found.proposals:
        ctx.exit(1)


@cli.command()
@click.argument("ref")
@click.option("--used", "verdict", flag_value="used", help="The memory helped.")
@click.option("--ignored", "verdict", flag_value="ignored", help="It was recalled but not needed.")
@click.option("--wrong", "verdict", flag_value="wrong", help="It was wrong or misleading.")
@click.option("--session", metavar="ID", help="The agent session (default $MEMGIT_SESSION, else today).")
@click.pass_context
def feedback(ctx: click.Context, ref: str, verdict: str | None, session: str | None) -> None:
    """Record whether a recalled memory was used, ignored or wrong (kept locally, never committed)."""
    if verdict is None:
        raise MemgitError("say how the memory did: --used, --ignored or --wrong")
    record = _open(ctx).feedback(ref, verdict, session=session)
    click.echo(f"{record['id']} {record['verdict']}")


@cli.command()
@click.option("--since", metavar="PERIOD", help="Only recalls, feedback and new memories since then (30d, 2w, a date).")
@json_option
@click.pass_context
def stats(ctx: click.Context, since: str | None, as_json: bool) -> None:
    """Memory health: hit rate, freshness of used memories, repeat explanations, counts."""
    info = _open(ctx).stats(since=since)
    if as_json:
        _json(info)
        return
    for key, value in info.items():
        click.echo(f"{key + ':':<24} {value}")


from memgit.cli_capture import capture  # noqa: E402 - the command lives in its own module

cli.add_command(capture)

from memgit.cli_agents import COMMANDS as _AGENT_COMMANDS  # noqa: E402 - after `cli` exists

for _command in _AGENT_COMMANDS:
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="memgit")


from memgit import cli_git  # noqa: E402,F401 - registers `diff` and `mcp` on the group
