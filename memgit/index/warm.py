"""A warm embedder: one small background process that keeps the model loaded between calls.

An agent pays a cold start on every hook call, and loading the model is most of it (about
0.4 s). After a call has loaded the model itself, it starts this server (detached, one per user
and model); later calls send their query over a Unix socket and get its vector back in a few
milliseconds. The server is an optimisation only:

- a call uses it when it is there and answers, and silently does without when it is not
  (connect and reply have short timeouts; any failure means "load the model here");
- it exits by itself after `IDLE_SECONDS` without a request;
- its socket lives in a private folder (`0700`, owned by the user) under the runtime or temp
  directory; a stale socket is replaced;
- `MEMGIT_INDEX_WARM=0` (or `[index] warm = false`) turns it off;
- a server that cannot load its embedder (a plug-in importable from the caller's
  `PYTHONPATH` or current folder but not from the server, which runs with `-I`) writes
  `embed-<hash>.failed` (when, and why) in the socket folder and one line to `warm.log`
  there, and exits; for `FAILURE_SECONDS` after that no call starts it again, and the first
  call to notice says so once on stderr. Without that, every call would start a server
  that dies at once.

Wire format: request = 4-byte big-endian length + UTF-8 text; reply = 4-byte length + the
embedder's id (UTF-8), then 4-byte length + the vector as little-endian float32 (length 0 =
the server could not embed it). The caller checks the id against the one its index's vectors
came from, so a server running an older model is never used.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path

from memgit import launch
from memgit.git import localstate

IDLE_SECONDS = 900.0
CONNECT_TIMEOUT = 0.05
REPLY_TIMEOUT = 2.0
MAX_TEXT_BYTES = 64_000
#: How long a server that could not load its embedder is not started again.
FAILURE_SECONDS = 600.0


def socket_path(embedder_name: str) -> Path:
    """The socket for one embedder, in a folder only this user can enter."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = runtime if runtime and os.path.isdir(runtime) else tempfile.gettempdir()
    folder = Path(base) / f"memgit-{os.getuid()}"
    digest = hashlib.sha1(embedder_name.encode()).hexdigest()[:12]
    return folder / f"embed-{digest}.sock"


def failure_path(embedder_name: str) -> Path:
    return socket_path(embedder_name).with_suffix(".failed")


def log_path(embedder_name: str) -> Path:
    return socket_path(embedder_name).parent / "warm.log"


def _record_failure(embedder_name: str, reason: str) -> None:
    """Remember (and log) that the server for this embedder could not load it."""
    reason = " ".join(reason.split())
    now = time.time()
    marker = failure_path(embedder_name)
    try:
        _write_json(marker, {"time": now, "embedder": embedder_name, "reason": reason, "reported": False})
        localstate.append(log_path(embedder_name),
                          f"{localstate.stamp(now)} warm embedder {embedder_name!r} failed to load: {reason}")
    except OSError:
        pass  # failing to remember only costs another failed start later


def _write_json(path: Path, data: dict[str, object]) -> None:
    localstate.replace(path, json.dumps(data))


def recent_failure(embedder_name: str) -> tuple[bool, str | None]:
    """Whether the server failed to load this embedder less than `FAILURE_SECONDS` ago, and
    the message to show, the first time it is asked (None after that)."""
    marker = failure_path(embedder_name)
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        failed_at = float(data["time"])
    except (OSError, ValueError, KeyError, TypeError):
        return False, None
    if time.time() - failed_at >= FAILURE_SECONDS:
        return False, None
    if data.get("reported"):
        return True, None
    try:
        _write_json(marker, {**data, "reported": True})
    except OSError:
        pass
    minutes = round(FAILURE_SECONDS / 60)
    return True, (f"the warm embedder process could not load {embedder_name!r} ({data.get('reason')}); "
                  f"each call loads the model itself for the next {minutes} minutes "
                  f"(see {log_path(embedder_name)})")


def _private_folder(folder: Path) -> bool:
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        st = folder.stat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and (st.st_mode & 0o077) == 0


def _recv_exact(conn: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = conn.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("closed")
        chunks.extend(chunk)
    return bytes(chunks)


def query_vector(embedder_name: str, text: str, embedder_id: str) -> bytes | None:
    """The query's vector as float32 bytes from a running server of `embedder_id`, or None.

    Never raises and never waits long: no server, a slow one, or another model all give None.
    """
    path = socket_path(embedder_name)
    if not path.exists() or not _private_folder(path.parent):
        return None
    data = text.encode("utf-8", "replace")[:MAX_TEXT_BYTES]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(str(path))
            conn.settimeout(REPLY_TIMEOUT)
            conn.sendall(struct.pack(">I", len(data)) + data)
            (size,) = struct.unpack(">I", _recv_exact(conn, 4))
            served_id = _recv_exact(conn, min(size, 1024)).decode("utf-8", "replace")
            (size,) = struct.unpack(">I", _recv_exact(conn, 4))
            if served_id != embedder_id or size == 0 or size % 4 or size > 65536:
                return None
            return _recv_exact(conn, size)
    except (OSError, ConnectionError, struct.error):
        return None


def spawn(embedder_name: str) -> str | None:
    """Start a server for this embedder in the background, detached; never fails the caller.

    Not after a recent failure to load the embedder; returns the message to show the user
    about that failure, once (else None)."""
    if not _private_folder(socket_path(embedder_name).parent):
        return None
    failed, message = recent_failure(embedder_name)
    if failed:
        return message
    try:
        # -I and a cwd of our own: `-m` would otherwise put the current folder (a repository
        # someone cloned) first on sys.path, and a `numpy.py` there would run.
        subprocess.Popen(
            launch.argv("memgit.warm", embedder_name),
            cwd=socket_path(embedder_name).parent,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass
    return None


def serve(embedder_name: str, idle_seconds: float = IDLE_SECONDS) -> None:
    """Run the server until it has been idle for `idle_seconds`."""
    import fcntl  # POSIX only (flock)

    path = socket_path(embedder_name)
    if not _private_folder(path.parent):
        return
    lock = open(path.with_suffix(".lock"), "a+")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server for this model is starting or running
    from memgit.index.embedders import load_embedder  # only the server process loads the embedder

    try:
        embedder = load_embedder(embedder_name)
    except Exception as exc:  # MemgitError, or a plug-in's own: the server cannot work
        _record_failure(embedder_name, str(exc) or type(exc).__name__)
        return
    if embedder is None:
        return
    failure_path(embedder_name).unlink(missing_ok=True)
    path.unlink(missing_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    os.chmod(path, 0o600)
    server.listen(16)
    server.settimeout(5.0)
    served_id = str(embedder.id).encode()
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle_seconds:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            last = time.monotonic()
            with conn:
                conn.settimeout(REPLY_TIMEOUT)
                try:
                    (size,) = struct.unpack(">I", _recv_exact(conn, 4))
                    text = _recv_exact(conn, min(size, MAX_TEXT_BYTES)).decode("utf-8", "replace")
                    vector = embedder.embed_query(text).astype("<f4").tobytes()
                    conn.sendall(struct.pack(">I", len(served_id)) + served_id + struct.pack(">I", len(vector)) + vector)
                except Exception:  # a bad request must not take the server down
                    try:
                        conn.sendall(struct.pack(">I", len(served_id)) + served_id + struct.pack(">I", 0))
                    except OSError:
                        pass
    finally:
        server.close()
        path.unlink(missing_ok=True)
