"""`memgit capture`: propose memories from a finished agent session, and apply them."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from memgit.cli.common import echo_json, open_memgit
from memgit.cli.rules import refresh_blocks


@click.command()
@click.argument("transcript", required=False, metavar="[PATH|ID]")
@click.option("--last", "last", type=click.Choice(["claude", "codex"]),
              help="Capture the newest session this agent recorded for this repository.")
@click.option("--apply", "do_apply", is_flag=True,
              help="Write the proposed memory files, staged (not committed), or on --branch.")
@click.option("--branch", is_flag=False, flag_value="", default=None, metavar="NAME",
              help="With --apply: commit the memories on a new branch NAME (default memory/capture-<id>), "
                   "leaving the current branch, index and working tree untouched.")
@click.option("--pending", is_flag=True,
              help="List the proposals the session-end hook left; with an ID, show that one, "
                   "--apply it or --drop it.")
@click.option("--drop", "do_drop", is_flag=True, help="With --pending ID: set that proposal aside unapplied.")
@click.option("--llm-cmd", metavar="CMD",
              help="A judge that vetoes or rewrites the candidates: a preset ('llm -m MODEL', 'claude -p', "
                   "'codex exec', 'ollama run MODEL') or a command speaking JSON on stdin/stdout; "
                   "'none' turns off [capture] llm_command for this run.")
@click.option("--format", "fmt", metavar="NAME",
              help="Read the transcript as this format (claude, codex, cursor, gemini, pi, export, specstory, "
                   "cctrace, aider, chat) instead of the one its start looks like.")
@click.option("--from-hook", "from_hook", is_flag=True, hidden=True,
              help="Session-end hand-off: keep the proposal as pending, log one line, never fail.")
@click.option("--json", "as_json", is_flag=True, help="Print the candidates and their evidence as JSON.")
@click.pass_context
def capture(ctx: click.Context, transcript: str | None, last: str | None, do_apply: bool, branch: str | None,
            pending: bool, do_drop: bool, llm_cmd: str | None, fmt: str | None, from_hook: bool,
            as_json: bool) -> None:
    """Propose memories from an agent session transcript: conventions the user stated, lessons
    (a failure and what fixed it), decisions, and a task summary.

    PATH is an agent's transcript: Claude Code, Codex, Gemini CLI or pi JSONL, a SpecStory,
    cctrace or Aider export, or a Markdown/plain-text chat log. Without
    --apply nothing is written: the proposal is printed as a diff of the memory files plus a
    summary. Secrets are redacted, and what the store already knows is left out.
    """
    obj = ctx.find_root().obj or {}
    if transcript is not None and not pending:
        transcript = os.path.join(obj.get("path", "."), transcript)  # -C PATH: as if started there
    if from_hook:
        from memgit.api import open as open_store  # when the command runs: `memgit --help` stays light
        from memgit.capture import captures  # when the command runs: `memgit --help` stays light

        start = obj.get("path", ".")
        captures.from_hook(
            lambda: open_store(start, memory_dir=obj.get("memory_dir"), warn=lambda _m: None).workspace,
            transcript or "", start)
        return
    if branch is not None and not do_apply:
        raise click.UsageError("--branch goes with --apply")
    if do_drop and (not pending or transcript is None or do_apply):
        raise click.UsageError("--drop goes with --pending ID, without --apply")
    mem = open_memgit(ctx)
    if pending:
        if transcript is None:
            items = mem.pending_captures()
            if as_json:
                echo_json(items)
                return
            for item in items:
                click.echo(f"{item['id']}  {item.get('created', '')}  {len(item['candidates'])} memories  "
                           f"{item.get('transcript', '')}")
            if not items:
                click.echo("no pending proposals", err=True)
            return
        if do_drop:
            click.echo(f"dropped capture proposal {mem.drop_capture(transcript)}", err=True)
            return
        if do_apply:
            _report(mem.apply_pending_capture(transcript, branch=branch), as_json)
            refresh_blocks(mem)
            return
        proposal = mem.pending_capture(transcript)
    else:
        if (transcript is None) == (last is None):
            raise click.UsageError("give a transcript PATH or --last claude|codex")
        if last is not None:
            # when the command runs: `memgit --help` stays light
            from memgit.agents.sessionfiles import newest

            transcript = str(newest(last, mem.writer.repo().root))
            click.echo(f"memgit: capturing {transcript}", err=True)
        proposal = mem.capture(transcript or "", llm_cmd=llm_cmd, format=fmt)
    if not do_apply:
        if as_json:
            echo_json(proposal.to_dict(mem.rel_path))
        else:
            sys.stdout.write(mem.show_capture(proposal))
        return
    result = mem.apply_capture(proposal, branch=(branch or f"memory/capture-{proposal.id}")
                               if branch is not None else None)
    _report(result, as_json)
    refresh_blocks(mem)


def _report(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    for path in result["written"]:
        click.echo(path)
    if not result["written"]:
        click.echo("nothing new to write", err=True)
    elif result["branch"]:
        click.echo(f"committed on branch {result['branch']} ({result['commit'][:10]}); your branch and "
                   f"working tree are unchanged: review with 'git show {result['branch']}'", err=True)
    else:
        click.echo("written and staged, not committed: review with 'git diff --cached', then commit",
                   err=True)


COMMANDS = (capture,)
