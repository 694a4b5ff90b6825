"""memgit in an agent's sessions: `hooks`, `checkpoint`, `resume` (the MCP server: `servers`)."""

from __future__ import annotations

from pathlib import Path

import click

from memgit.cli.common import echo_json, open_memgit


def _root(ctx: click.Context) -> Path:
    from memgit.git.repo import require  # when the command runs: `memgit --help` stays light

    return require(Path(ctx.find_root().obj.get("path", ".")).resolve()).root


@click.group()
def hooks() -> None:
    """Install, check and remove memgit's hooks: in a coding agent (claude, codex) or in git."""


@hooks.command()
@click.argument("target")
@click.option(
    "--user", is_flag=True, help="Install in the user's settings (~/.claude, ~/.codex), for every project."
)
@click.option("--prompts", is_flag=True, help="Also recall for every prompt (UserPromptSubmit).")
@click.option("--mcp", is_flag=True, help="Also register 'memgit mcp' as the agent's MCP server.")
@click.option("--dry-run", is_flag=True, help="Print the change to the settings file; write nothing.")
@click.pass_context
def install(ctx: click.Context, target: str, user: bool, prompts: bool, mcp: bool, dry_run: bool) -> None:
    """Add memgit's hooks to TARGET (claude, codex: merged into their settings; git: its hooks
    folder, a hook already there kept and run first, and the merge driver)."""
    from memgit.agents import agenthooks  # when the command runs: `memgit --help` stays light

    if target == "git":
        _git_hooks(ctx, "install", dry_run)
        return
    plan = agenthooks.target(target).install(_root(ctx), user=user, prompts=prompts)
    _finish(plan, dry_run, f"installed memgit's {target} hooks in {plan.path}")
    if mcp:
        from memgit.agents import mcpsetup  # when the command runs: `memgit --help` stays light

        server = mcpsetup.plan(target, _root(ctx), user=user)
        _finish(server, dry_run, f"registered memgit's MCP server in {server.path}")


@hooks.command()
@click.argument("target")
@click.option("--user", is_flag=True, help="Remove them from the user's settings instead of the project's.")
@click.option("--dry-run", is_flag=True, help="Print the change to the settings file; write nothing.")
@click.pass_context
def uninstall(ctx: click.Context, target: str, user: bool, dry_run: bool) -> None:
    """Remove exactly the hooks 'memgit hooks install' added to TARGET (git: the hooks it
    chained are put back as they were)."""
    from memgit.agents import agenthooks  # when the command runs: `memgit --help` stays light

    if target == "git":
        _git_hooks(ctx, "uninstall", dry_run)
        return
    plan = agenthooks.target(target).uninstall(_root(ctx), user=user)
    _finish(plan, dry_run, f"removed memgit's {target} hooks from {plan.path}")
    from memgit.agents import mcpsetup  # when the command runs: `memgit --help` stays light

    server = mcpsetup.plan(target, _root(ctx), user=user, remove=True) if not (user and target == "claude") else None
    if server is not None and server.changed:
        _finish(server, dry_run, f"removed memgit's MCP server from {server.path}")


def _git_hooks(ctx: click.Context, action: str, dry_run: bool) -> None:
    from memgit.git import hooks as githooks  # when the command runs: `memgit --help` stays light
    from memgit.git.repo import require  # when the command runs: `memgit --help` stays light

    repo = require(_root(ctx))
    if dry_run:
        for hook in githooks.status(repo):
            click.echo(f"{hook.name:<14}{hook.state:<10}{hook.path}")
        click.echo(f"would {action} memgit's git hooks in {githooks.gitrepo.hooks_dir(repo)}", err=True)
        return
    states = githooks.install(repo) if action == "install" else githooks.uninstall(repo)
    for hook in states:
        click.echo(f"{hook.name:<14}{hook.state:<10}{hook.path}")
    click.echo(f"{action}ed memgit's git hooks" + (" and its merge driver" if action == "install" else ""), err=True)


