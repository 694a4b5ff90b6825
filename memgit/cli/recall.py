"""Asking memory: `recall`, and what came of it: `feedback`, `stats`."""

from __future__ import annotations

import sys
from typing import Sequence

import click

from memgit.cli.common import echo_json, json_option, open_memgit
from memgit.errors import MemgitError


@click.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, 100), help="How many memories at most (default: [recall] k, 5; [inject] k, 3, for markdown).")
@click.option("--task", "task_id", help="Prefer this task's memories; other tasks only if it has nothing relevant.")
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (repeatable).")
@click.option("--min-score", type=click.FloatRange(0, 1), help="Relevance floor (0 turns it off).")
@click.option("--budget", type=click.IntRange(1), help="Token budget for what is printed (default: [inject] budget, 600, for markdown).")
@click.option("--format", "output", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--all", "include_archived", is_flag=True, help="Include archived memories.")
@click.option("--explain", is_flag=True,
              help="Show the absolute relevance and the strength of every channel (keyword, vector, anchor).")
@click.option("--session", metavar="ID", help="Leave out memories memgit already gave this agent session.")
@click.option("--at", "at", metavar="REV",
              help="Answer from the memories as they were at this commit, tag or branch (keywords and anchors).")
@click.option("--deep", is_flag=True,
              help="Also follow the best hits' links (same entity, supersedes, same session, files changed "
                   "together, memories naming each other) and rank the union.")
@json_option
@click.pass_context
def recall(ctx: click.Context, query: str, k: int | None, task_id: str | None, kinds: Sequence[str],
           min_score: float | None, budget: int | None, output: str, include_archived: bool, explain: bool,
           session: str | None, as_json: bool, at: str | None, deep: bool) -> None:
    """Find the memories that answer QUERY ('-' reads it from stdin), best first."""
    if query == "-":
        query = sys.stdin.read()
    if not query.strip():
        raise click.UsageError("the query is empty: say what to recall, e.g. memgit recall 'how are configs parsed?'")
    output = "json" if as_json else output
    mem = open_memgit(ctx)
    if output == "markdown":
        given = mem.inject(query, task_id=task_id, kinds=kinds or None, k=k, budget=budget,
                           min_score=min_score, at=at, deep=deep)
        if given.text:
            click.echo(given.text, nl=False)
        if given.reason:
            click.echo(given.reason, err=True)
        return
    found = mem.recall(query, k, task_id=task_id, kinds=kinds or None, min_score=min_score,
                       include_archived=include_archived, session=session, at=at, deep=deep)
    how, hits = found.how, list(found)
    reason = "nothing relevant found"
    if budget is not None:
        fitted = mem.fit(hits, budget)
        hits, reason = list(fitted.hits), fitted.reason or reason
    if output == "json":
        echo_json([hit.to_dict() for hit in hits])
    else:
        from memgit.recall.inject import trust_note  # only when hits are printed: `memgit --help` stays light

        for hit in hits:
            click.echo(f"{hit.score:.2f}  {hit.id:<10} {hit.title}")
            click.echo(f"      {hit.path}" + (f"  ({hit.scope} scope)" if hit.scope != "project" else "")
                       + trust_note(hit))
            for doubt in hit.code.doubts if hit.code is not None else ():
                if doubt.told:
                    click.echo(f"      ⚠ {doubt.sentence(hit.id)}")
            if explain:
                if hit.passage is not None:
                    click.echo(f"      matched by passage {hit.passage} of this long memory")
                channels = "  ".join(f"{name} {value:.2f}" for name, value in sorted(hit.channels.items()))
                click.echo(f"      relevance {hit.relevance:.2f}  {channels or 'precise match'}")
    if explain and how is not None and output != "json":
        weights = "  ".join(f"{name} {value:.2f}" for name, value in how.weights.items())
        vectors = "used" if how.vectors.state == "used" else f"{how.vectors.state}: {how.vectors.detail}"
        click.echo(f"query: {how.query_kind}{', time: ' + how.time if how.time else ''}"
                   f"{', deep' if how.deep else ''}; weights {weights}; vectors {vectors}")
    if not hits:
        click.echo(reason, err=True)


@click.command()
@click.argument("ref")
@click.argument("other", required=False)
@click.option("--used", "verdict", flag_value="used", help="The memory helped.")
@click.option("--ignored", "verdict", flag_value="ignored", help="It was recalled but not needed.")
@click.option("--wrong", "verdict", flag_value="wrong",
              help="It was wrong or misleading (reflect then lowers its confidence for review).")
@click.option("--not-duplicate", "different", is_flag=True,
              help="REF and OTHER are different memories: reflect never proposes merging them "
                   "(written in both files, committed).")
@click.option("--duplicate", "same", is_flag=True,
              help="REF and OTHER are one memory: merge them now (committed).")
@click.option("--session", metavar="ID", help="The agent session (default $MEMGIT_SESSION, else today).")
@click.pass_context
def feedback(ctx: click.Context, ref: str, other: str | None, verdict: str | None, different: bool, same: bool,
             session: str | None) -> None:
    """Record whether a recalled memory was used, ignored or wrong (kept locally, never
    committed), or whether two memories are duplicates (kept in the repository)."""
    # Separate flags, so that two verdicts at once are refused rather than the last one winning
    # (`--not-duplicate --duplicate` would merge what the first flag says to keep apart).
    given = [v for v in (verdict, "not-duplicate" if different else None, "duplicate" if same else None) if v]
    if len(given) > 1:
        raise MemgitError(f"--{given[0]} and --{given[1]} say different things: give one of them")
    verdict = given[0] if given else None
    if verdict is None:
        raise MemgitError("say how the memory did: --used, --ignored or --wrong (or, for two memories, "
                          "--not-duplicate or --duplicate)")
    pair = verdict in ("not-duplicate", "duplicate")
    if pair and other is None:
        raise MemgitError(f"--{verdict} is about two memories: memgit feedback A B --{verdict}")
    if not pair and other is not None:
        raise MemgitError(f"--{verdict} is about one memory; only --not-duplicate and --duplicate take two")
    mem = open_memgit(ctx)
    if other is not None:
        changed = mem.pair_feedback(ref, other, duplicate=verdict == "duplicate")
        if verdict == "duplicate":
            click.echo(f"merged into {changed[0].id}: {changed[0].title}")
        else:
            click.echo(f"{changed[0].id} and {changed[1].id} are different: reflect will not propose merging them")
        return
    record = mem.feedback(ref, verdict, session=session)
    click.echo(f"{record['id']} {record['verdict']}")


@click.command()
@click.option("--since", metavar="PERIOD", help="Only recalls, feedback and new memories since then (30d, 2w, a date).")
@json_option
@click.pass_context
def stats(ctx: click.Context, since: str | None, as_json: bool) -> None:
    """Memory health: hit rate, freshness of used memories, repeat explanations, counts."""
    info = open_memgit(ctx).stats(since=since)
    if as_json:
        echo_json(info)
        return
    for key, value in info.items():
        click.echo(f"{key + ':':<24} {value}")


COMMANDS = (recall, feedback, stats)
