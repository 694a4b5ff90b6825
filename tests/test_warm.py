"""The warm embedder process: used when it answers, never needed, never a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memgit.index import warm


def test_no_server_means_none_at_once() -> None:
    """No server: None, without loading a model (or even importing what loads one) to wait for.
    Run in a fresh interpreter, so that what this test process imported does not count."""
    code = ("import json, sys; from memgit.index import warm; "
            "blob = warm.query_vector('minilm', 'anything', 'minilm-l6-int8@1.0.0/128'); "
            "print(json.dumps([blob, sorted(m for m in ('onnxruntime', 'tokenizers', 'numpy', "
            "'memgit.index.embedders') if m in sys.modules)]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          check=True)
    assert json.loads(done.stdout) == [None, []]


def test_stale_socket_file_is_ignored(tmp_path: Path) -> None:
    path = warm.socket_path("minilm")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text("not a socket")
    assert warm.query_vector("minilm", "anything", "x") is None


def test_server_serves_the_same_vectors_and_checks_the_model_id(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    from memgit.index.embedders import load_embedder

    env = {**os.environ, "MEMGIT_WARM_IDLE": "30"}
    server = subprocess.Popen([sys.executable, "-m", "memgit.warm", "minilm"], env=env)
    try:
        embedder = load_embedder("minilm")
        assert embedder is not None
        deadline = time.monotonic() + 60
        blob = None
        while blob is None and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.1)
            blob = warm.query_vector("minilm", "parse_config returns a tuple", embedder.id)
        assert blob is not None, "the warm server never answered"
        served = np.frombuffer(blob, dtype="<f4")
        local = embedder.embed_query("parse_config returns a tuple")
        assert served.shape == (embedder.dim,)
        assert float(np.dot(served, local)) > 0.9999
        # A server of another model (as after an upgrade) is not used.
        assert warm.query_vector("minilm", "parse_config", "some-other-model") is None
        # A second server for the same model exits at once instead of fighting over the socket.
        second = subprocess.run([sys.executable, "-m", "memgit.warm", "minilm"], env=env, timeout=60)
        assert second.returncode == 0
        assert warm.query_vector("minilm", "still there", embedder.id) is not None
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_server_that_cannot_load_its_embedder_is_not_restarted_for_a_while(repo: Path, tmp_path: Path) -> None:
    """The embedder is a plug-in importable by the caller (PYTHONPATH) but not by the server,
    which runs with -I: it fails, remembers it, logs one line, and calls say so once instead
    of starting a server that dies on every call."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "local_plugin.py").write_text("from tests.gated_embedder import GatedEmbedder\n")
    name = "local_plugin:GatedEmbedder"
    env = {**os.environ, "PYTHONPATH": str(plugins), "MEMGIT_INDEX_WARM": "1", "MEMGIT_INDEX_EMBEDDER": name}

    def memgit(*args: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([sys.executable, "-m", "memgit", *args], cwd=repo, env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result

    memgit("init")
    memgit("remember", "parse_config returns a tuple (path, Config)")
    memgit("recall", "parse_config")  # embeds the memory in-call: no server needed yet
    marker, log = warm.failure_path(name), warm.log_path(name)
    first = memgit("recall", "parse_config")  # loads the model here and starts the server
    assert "warm embedder" not in first.stderr
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert time.monotonic() < deadline, "the server never recorded its failure"
        time.sleep(0.1)
    [line] = log.read_text().splitlines()
    assert "failed to load" in line and "No module named 'local_plugin'" in line
    second = memgit("recall", "parse_config")
    assert second.stderr.count("the warm embedder process could not load") == 1
    assert "parse_config returns a tuple" in second.stdout  # the call itself loaded the model
    third = memgit("recall", "parse_config")
    assert "warm embedder" not in third.stderr  # said once
    assert len(log.read_text().splitlines()) == 1  # not started again
