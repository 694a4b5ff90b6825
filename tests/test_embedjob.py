"""Vectors catch up in the background after a big pull, and `import` embeds what it imports.

Real repositories, real SQLite and real processes: `memgit` runs as a subprocess as an agent
runs it, and the background job it starts is a real detached process. The job's embedder is
`tests/gated_embedder.py` (fast, and able to stop between two batches so that a test can kill
the job there without timing anything); the import test runs the real MiniLM model. Waiting
is polling with a generous deadline, never a timing assertion.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from memgit.memory.format import Memory
from memgit.store.folder import Store

from .conftest import ROOT, git

GATED = "tests.gated_embedder:GatedEmbedder"
MANY = 90  # past AUTO_EMBED_MAX (48) even after one batch of EMBED_BATCH (32)
STARTED = f"embedding {MANY} memories in the background; recall uses keywords and anchors for them meanwhile"


def memgit(cwd: Path, *args: str, gate: Path | None = None,
           embedder: str = GATED) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMGIT_INDEX_EMBEDDER": embedder,
           "MEMGIT_INDEX_BACKGROUND": "1"}
    if gate is not None:
        env["MEMGIT_TEST_GATE"] = str(gate)
    return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def own_texts(gate: Path) -> list[str]:
    """The memories' own texts the gated embedder embedded (title and body); the other lines
    are the title lane's (`memgit.index.titles`: the title alone), each embedded once too."""
    lines = (gate / "texts").read_text().splitlines()
    lane = [line for line in lines if " topic" not in line]
    assert len(lane) == len(set(lane))
    return [line for line in lines if " topic" in line]


def status(repo: Path) -> dict[str, object]:
    result = memgit(repo, "status", "--json")
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def wait_for(what: Callable[[], bool], message: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, message
        time.sleep(0.1)


def job_pid(repo: Path) -> int | None:
    found = re.match(r"running \(pid (\d+)\)", str(status(repo)["embedding_in_background"]))
    return int(found.group(1)) if found else None


@pytest.fixture
def pulled(repo: Path, tmp_path: Path) -> Iterator[Path]:
    """A repository with an index, then MANY memories arriving at once (as a `git pull` does)."""
    assert memgit(repo, "init").returncode == 0
    assert memgit(repo, "recall", "anything").returncode == 0  # the index exists, with nothing pending
    store = Store(repo / ".memory")
    for i in range(MANY):
        store.write(Memory(id=f"m-{i:06x}", title=f"Pulled memory number {i}",
                           body=f"topic{i} shared words about the service", path=f"pulled-{i}.md"))
    git(repo, "add", ".memory")
    git(repo, "commit", "-q", "-m", "pull")
    gate = tmp_path / "gate"
    gate.mkdir()
    yield gate
    (gate / "allow").unlink(missing_ok=True)  # a job left waiting by a failed test goes on and exits


def test_recall_past_the_limit_embeds_the_rest_in_the_background(repo: Path, pulled: Path) -> None:
    result = memgit(repo, "recall", "topic7 service", gate=pulled)
    assert result.returncode == 0
    assert "Pulled memory number 7" in result.stdout  # answered at once, from keywords
    assert STARTED in result.stderr and "reindex" not in result.stderr
    wait_for(lambda: status(repo)["pending_vectors"] == 0, "the background job never embedded everything")
    wait_for(lambda: job_pid(repo) is None, "the background job did not exit when nothing was pending")
    assert status(repo)["vectors"] == MANY
    assert len(own_texts(pulled)) == MANY  # each embedded once
    log = (repo / ".git" / "memgit" / "embed.log").read_text()
    assert f"embedded {MANY} memories in the background" in log
    again = memgit(repo, "recall", "topic7 service", "--explain", gate=pulled)
    assert "in the background" not in again.stderr and "vector" in again.stdout


def test_one_job_at_a_time_and_a_killed_job_is_resumed(repo: Path, pulled: Path) -> None:
    (pulled / "allow").write_text("1")  # the job commits one batch, then waits inside the second
    first = memgit(repo, "recall", "topic7 service", gate=pulled)
    assert STARTED in first.stderr
    wait_for(lambda: (pulled / "waiting").exists(), "the background job never reached its second batch")
    pid = job_pid(repo)
    assert pid is not None and status(repo)["pending_vectors"] == MANY - 32

    # While it runs, recalls start no second job, and a second job started by hand leaves at once.
    second = memgit(repo, "recall", "topic8 service", gate=pulled)
    assert second.returncode == 0 and "in the background" not in second.stderr
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMGIT_TEST_GATE": str(pulled)}
    db = repo / ".git" / "memgit" / "index.db"
    by_hand = subprocess.run([sys.executable, "-m", "memgit.embedjob", str(db), GATED], env=env, timeout=120)
    assert by_hand.returncode == 0
    assert (pulled / "batches").read_text().split() == [str(pid)]  # only the first job ever embedded
    assert job_pid(repo) == pid

    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: job_pid(repo) is None, "the killed job still holds the lock")
    # The committed batch stays; only the one being embedded is lost.
    assert status(repo)["pending_vectors"] == MANY - 32

    (pulled / "allow").write_text("100")
    third = memgit(repo, "recall", "topic9 service", gate=pulled)
    assert f"embedding {MANY - 32} memories in the background" in third.stderr
    wait_for(lambda: status(repo)["pending_vectors"] == 0, "the next job did not finish the rest")
    assert len(own_texts(pulled)) == MANY  # nothing embedded twice


