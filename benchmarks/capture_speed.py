#!/usr/bin/env python3
"""How long `memgit capture --json` takes on a big session, and how much memory it needs.

    python benchmarks/capture_speed.py [--mb 20] [--runs 3]

A Claude Code transcript of about `--mb` MB is generated in a temporary folder: many user
turns, each answered by the agent with file reads, edits, shell commands (some failing, then
passing) and long tool outputs (build logs, file contents), streamed assistant text, and the
bookkeeping records Claude Code writes. `memgit capture --json` then runs on it as a
subprocess in a scratch repository (`git init`, `memgit init`), the way a user or the
session-end hook runs it. Printed: the file's size and lines, the wall time of each run and
its CPU time (user + system: steadier than wall time on a busy machine), the peak resident
memory of the capture process (`resource.getrusage(RUSAGE_CHILDREN)`, which on Linux is the
largest child's), and how many candidates it proposed. It asserts
nothing: the target is <= 2 s and <= 200 MB for a 20 MB transcript. Standard library and
memgit only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

SESSION = "5f0c7a1e-bench-4d2b-9c1a-capture00001"
FILES = [f"src/pkg/module_{n}.py" for n in range(40)] + [f"tests/test_module_{n}.py" for n in range(20)]


sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder for this one import only
import validity  # noqa: E402  (benchmarks/validity.py: one module for every benchmark in a run)
sys.path.pop(0)

require = validity.require


def record(kind: str, uuid: int, message: dict, **extra: object) -> str:
    out = {"type": kind, "uuid": f"u-{uuid}", "parentUuid": f"u-{uuid - 1}", "sessionId": SESSION,
           "cwd": "/work/project", "timestamp": f"2026-11-30T10:{uuid // 3600 % 60:02d}:{uuid % 60:02d}Z",
           "isSidechain": False, "userType": "external", "version": "2.0.0", "gitBranch": "main",
           "message": message}
    out.update(extra)
    return json.dumps(out)


def log_output(rng: random.Random, lines: int) -> str:
    words = ["compiling", "linking", "module", "package", "resolved", "fetched", "warning", "cached", "step", "done",
             "build"]
    return "\n".join(f"[{n:05d}] " + " ".join(rng.choices(words, k=12)) for n in range(lines))


def file_text(rng: random.Random, lines: int) -> str:
    return "\n".join(f"    value_{n} = compute_{rng.randint(0, 999)}(arg_{n % 7}, limit={n})  # step {n}"
                     for n in range(lines))


def transcript(path: Path, megabytes: float) -> tuple[int, int]:
    """Write a transcript of about `megabytes` MB to `path`; its size in bytes and its lines."""
    rng = random.Random(7)
    size, lines, uuid, turn = 0, 0, 0, 0
    with open(path, "w", encoding="utf-8") as handle:
        def put(text: str) -> None:
            nonlocal size, lines
            handle.write(text + "\n")
            size += len(text.encode()) + 1
            lines += 1

        while size < megabytes * 1024 * 1024:
            turn += 1
            uuid += 1
            target = FILES[turn % len(FILES)]
            ask = (f"Fix the failing check in {target}: the parser drops the last field when a line "
                   f"ends with a separator. Keep the public API as it is." + (
                       f" Always run the tests of module {turn} with -q before committing." if turn % 10 == 0
                       else "")) if turn > 1 else \
                "Add streaming support to the parser and keep the memory use flat on big inputs."
            put(record("user", uuid, {"role": "user", "content": ask}))
            for step in range(rng.randint(6, 12)):
                uuid += 1
                call = f"toolu_{turn}_{step}"
                choice = step % 4
                if choice == 0:
                    tool, args = "Read", {"file_path": f"/work/project/{target}"}
                    output, failed = file_text(rng, rng.randint(20, 200)), False
                elif choice == 1:
                    tool, args = "Edit", {"file_path": f"/work/project/{target}",
                                          "old_string": "return fields[:-1]", "new_string": "return fields"}
                    output, failed = f"The file /work/project/{target} has been updated.", False
                else:
                    failed = choice == 2 and step < 6
                    run = f"python -m pytest -q tests/test_module_{turn % 20}.py" if choice == 2 else "ruff check ."
                    tool, args = "Bash", {"command": run, "description": "run the checks"}
                    tail = (f"FAILED tests/test_module_{turn % 20}.py::test_split_{turn} - "
                            f"AssertionError: {turn} != {turn + 1}\n1 failed"
                            if failed else "120 passed in 3.21s")
                    output = log_output(rng, rng.randint(10, 400)) + "\n" + tail
                text = f"Let me look at {target} and run the checks again (step {step})."
                put(record("assistant", uuid, {"id": f"msg_{turn}_{step}", "role": "assistant", "type": "message",
                                               "model": "claude", "content": [{"type": "text", "text": text}]}))
                put(record("assistant", uuid, {"id": f"msg_{turn}_{step}", "role": "assistant", "type": "message",
                                               "model": "claude", "content": [
                                                   {"type": "tool_use", "id": call, "name": tool, "input": args}]}))
                uuid += 1
                result = {"type": "tool_result", "tool_use_id": call, "content": output, "is_error": failed}
                put(record("user", uuid, {"role": "user", "content": [result]},
                           toolUseResult={"stdout": output[:2000], "stderr": "", "interrupted": False}))
                if failed:  # the agent's diagnosis, between the failure and the fix
                    uuid += 1
                    put(record("assistant", uuid, {"id": f"msg_{turn}_{step}_why", "role": "assistant",
                                                   "type": "message", "model": "claude", "content": [
                                                       {"type": "text", "text": f"The split in {target} drops the "
                                                        "last field when a line ends with a separator; "
                                                        "`split_fields()` must keep it."}]}))
            uuid += 1
            put(record("assistant", uuid, {"id": f"msg_{turn}_end", "role": "assistant", "type": "message",
                                           "model": "claude", "content": [
                                               {"type": "text", "text": "Done: the parser keeps the last field "
                                                                        "and all 120 tests pass."}]}))
            put(json.dumps({"type": "file-history-snapshot", "messageId": f"m{uuid}", "snapshot": {
                "trackedFileBackups": {f: {"version": turn} for f in FILES[:20]}}}))
    return size, lines


def main() -> int:
    return validity.refuse_on_invalid(measure, "capture_speed")


def measure() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=20.0, help="transcript size in MB (default 20)")
    parser.add_argument("--runs", type=int, default=3, help="captures to time (default 3)")
    parser.add_argument("--command", help="how to run memgit, e.g. another checkout's "
                        "'python -m memgit' with PYTHONPATH set (default: this environment's memgit)")
    args = parser.parse_args()
    memgit = shutil.which("memgit", path=os.path.dirname(sys.executable)) or shutil.which("memgit")
    command = args.command.split() if args.command else [memgit] if memgit else [sys.executable, "-m", "memgit"]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
                   GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
        subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "start"], cwd=repo, check=True, env=env)
        subprocess.run([*command, "init"], cwd=repo, check=True, env=env, capture_output=True)
        path = Path(tmp) / "session.jsonl"
        size, lines = transcript(path, args.mb)
        print(f"transcript: {size / 2**20:.1f} MB, {lines} lines")
        times, cpus = [], []
        for run in range(args.runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run([*command, "capture", "--json", str(path)], cwd=repo, env=env,
                                  capture_output=True, text=True, check=False)
            times.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            require(done.returncode == 0,
                    f"run {run + 1}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
            try:
                found = json.loads(done.stdout)
            except ValueError:
                raise validity.InvalidRun(f"run {run + 1}: capture --json printed no JSON") from None
            require(found.get("candidates"), f"run {run + 1}: capture found nothing in the transcript")
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(Counter(c["kind"] for c in found["candidates"]).items()))
            print(f"run {run + 1}: {times[-1]:.2f} s ({cpus[-1]:.2f} s of CPU), {len(found['candidates'])} "
                  f"candidates ({kinds or 'none'}), {len(found['dropped'])} left out")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
        print(f"capture --json: best {min(times):.2f} s, median {sorted(times)[len(times) // 2]:.2f} s, "
              f"CPU best {min(cpus):.2f} s, peak RSS {peak:.0f} MB (target: <= 2 s, <= 200 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
