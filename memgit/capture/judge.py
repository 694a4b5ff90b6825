"""An optional judge for capture's candidates: a command the user named on their own machine,
sent the redacted candidates as JSON on stdin, answering which to keep and how to word them."""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import replace

from memgit.capture.candidate import Candidate
from memgit.errors import MemgitError

LLM_TIMEOUT = 120


def ask(command: str, candidates: list[Candidate], transcript: str
        ) -> tuple[list[Candidate], list[tuple[Candidate, str]]]:
    """Send the candidates to `command` (JSON on stdin) and apply its answer (JSON on stdout):
    `{"candidates": [{"index": 0, "keep": false, "reason": "…"}, {"index": 1, "title": "…",
    "body": "…"}]}`. Candidates it does not mention are kept as they are."""
    request = {"version": 1, "transcript": transcript,
               "instructions": "Keep only what a careful engineer would remember; rewrite titles and bodies "
                               "to be short and exact; answer {\"candidates\": [{\"index\", \"keep\", "
                               "\"title\", \"body\", \"reason\"}]}.",
               "candidates": [dict(c.to_dict(), index=i) for i, c in enumerate(candidates)]}
    try:
        result = subprocess.run(shlex.split(command), input=json.dumps(request, ensure_ascii=False),
                                capture_output=True, text=True, timeout=LLM_TIMEOUT, check=False)
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        raise MemgitError(f"--llm-cmd could not run ({exc}); nothing was written") from None
    if result.returncode != 0:
        raise MemgitError(f"--llm-cmd exited with {result.returncode}: {result.stderr.strip()[:200]}")
    try:
        answer = json.loads(result.stdout)
        verdicts = {int(v["index"]): v for v in answer.get("candidates", []) if isinstance(v, dict)}
    except (ValueError, TypeError, KeyError, AttributeError):
        raise MemgitError("--llm-cmd did not answer with JSON {\"candidates\": [...]}; "
                          "nothing was written") from None
    out: list[Candidate] = []
    vetoed: list[tuple[Candidate, str]] = []
    for i, candidate in enumerate(candidates):
        verdict = verdicts.get(i, {})
        if verdict.get("keep") is False:
            reason = str(verdict.get("reason") or "")[:100]
            vetoed.append((candidate, "vetoed by --llm-cmd: " + reason))
            continue
        title = " ".join(str(verdict.get("title") or candidate.title).split())[:200]
        body = str(verdict.get("body") or candidate.body).strip()
        same = (title, body) == (candidate.title, candidate.body)
        out.append(candidate if same else replace(candidate, title=title, body=body))
    return out, vetoed
