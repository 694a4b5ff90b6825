"""cctrace's Claude Code session exports (`# Claude Code Session Export`): turns headed
`### 👤 User` and `### 🤖 Assistant (model)` under a `**[time]**` line, the model's reasoning
in `<details>`, tool calls as `🔧 **Tool Use: NAME**` with a JSON block, and their output as
`📊 **Tool Result:**` blocks under a user heading: the tool's output, not the user's words."""

from __future__ import annotations

import re

from memgit.agents.events import Transcript
from memgit.agents.readers.chat import read_turns
from memgit.agents.readers.reader import Head, Lines

FORMAT = "cctrace"
_TURN = re.compile(r"^#{2,4}\s*(?:👤\s*(?P<h>User)|🤖\s*(?P<p>Assistant))\b[^\n]*$")
_MARK = re.compile(r"^(?:# Claude Code Session Export\s*$|#{2,4}\s*(?:👤\s*User|🤖\s*Assistant)\b)", re.MULTILINE)


def sniff(head: Head) -> bool:
    return not head.json and bool(_MARK.search(head.text))


def read(lines: Lines, transcript: Transcript) -> None:
    read_turns(lines, transcript, _TURN)
