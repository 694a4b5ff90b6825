"""What a session taught, found in its transcript by rules (no model needed).

Four kinds of candidate, each with the transcript lines it came from:

- **conventions and preferences** the user stated, corrections included ("always…", "never…",
  "we use X, not Y", "don't…", "remember that…", "no, it's…"; 总是/不要/记住/我们用…):
  source `user`, confidence 0.9. Only the person's own messages count: not the agent's, not a
  sub-agent's prompt, not a compaction summary. Questions, hedged sentences ("maybe we
  should…") and thanks are not statements.
- **lessons**: a command that failed and then passed after edits. The failure's key line, the
  files and functions the fix changed; earlier edits that did not fix it are kept as dead ends.
  A failure never fixed in the session teaches nothing certain and is left out.
- **decisions**: the user picked one of the options the agent listed, or approved its plan.
- **a summary**: the goal (the first request), what was changed, how it ended.

Everything the agent merely supposed ("I think", "probably") is ignored: precision matters
more than recall. Pure: standard library only, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memgit.agents.events import Transcript
from memgit.capture.candidate import Candidate, fit
from memgit.capture.decisions import decisions
from memgit.capture.lessons import lessons
from memgit.capture.stated import stated
from memgit.capture.summary import summarize

__all__ = ["Candidate", "extract", "fit"]


def extract(transcript: Transcript, *, root: str = "", git_files: Sequence[str] = (),
            place: Callable[[Sequence[str]], tuple[str, ...]] | None = None) -> list[Candidate]:
    """Every candidate in `transcript`; paths are made relative to `root` (the repository), the
    summary's by `place` when given (`memgit.capture.paths.Place.paths`)."""
    base = root or transcript.cwd
    found = stated(transcript.events) + lessons(transcript.events, base) + decisions(transcript.events)
    summary = summarize(transcript, base, git_files, place)
    if summary is not None:
        found.append(summary)
    return [fit(c) for c in found]
