"""An optional judge for capture's candidates: a command on the user's own machine that says
which candidates to keep and how to word them.

The command is `[capture] llm_command` (honoured only from the user's machine, see
`memgit.config`) or `memgit capture --llm-cmd`. A command whose program is one memgit knows is
a *preset*: memgit writes the prompt the way that program reads it and finds the JSON object
in its free-text answer (prose, code fences, a model's thinking). Anything else is a *custom*
command speaking memgit's protocol: the request as JSON on stdin, the answer as JSON on stdout.

| preset | memgit runs | the prompt goes |
|---|---|---|
| `llm -m MODEL` | `llm -m MODEL --no-log` | on stdin |
| `claude -p` | `claude -p INSTRUCTIONS` | the instructions as an argument, the request on stdin |
| `codex exec` | `codex exec --skip-git-repo-check --sandbox read-only -` | on stdin (`-`) |
| `ollama run MODEL` | `ollama run MODEL` | on stdin |

The request: `{"version": 2, "instructions": …, "candidates": [{"index", "kind", "title", "body",
"evidence": {"lines": […]}, "context": [{"line", "role", "text"}], …}]}` — `context` is the
transcript around the candidate's evidence lines. Every text in it has been through capture's
secret redaction. The answer: `{"candidates": [{"index": 0, "keep": false, "reason": "…"},
{"index": 1, "title": "…", "body": "…", "kind": "…"}]}`; a candidate it does not mention is
kept as it is.

The command runs in an empty temporary folder (an agent CLI started as the judge must not load
the project's agent hooks and capture itself again) with `MEMGIT_JUDGE=1` set, in its own
process group, killed whole past the timeout.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import shlex
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from memgit.agents.events import Transcript
from memgit.capture.candidate import Candidate
from memgit.errors import MemgitError

LLM_TIMEOUT = 120
VERSION = 2
#: Kinds a judge may move a candidate to.
KINDS = ("convention", "preference", "lesson", "decision", "summary", "fact")
OFF = ("", "none", "off", "false")
MAX_ANSWER = 2_000_000  # characters of the command's output read; past them it is stopped
GRACE = 2  # seconds the output is read after the command exited (a child it left may hold it open)
CONTEXT_EVENTS = 2  # events either side of an evidence line
CONTEXT_CHARS = 400  # characters per event in the context
#: Where a JSON object may start in a judge's free text: `{"…` or `{}` (not code's `{{`, `{ x`).
_OBJECT = re.compile(r'\{\s*["}]')

INSTRUCTIONS = (
    "You review memories proposed from a finished coding-agent session, before a team keeps them in "
    "its repository. Keep a candidate only if a careful engineer on this project would want it next "
    "time: a rule or preference the user stated, a lesson (a failure and what fixed it), a decision "
    "the user made, a summary of the task. Veto chit-chat, one-off instructions, guesses, text quoted "
    "from tools or documents, and anything unclear without the session. Rewrite a kept title or body "
    "only to make it short, exact and self-contained; never invent facts. `context` shows the "
    "transcript around each candidate's evidence lines. Answer with one JSON object and nothing "
    'else: {"candidates": [{"index": 0, "keep": true, "title": "...", "body": "...", "kind": "...", '
    '"reason": "..."}]}; kinds: ' + ", ".join(KINDS) + "."
)

Redact = Callable[[str], tuple[str, int]]


def wanted(command: str | None) -> bool:
    """Whether `command` names a judge ("none", "off" or empty: no)."""
    return command is not None and command.strip().lower() not in OFF


def request(candidates: list[Candidate], transcript: Transcript | None, redact: Redact) -> dict[str, Any]:
    """What the judge is asked: the candidates, each with its redacted context."""
    items = []
    for number, candidate in enumerate(candidates):
        item = dict(candidate.to_dict(), index=number)
        item.pop("notes", None)
        item["context"] = context(transcript, candidate, redact) if transcript is not None else []
        items.append(item)
    return {"version": VERSION, "instructions": INSTRUCTIONS, "candidates": items}


def context(transcript: Transcript, candidate: Candidate, redact: Redact) -> list[dict[str, Any]]:
    """The transcript's events around the candidate's first evidence lines, redacted and cut."""
    events = [e for e in transcript.events if not e.sidechain]
    lines = [e.line for e in events]  # in file order
    chosen: dict[int, None] = {}
    for line in candidate.evidence[:3]:
        at = min(bisect.bisect_left(lines, line), len(lines) - 1)
        chosen.update(dict.fromkeys(range(max(0, at - CONTEXT_EVENTS), min(len(events), at + CONTEXT_EVENTS + 1))))
    out = []
    for i in sorted(chosen):
        event = events[i]
        text = event.text or event.command or event.target
        text = " ".join(text.split())
        if len(text) > CONTEXT_CHARS:
            text = text[: CONTEXT_CHARS - 1] + "…"
        out.append({"line": event.line, "role": event.role, "text": redact(text)[0]})
    return out


def command_line(command: str, payload: str) -> tuple[list[str], str, str]:
    """(argv, stdin, preset name or "") for running `command` on the request `payload` (JSON)."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise MemgitError(f"the capture judge {command!r} is not a valid command line ({exc})") from None
    if not words:
        raise MemgitError("the capture judge is an empty command")
    program = Path(words[0]).name
    prompt = INSTRUCTIONS + "\n\nThe request, as JSON:\n" + payload + "\n"
    if program == "llm":
        quiet = {"-n", "--no-log", "--log"} & set(words)
        return words + ([] if quiet else ["--no-log"]), prompt, "llm"
    if program == "claude":
        printing = {"-p", "--print"} & set(words)
        return words + ([] if printing else ["-p"]) + [INSTRUCTIONS], payload, "claude"
    if program == "codex":
        args = words[1:]
        if not args or args[0] not in ("exec", "e"):
            args = ["exec", *args]
        if "--skip-git-repo-check" not in args:
            args.append("--skip-git-repo-check")
        if not {"-s", "--sandbox"} & set(args) and not any(a.startswith("--sandbox=") for a in args):
            args += ["--sandbox", "read-only"]
        return [words[0], *args, "-"], prompt, "codex"
    if program == "ollama":
        if len(words) < 3 or words[1] != "run":
            raise MemgitError(f"the capture judge {command!r} names no model: write 'ollama run MODEL'")
        return words, prompt, "ollama"
    return words, payload, ""