def _finish(plan, dry_run: bool, done: str) -> None:  # type: ignore[no-untyped-def]
    from memgit.agents import agenthooks  # when the command runs: `memgit --help` stays light

    if dry_run:
        click.echo(plan.diff, nl=False)
        if not plan.changed:
            click.echo(f"{plan.path}: nothing to change", err=True)
        return
    if not plan.changed:
        click.echo(f"{plan.path} is already as it should be; nothing to do", err=True)
        return
    agenthooks.apply(plan)
    click.echo(done, err=True)


@hooks.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Which agents have memgit's hooks, where, and whether their command runs."""
    from memgit.agents import agenthooks  # when the command runs: `memgit --help` stays light

    root = _root(ctx)
    rows = [row for t in agenthooks.TARGETS.values() for row in t.status(root)]
    from memgit.agents import mcpsetup  # when the command runs: `memgit --help` stays light

    for row in rows:
        again = mcpsetup.unisolated(row["agent"], root, user=row["scope"] == "user")
        if again and not row["problem"]:
            row["problem"] = ("its MCP server is registered as an older memgit wrote it (python -m memgit "
                              f"without -I, which runs a memgit/ folder of the project): run '{again}' again")
    from memgit.git import localstate  # when the command runs: `memgit --help` stays light
    from memgit.git.repo import require  # when the command runs: `memgit --help` stays light

    log = localstate.hooks_log(require(root).git_dir)
    last = log.read_text(encoding="utf-8", errors="replace").splitlines()[-1:] if log.exists() else []
    if as_json:
        from memgit.git import hooks as githooks  # when the command runs: `memgit --help` stays light

        git_rows = [{"name": h.name, "state": h.state, "path": str(h.path)} for h in githooks.status(require(root))]
        echo_json({"targets": rows, "git": git_rows, "last_failure": last[0] if last else None})
        return
    for row in rows:
        state = ", ".join(row["events"]) if row["events"] else "not installed"
        click.echo(f"{row['agent']:<7}{row['scope']:<8}{state}  ({row['path']})")
        for key in ("problem", "note"):
            if row.get(key):
                click.echo(f"        {key}: {row[key]}")
    from memgit.git import hooks as githooks  # when the command runs: `memgit --help` stays light

    for hook in githooks.status(require(root)):
        click.echo(f"{'git':<7}{'repo':<8}{hook.name}: {hook.state}  ({hook.path})")
    if last:
        click.echo(f"last hook failure: {last[0]}  (see {log})")


@click.command()
@click.option("--intent", help="What the task is: action, object and purpose (default: the latest request).")
@click.option(
    "--task", "task_id", help="The task id (default: MEMGIT_TASK, the branch, or the agent session)."
)
@click.option("--session", help="The agent session whose start and transcript to use.")
@click.option("--commit", "commit", is_flag=True, help="Commit the checkpoint now instead of staging it.")
@click.pass_context
def checkpoint(
    ctx: click.Context, intent: str | None, task_id: str | None, session: str | None, commit: bool
) -> None:
    """Save the current task's state as a checkpoint memory (staged, to ride with your commit)."""
    memory = open_memgit(ctx).checkpoint(intent=intent, task_id=task_id, session=session, commit=commit)
    click.echo(memory.id)


@click.command()
@click.option(
    "--task", "task_id", help="The task id (default: MEMGIT_TASK, the branch, or the agent session)."
)
@click.option("--budget", type=click.IntRange(1), help="Token budget (default: [inject] budget, 600).")
@click.option("--session", help="Leave out what memgit already gave this agent session.")
@click.pass_context
def resume(ctx: click.Context, task_id: str | None, budget: int | None, session: str | None) -> None:
    """Print what an agent reads to pick a task back up: its latest checkpoint, then relevant memories."""
    given = open_memgit(ctx).resume(task_id=task_id, budget=budget, session=session)
    if given.text:
        click.echo(given.text, nl=False)
    if given.reason:
        click.echo(given.reason, err=True)


COMMANDS = (hooks, checkpoint, resume)