def hook_sync(repo: Path, gate: Path) -> subprocess.Popen[bytes]:
    """What the post-merge hook starts after a pull (not `-I` here: the gated test embedder
    is imported from this checkout)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMGIT_INDEX_EMBEDDER": GATED,
           "MEMGIT_TEST_GATE": str(gate)}
    return subprocess.Popen([sys.executable, "-m", "memgit.githooks", "sync"], cwd=repo, env=env)


def embedders(gate: Path) -> set[str]:
    return set((gate / "batches").read_text().split())


def test_the_hook_sync_leaves_the_embedding_to_a_running_job(repo: Path, pulled: Path) -> None:
    (pulled / "allow").write_text("1")  # the job commits one batch, then waits inside the second
    assert STARTED in memgit(repo, "recall", "topic7 service", gate=pulled).stderr
    wait_for(lambda: (pulled / "waiting").exists(), "the background job never reached its second batch")
    job = job_pid(repo)
    sync = hook_sync(repo, pulled)
    try:
        sync.wait(timeout=60)
    except subprocess.TimeoutExpired:
        pass  # it embeds too, and waits at the gate like the job
    (pulled / "allow").unlink()
    assert sync.wait(timeout=120) == 0
    wait_for(lambda: job_pid(repo) is None, "the background job did not finish")
    assert embedders(pulled) == {str(job)}  # one process embedded
    assert status(repo)["pending_vectors"] == 0
    assert len(own_texts(pulled)) == MANY  # each memory once


def test_a_recall_starts_no_job_while_the_hook_sync_embeds(repo: Path, pulled: Path) -> None:
    (pulled / "allow").write_text("1")  # the sync commits one batch, then waits inside the second
    sync = hook_sync(repo, pulled)
    wait_for(lambda: (pulled / "waiting").exists(), "the hook's sync never reached its second batch")
    recall = memgit(repo, "recall", "topic7 service", gate=pulled)
    assert recall.returncode == 0 and "Pulled memory number 7" in recall.stdout
    assert job_pid(repo) == sync.pid  # the sync holds the job's lock
    (pulled / "allow").unlink()
    assert sync.wait(timeout=120) == 0
    wait_for(lambda: job_pid(repo) is None, "a background job still runs")
    assert embedders(pulled) == {str(sync.pid)}  # one process embedded
    assert status(repo)["pending_vectors"] == 0
    assert len(own_texts(pulled)) == MANY


def test_a_failing_job_logs_one_line_and_recall_goes_on(repo: Path, pulled: Path) -> None:
    (pulled / "fail").write_text("")
    # The recall itself must not load the failing embedder: it has no vectors to compare with.
    result = memgit(repo, "recall", "topic7 service", gate=pulled)
    assert result.returncode == 0 and "Pulled memory number 7" in result.stdout
    log = repo / ".git" / "memgit" / "embed.log"
    wait_for(lambda: log.exists() and "failed" in log.read_text(), "the failing job logged nothing")
    wait_for(lambda: job_pid(repo) is None, "the failing job did not exit")
    [line] = log.read_text().splitlines()
    assert "embedding in the background failed" in line and "told to fail" in line
    # For a while no new job is started (it would fail again): the recall says how to catch up.
    again = memgit(repo, "recall", "topic7 service", gate=pulled)
    assert again.returncode == 0 and "run 'memgit reindex'" in again.stderr and "embed.log" in again.stderr
    assert len(log.read_text().splitlines()) == 1


def test_import_embeds_what_it_imported_with_the_real_model(repo: Path, tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    assert memgit(repo, "init", embedder="minilm").returncode == 0
    lines = [json.dumps({"title": f"Imported fact {i}", "body": f"detail number {i} about caching"})
             for i in range(5)]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n")
    result = memgit(repo, "import", str(source), embedder="minilm")
    assert result.returncode == 0, result.stderr
    assert "importing" in result.stderr and "embedding" in result.stderr
    info = json.loads(memgit(repo, "status", "--json", embedder="minilm").stdout)
    assert info["vectors"] == 5 and info["pending_vectors"] == 0
    assert info["embedding_in_background"] == "no"


def test_the_real_model_catches_up_in_the_background(repo: Path) -> None:
    """End to end with MiniLM: the job (started with -I, away from the current folder) loads the
    installed model, and recall then has its vector channel."""
    pytest.importorskip("onnxruntime")
    assert memgit(repo, "init", embedder="minilm").returncode == 0
    assert memgit(repo, "recall", "anything", embedder="minilm").returncode == 0
    store = Store(repo / ".memory")
    for i in range(50):
        store.write(Memory(id=f"m-{i:06x}", title=f"Cache entry rule {i}",
                           body=f"Entries of cache_{i} expire after {i + 1} minutes", path=f"c-{i}.md"))
    result = memgit(repo, "recall", "how long are cached entries kept?", embedder="minilm")
    assert "embedding 50 memories in the background" in result.stderr

    def caught_up() -> bool:
        info = json.loads(memgit(repo, "status", "--json", embedder="minilm").stdout)
        return bool(info["pending_vectors"] == 0)

    wait_for(caught_up, "MiniLM never caught up in the background")
    explained = memgit(repo, "recall", "how long are cached entries kept?", "--explain", embedder="minilm")
    assert "vector" in explained.stdout and "in the background" not in explained.stderr