def find_answer(text: str) -> dict[str, Any]:
    """The answer object in a command's output: the whole output as JSON, else the last JSON
    object holding a `candidates` list found in the text (prose, code fences, thinking), also
    inside a `{"result": "…"}` wrapper. Raises ValueError when there is none."""
    text = text[:MAX_ANSWER]
    found: dict[str, Any] | None = None
    decoder = json.JSONDecoder()
    start = _OBJECT.search(text)
    while start is not None:
        at = start.start()
        try:
            value, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):  # each failure costs the text before it: tried only at `{"`
            start = _OBJECT.search(text, at + 1)
            continue
        answer = _answer_in(value)
        if answer is not None:
            found = answer
        start = _OBJECT.search(text, max(end, at + 1))
    if found is None:
        raise ValueError("no JSON object with a 'candidates' list")
    return found


def _answer_in(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("candidates"), list):
        return value
    inner = value.get("result") or value.get("response")  # `claude --output-format json`, ollama's API shape
    if isinstance(inner, str):
        try:
            return find_answer(inner)
        except ValueError:
            return None
    return None


def run(command: str, payload: str, *, timeout: float = LLM_TIMEOUT) -> str:
    """The judge's output for the request `payload`; raises MemgitError when it cannot run,
    fails, or outlasts `timeout` seconds (then its whole process group is killed)."""
    argv, stdin, _ = command_line(command, payload)
    env = dict(os.environ, MEMGIT_JUDGE="1")
    with tempfile.TemporaryDirectory(prefix="memgit-judge-") as folder:
        try:
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, cwd=folder, env=env,
                                       start_new_session=True, encoding="utf-8", errors="replace")
        except OSError as exc:
            raise MemgitError(f"the capture judge {argv[0]!r} could not start ({exc.strerror or exc})") from None
        try:
            out, err = _talk(process, stdin, timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            raise MemgitError(f"the capture judge did not answer within {timeout:g} s") from None
        except BaseException:
            _kill(process)
            raise
    if len(out) > MAX_ANSWER:
        raise MemgitError(f"the capture judge printed more than {MAX_ANSWER} characters; it was stopped")
    if process.returncode != 0:
        last = (err.strip().splitlines() or [""])[-1][:200]
        raise MemgitError(f"the capture judge exited with {process.returncode}" + (f": {last}" if last else ""))
    return out


def _talk(process: subprocess.Popen[str], stdin: str, timeout: float) -> tuple[str, str]:
    """Write `stdin`, read the output (at most `MAX_ANSWER` characters: past them the command is
    stopped) until the command exits; a child it left behind holding the output open is not
    waited for past `GRACE` seconds. Raises TimeoutExpired past `timeout`."""
    out: list[bytes] = []
    err: list[bytes] = []

    def feed() -> None:
        try:
            assert process.stdin is not None
            process.stdin.write(stdin)
            process.stdin.close()
        except (OSError, ValueError):
            pass  # the command did not read it all

    def drain(stream: IO[str] | None, into: list[bytes], limit: int) -> None:
        size = 0
        try:  # what is there, as it comes: a text read would wait for the end of the output
            while stream is not None and (chunk := os.read(stream.fileno(), 65536)):
                size += len(chunk)
                into.append(chunk)
                if size > limit:
                    _stop(process)
                    return
        except (OSError, ValueError):
            pass

    threads = [threading.Thread(target=feed, daemon=True),
               threading.Thread(target=drain, args=(process.stdout, out, MAX_ANSWER), daemon=True),
               threading.Thread(target=drain, args=(process.stderr, err, 65536), daemon=True)]
    for thread in threads:
        thread.start()
    process.wait(timeout)
    for thread in threads[1:]:
        thread.join(GRACE)
    if any(thread.is_alive() for thread in threads[1:]):
        _stop(process)  # its children in its group; one in a session of its own is left to itself
    return (b"".join(out).decode("utf-8", "replace"), b"".join(err).decode("utf-8", "replace"))


def _stop(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass


def _kill(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        process.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass


def ask(command: str, candidates: list[Candidate], transcript: Transcript | None, redact: Redact, *,
        timeout: float = LLM_TIMEOUT) -> tuple[list[Candidate], list[tuple[Candidate, str]], str]:
    """Ask the judge about `candidates` and apply its answer: (kept, vetoed with the reason,
    a one-line note of what it did). Raises MemgitError when the judge fails or answers no JSON."""
    if not candidates:
        return [], [], ""
    payload = json.dumps(request(candidates, transcript, redact), ensure_ascii=False, indent=1)
    output = run(command, payload, timeout=timeout)
    try:
        answer = find_answer(output)
    except ValueError:
        raise MemgitError('the capture judge did not answer with JSON {"candidates": [...]}') from None
    verdicts: dict[int, dict[str, Any]] = {}
    for verdict in answer["candidates"]:
        try:
            verdicts[int(verdict["index"])] = verdict
        except (TypeError, KeyError, ValueError, OverflowError):  # no index, or 1e999
            continue
    kept: list[Candidate] = []
    vetoed: list[tuple[Candidate, str]] = []
    rewritten = 0
    for number, candidate in enumerate(candidates):
        verdict = verdicts.get(number, {})
        if verdict.get("keep") is False or str(verdict.get("keep")).lower() in ("false", "no"):
            reason = " ".join(str(verdict.get("reason") or "").split())[:100]
            vetoed.append((candidate, "vetoed by the judge" + (f": {reason}" if reason else "")))
            continue
        kept.append(_rewritten(candidate, verdict))
        rewritten += kept[-1] is not candidate
    note = f"judged: {len(vetoed)} vetoed, {rewritten} rewritten, {len(kept)} kept"
    return kept, vetoed, note


def _rewritten(candidate: Candidate, verdict: dict[str, Any]) -> Candidate:
    """The candidate as the verdict words it; a field the verdict leaves blank or gives as no
    string (a number, a list, an object) keeps the candidate's."""
    def text(key: str) -> str:
        value = verdict.get(key)
        return value.strip() if isinstance(value, str) else ""

    title = " ".join((text("title") or candidate.title).split())[:200]
    body = text("body") or candidate.body
    kind = text("kind").lower()
    kind = kind if kind in KINDS else candidate.kind
    if (title, body, kind) == (candidate.title, candidate.body, candidate.kind):
        return candidate
    return replace(candidate, title=title, body=body, kind=kind)
