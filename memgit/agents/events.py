"""The events of an agent's session, whatever agent wrote them: what each reader in
`memgit.agents.readers` makes of its format, and what capture and checkpoints read.

A tool call says what kind of action it is (`read`, `edit`, `run`, `delegate`, `other`) and
what it was aimed at, from one vocabulary of tool names shared by every format."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Tools whose input names a file they change.
EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit", "StrReplace", "apply_patch", "write_file",
              "replace", "edit", "write"}
#: Tools that look at files or the web without changing anything.
READ_TOOLS = {"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "read_file", "read_many_files", "glob",
              "grep_search", "search_file_content", "list_directory", "web_fetch", "google_web_search", "read",
              "grep", "find", "ls"}
SHELL_TOOLS = {"Bash", "shell", "exec_command", "local_shell", "exec", "Shell", "run_shell_command", "bash"}
#: Tools that hand part of the work to a sub-agent.
DELEGATE_TOOLS = {"Task", "Agent", "invoke_agent"}


def action_of(tool: str) -> str:
    """What kind of action a call of `tool` is: read, edit, run, delegate or other."""
    if tool in EDIT_TOOLS:
        return "edit"
    if tool in READ_TOOLS:
        return "read"
    if tool in SHELL_TOOLS:
        return "run"
    return "delegate" if tool in DELEGATE_TOOLS else "other"


@dataclass(frozen=True)
class Event:
    """One thing that happened: `role` is user, assistant, tool_call, tool_result, summary,
    choice or plan.

    A `choice` is the user's answer to a question the agent asked through a tool (Claude Code's
    `AskUserQuestion`, Codex's `request_user_input`, pi's `AskQuestions`…): `target` is the
    question, `options` the labels offered, `text` what the user picked or wrote (one event a
    question). A `plan` is a plan the agent put to the user (Claude Code's `ExitPlanMode`, a
    Codex `<proposed_plan>` block): `text` is the plan; `error` is set when the user rejected it.

    `line` is the 1-based line of the transcript it came from (evidence for a reviewer).
    A tool call carries its `tool`, its `action` (`action_of`), the `command` it ran, the
    `files`/`symbols` it edited and its `target` (the file, pattern or address read, the
    delegated job, the files edited, the command); a tool result says whether it was an `error`.
    """

    line: int
    role: str
    text: str = ""
    tool: str = ""
    command: str = ""
    files: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    error: bool = False
    call_id: str = ""
    sidechain: bool = False
    action: str = ""
    target: str = ""
    options: tuple[str, ...] = ()


@dataclass
class Transcript:
    path: str
    format: str
    events: list[Event] = field(default_factory=list)
    skipped: int = 0  # malformed lines and unknown records
    lines: int = 0
    session_id: str = ""
    cwd: str = ""
    started: str = ""
    ended: str = ""

    @property
    def edited_files(self) -> list[str]:
        seen: dict[str, None] = {}
        for event in self.events:
            if event.role == "tool_call" and event.tool in EDIT_TOOLS:
                seen.update(dict.fromkeys(event.files))
        return list(seen)
