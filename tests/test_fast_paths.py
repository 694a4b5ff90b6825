"""What keeps the paths an agent waits on short, checked by what they do, not by a clock.

- a hook that only recalls imports none of the heavy modules (transcript readers, secret
  rules, the embedder, YAML, the MCP SDK): checked in the hook's own process, `sys.modules`;
- each hook event runs a bounded number of git processes (counted with GIT_TRACE);
- the background embedding job yields: nice 10, the idle scheduling class, one CPU, one
  thread per library (recorded from inside the job by its embedder);
- the answers git gives once instead of several times are the same answers.

Real repositories, real hooks as subprocesses, a real detached job; the job's embedder is a
stand-in (hashed words) that also writes down the state of the process it runs in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

import pytest

import memgit
from memgit.git import repostate

from .conftest import ROOT, git
from .gated_embedder import _vector

HEAVY = ("memgit.agents.agentlog", "memgit.agents.transcripts", "memgit.agents.readers",
         "memgit.memory.credentials", "memgit.memory.vendor_tokens", "memgit.capture", "memgit.reflect",
         "numpy", "onnxruntime", "tokenizers", "yaml", "frontmatter", "mcp", "pydantic", "click",
         "tempfile", "socket")

# The hook's own process: run it as `python -I -m memgit.hookrun` does, then list what it imported.
RUN_HOOK = (
    "import json, sys\n"
    "from memgit import hookrun\n"
    "code = hookrun.main(sys.argv[1:])\n"
    "from memgit.index import fts\n"
    "from memgit.memory import anchors, format\n"
    "compiled = [f.__name__ for f in (fts._cjk, format._token_re, anchors._cjk_run) if f.cache_info().misses]\n"
    "sys.stderr.write('\\nCOMPILED ' + json.dumps(compiled))\n"
    "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n"
)


@pytest.fixture
def project(repo: Path) -> Path:
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.init()
        ids = [mem.remember(f"The retry handler {i} backs off exponentially, capped at {i + 2} minutes",
                            kind="fact").memory.id for i in range(6)]
        mem.update(ids[0], pinned=True)
    git(repo, "checkout", "-q", "-b", "fix/retry-backoff")
    (repo / "retry.py").write_text("def backoff(n):\n    return 2 ** n\n")
    # Files written a moment ago are read again by the next call (their timestamps could still
    # hide a change); an hour old, one warm-up hook reads them and the index is settled.
    hour_ago = os.stat(repo / ".memory").st_mtime - 3600
    for path in [repo / ".memory", *(repo / ".memory").rglob("*")]:
        os.utime(path, (hour_ago, hour_ago))
    run_hook(repo, "user-prompt", payload(repo, "s-warm-up", prompt="warm up"))
    return repo


def payload(repo: Path, session: str, **extra: str) -> str:
    return json.dumps({"session_id": session, "cwd": str(repo), "transcript_path": None, **extra})


def run_hook(repo: Path, event: str, data: str, env: dict[str, str] | None = None) -> tuple[str, list[str]]:
    done = subprocess.run([sys.executable, "-I", "-c", RUN_HOOK, "claude", event], input=data, cwd=repo,
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert not (repo / ".git" / "memgit" / "hooks.log").exists(), (repo / ".git" / "memgit" / "hooks.log").read_text()
    compiled = json.loads(done.stderr.split("\nCOMPILED ", 1)[1].split("\nMODULES ", 1)[0])
    assert compiled == [], f"CJK patterns compiled for ASCII text: {compiled}"
    return done.stdout, json.loads(done.stderr.split("\nMODULES ", 1)[1])


@pytest.mark.parametrize("event", ["user-prompt", "session-start"])
def test_a_hook_that_recalls_imports_no_heavy_module(project: Path, event: str) -> None:
    out, modules = run_hook(project, event, payload(project, "s-imports", prompt="how does the retry handler back off",
                                                    source="startup"))
    assert "retry handler" in out  # it did its work
    loaded = [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert loaded == []


@pytest.mark.parametrize("text", ["plain ASCII words, snake_case and a/path.py::f()", "retry 重试 策略 policy",
                                  "한국어 텍스트 mixed", "ｶﾀｶﾅ and 𠀀 beyond the BMP", "", "   ", "__init__ -- x"])
def test_token_counts_do_not_depend_on_the_ascii_shortcut(text: str) -> None:
    import re

    from memgit.memory.format import CJK_CLASS, count_tokens

    full = sum(-(-len(m.group()) // 4) if len(m.group()) > 1 else 1
               for m in re.finditer(rf"[^\W_{CJK_CLASS}]+|\S", text))
    assert count_tokens(text) == full


def git_calls(repo: Path, event: str, data: str, trace: Path) -> list[str]:
    trace.unlink(missing_ok=True)
    run_hook(repo, event, data, env={**os.environ, "GIT_TRACE": str(trace)})
    return [line.split("built-in: ", 1)[1] for line in trace.read_text().splitlines() if "built-in: git" in line]


def test_each_hook_runs_few_git_processes(project: Path, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "fix the backoff"}}) + "\n")
    # A new session: the repository's state is asked once (HEAD and branch together, the default branch).
    start = git_calls(project, "session-start", payload(project, "s-git", source="startup"), trace)
    assert [c for c in start if "symbolic-ref" in c or "--verify HEAD" in c] == [], start
    # What the default branch holds (reviewed memories) is listed once per tip of that branch,
    # not once per process: the first hook after the branch moves pays one `ls-tree`.
    assert len([c for c in start if " ls-tree " in c]) == 1 and len(start) <= 8, start
    again = git_calls(project, "session-start", payload(project, "s-git2", source="startup"), trace)
    assert [c for c in again if " ls-tree " in c] == [] and len(again) <= 7, again
    # The same session's prompts: where the repository is, and memgit's git config.
    prompt = git_calls(project, "user-prompt", payload(project, "s-git", prompt="retry backoff"), trace)
    assert len(prompt) <= 2, prompt
    fresh = git_calls(project, "user-prompt", payload(project, "s-other", prompt="retry backoff"), trace)
    assert len(fresh) <= 4, fresh
    data = payload(project, "s-git", transcript_path=str(transcript))
    assert len(git_calls(project, "pre-compact", data, trace)) <= 10
    assert len(git_calls(project, "session-end", payload(project, "s-new-end"), trace)) <= 4


def test_held_state_is_what_git_says_apart(project: Path, tmp_path: Path) -> None:
    apart = (repostate.head(project), repostate.branch(project))
    with repostate.held():
        assert (repostate.head(project), repostate.branch(project)) == apart == (
            git(project, "rev-parse", "HEAD").strip(), "fix/retry-backoff")
    git(project, "checkout", "-q", "--detach")
    with repostate.held():
        assert repostate.branch(project) is None and repostate.head(project) == apart[0]
    unborn = tmp_path / "unborn"
    git(tmp_path, "init", "-q", str(unborn))
    git(unborn, "checkout", "-q", "-b", "first")
    with repostate.held():
        assert (repostate.head(unborn), repostate.branch(unborn)) == (None, "first")


def test_the_default_branch_in_one_call(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    git(tmp_path, "init", "-q", "-b", "trunk", str(origin))
    git(origin, "commit", "-q", "--allow-empty", "-m", "first")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "branch", "-q", "main")  # origin's HEAD says trunk: a local main does not count
    assert repostate.default_branch(clone) == "trunk"
    only_master = tmp_path / "m"
    git(tmp_path, "init", "-q", "-b", "master", str(only_master))
    git(only_master, "commit", "-q", "--allow-empty", "-m", "first")
    git(only_master, "branch", "-q", "main/not-main")  # a ref under main/ is not main
    assert repostate.default_branch(only_master) == "master"
    neither = tmp_path / "n"
    git(tmp_path, "init", "-q", "-b", "dev", str(neither))
    git(neither, "commit", "-q", "--allow-empty", "-m", "first")
    assert repostate.default_branch(neither) == "main"


# -- the background job --------------------------------------------------------------------


class ProcessRecorder:
    """Hashed-word vectors; writes the state of the process it embeds in to $MEMGIT_TEST_PROCESS."""

    id = "test-process-recorder-64"
    dim = 64

    def embed(self, texts: Sequence[str]) -> list[Any]:
        where = os.environ.get("MEMGIT_TEST_PROCESS")
        if where:
            state = {
                "nice": os.getpriority(os.PRIO_PROCESS, 0),
                "policy": os.sched_getscheduler(0) if hasattr(os, "sched_getscheduler") else None,
                "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
                "threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS",
                                                           "TOKENIZERS_PARALLELISM")},
                "pid": os.getpid(),
            }
            Path(where).write_text(json.dumps(state))
        return [_vector(text) for text in texts]

    def embed_query(self, text: str) -> Any:
        return _vector(text)


RECORDER = f"{__name__}:ProcessRecorder"


def test_the_embedding_job_yields_to_everything_else(repo: Path, tmp_path: Path) -> None:
    from memgit.memory.format import Memory
    from memgit.store.folder import Store

    record = tmp_path / "process.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMGIT_INDEX_EMBEDDER": RECORDER,
           "MEMGIT_INDEX_BACKGROUND": "1", "MEMGIT_TEST_PROCESS": str(record)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=120)

    assert cli("init").returncode == 0
    assert cli("recall", "anything").returncode == 0
    store = Store(repo / ".memory")
    for i in range(90):  # past what a call embeds itself
        store.write(Memory(id=f"m-{i:06x}", title=f"Pulled memory {i}", body=f"topic{i} words", path=f"p-{i}.md"))
    git(repo, "add", ".memory")
    git(repo, "commit", "-q", "-m", "pull")
    started = cli("recall", "topic7")
    assert "in the background" in started.stderr, started.stderr
    import time

    deadline = time.monotonic() + 120
    while not record.exists() or json.loads(record.read_text() or "{}").get("pid") is None:
        assert time.monotonic() < deadline, "the job never embedded"
        time.sleep(0.1)
    state = json.loads(record.read_text())
    assert state["pid"] != os.getpid()
    assert state["nice"] >= 10
    assert state["threads"] == {"OMP_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    if sys.platform.startswith("linux"):
        assert state["policy"] == os.SCHED_IDLE
        assert state["cpus"] == 1
