"""What an agent puts into the user's turn that the person did not write: the one list every
reader filters the user's words through."""

from __future__ import annotations

import re

#: User text that the agent, not the person, put there.
NOISE = re.compile(
    r"\s*(<local-command-|<command-name>|<command-message>|<session-start-hook>|<system-reminder>"
    r"|<tick>|<goal>|<environment_context>|<user_instructions>|<task-notification>|<ide_"
    r"|<bash-input>|<bash-stdout>|<bash-stderr>|\[Request interrupted|Caveat:|# AGENTS\.md"
    r"|## Memories recalled by memgit)"
)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def user_text(text: str) -> str:
    """`text` without the reminders the agent wove in; empty when it is not the person's."""
    text = _REMINDER.sub("", text).strip()
    return "" if not text or NOISE.match(text) else text
