"""`memgit reflect`: proposals that keep memory healthy, shown, applied or put on a branch."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Sequence

import click

from memgit.cli.common import StageBar, echo_json, json_option, open_memgit
from memgit.cli.rules import refresh_blocks
from memgit.errors import MemgitError

if TYPE_CHECKING:
    from memgit.reflect.proposals import Reflection


def _names(values: Sequence[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


@click.command()
@click.option("--apply", "apply_", is_flag=True, help="Commit every proposal (one commit).")
@click.option("--split", is_flag=True, help="With --apply or --branch: one commit per proposal.")
@click.option("--branch", metavar="NAME", help="Commit the proposals on a new branch NAME from HEAD; "
              "the current branch and working tree are left alone.")
@click.option("--check", is_flag=True, help="Exit 1 when reflect proposes a change (for CI); notes for a "
              "person to review do not fail it.")
@click.option("--strict", is_flag=True, help="With --check: notes for a person to review and malformed "
              "files fail it too.")
@click.option("--only", multiple=True, metavar="KINDS",
              help="Only these kinds of proposal, comma-separated: duplicates, supersessions, stale, "
                   "eviction, promotion, hygiene.")
@click.option("--exclude", multiple=True, metavar="IDS", help="Leave these memories alone (comma-separated).")
@json_option
@click.pass_context
def reflect(ctx: click.Context, apply_: bool, split: bool, branch: str | None, check: bool, strict: bool,
            only: Sequence[str], exclude: Sequence[str], as_json: bool) -> None:
    """Propose changes that keep memory healthy, as a summary and a diff.

    Merges duplicates, archives superseded, stale or unused memories, fixes renamed file
    anchors and pins what is used; each proposal says why, with its evidence. Changes
    nothing unless --apply or --branch.
    """
    if split and not (apply_ or branch):
        raise MemgitError("--split needs --apply or --branch")
    if strict and not check:
        raise MemgitError("--strict goes with --check: memgit reflect --check --strict")
    mem = open_memgit(ctx)
    bar = StageBar("reflect") if not as_json and sys.stderr.isatty() else None
    try:
        outcome = mem.reflect(only=_names(only), exclude=_names(exclude), apply=apply_, split=split,
                              branch=branch, progress=bar.show if bar else None)
    finally:
        if bar is not None:
            bar.close()
    found = outcome.reflection
    if as_json:
        echo_json({**found.to_dict(), "commits": list(outcome.commits), "branch": outcome.branch})
    else:
        click.echo(found.summary())
        diff = found.diff()
        if diff:
            click.echo(diff, nl=False)
    if outcome.commits:
        where = f" on branch {outcome.branch}" if outcome.branch else ""
        click.echo(f"committed {len(outcome.commits)} commit(s){where}: "
                   f"{', '.join(c[:10] for c in outcome.commits)}", err=True)
    if apply_ and outcome.commits:
        refresh_blocks(mem)
    if check:
        failing = _check(found, strict)
        if failing:
            click.echo(f"memgit: reflect --check{' --strict' if strict else ''}: {failing}", err=True)
            ctx.exit(1)


def _check(found: Reflection, strict: bool) -> str:
    """Why `--check` fails (empty: it passes): a proposed change; with `strict`, a note for a
    person or a malformed file too. A note alone is a remark, not a failing build."""
    changes = len(found.actionable)
    review = len(found.proposals) - changes
    if changes:
        return f"{changes} change(s) proposed (memgit reflect --apply applies them)"
    if strict and (review or found.problems):
        return f"{review} note(s) for a person to review, {len(found.problems)} malformed file(s)"
    return ""


COMMANDS = (reflect,)
