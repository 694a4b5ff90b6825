"""A warm hook server: the `user-prompt` and `session-start` hooks answered by a process that
has memgit imported already, so that a hook does not pay for importing it on every prompt.

A hook asks the server over a Unix socket and prints what it answers; without an answer it
does the work itself, as before, and then starts the server for the next hook. The server
(`python -I -m memgit.hookwarm`, detached, one per user and interpreter) only imports; for
each request it forks a child that runs the hook exactly as a hook process would (the
request's environment and folder, fresh caches, the same code), answers, and exits; the
server itself never runs a hook, so nothing it holds can go stale between two. It is an
optimisation only:

- its socket lives in a private folder (`0700`, owned by the user) under the runtime or temp
  directory, the first absolute one there whose path fits in a Unix socket address (108 bytes;
  none: no server);
  the hook uses it only when the folder and the socket are the user's own, and
  the server answers only its own user (the peer's credentials, on Linux);
- connecting has a short timeout, and so has the server's one-byte acknowledgement, which
  the hook waits for before it sends its request (a stopped or wedged server costs a hook
  `ACK_TIMEOUT`, and never runs a request the hook then runs itself); answering has a long
  one; anything else (no server, a stale socket, a server whose code changed on disk since
  it started, which then exits) means "do it here";
- it exits after `IDLE_SECONDS` without a request (`MEMGIT_WARM_IDLE` seconds if set);
- `MEMGIT_HOOKS_WARM=0` turns it off (`MEMGIT_INDEX_WARM=0` too).

Wire format: the server's acknowledgement (one byte, `ACK`), then 4-byte big-endian length +
UTF-8 JSON, each way. Request: `agent`, `event`, `payload`, `cwd`, `here` (the hook's working
folder: the child runs there, so a relative folder in the payload means what it means to the
hook), `env` (the hook's whole environment), `umask` (the hook's: the files the child writes
get the modes the hook's own process would give them). Answer: `{"out": text}`, or `{"stale": true}`
from a server that will not answer.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time
import zlib

# Not `typing`, `pathlib`, `hashlib` or `socket` at start: a hook with a server to ask needs
# little, and each of those costs a good part of a bare Python start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    Handler = Callable[[str, str, dict[str, Any], Path], str]

IDLE_SECONDS = 900.0
CONNECT_TIMEOUT = 0.05
#: The server says it took the connection before the hook sends anything: a server that is
#: alive but not serving (stopped, wedged) costs a hook this long, and never runs its request.
ACK_TIMEOUT = 1.0
ACK = b"\x06"
#: A hook's work takes what it takes (a lock another writer holds, a first sync): the answer
#: is waited for, within the time an agent gives a hook.
REPLY_TIMEOUT = 45.0
MAX_MESSAGE = 8_000_000
EVENTS = ("user-prompt", "session-start")


def turned_off() -> bool:
    return any(os.environ.get(name, "").strip().lower() in ("0", "false", "no", "off")
               for name in ("MEMGIT_HOOKS_WARM", "MEMGIT_INDEX_WARM"))


#: The installed memgit this process runs: a server answers only hooks of the same one.
HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


#: Bytes an AF_UNIX socket's path may hold, its final NUL included (Linux; 104 elsewhere).
SOCKET_PATH_MAX = 108 if sys.platform.startswith("linux") else 104


def _socket_file() -> str | None:
    """The first of the runtime folder, $TMPDIR and /tmp where this user's socket's path fits
    in an AF_UNIX address (a long HOME or TMPDIR must not start a server that cannot bind);
    None when it fits nowhere (no server then). A folder that is not there is passed over, and
    so is a relative one (the XDG rule for the runtime folder): it would mean another place in
    every folder a hook runs in, and make the private folder inside the project."""
    key = f"{sys.executable}\0{HOME}".encode()
    digest = f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}"
    name = os.path.join(f"memgit-{os.getuid()}", f"hooks-{digest}.sock")
    for base in (os.environ.get("XDG_RUNTIME_DIR"), os.environ.get("TMPDIR"), "/tmp"):
        if not base or not os.path.isabs(base) or not os.path.isdir(base):
            continue
        path = os.path.join(base, name)
        if len(os.fsencode(path)) < SOCKET_PATH_MAX:
            return path
    return None


def socket_path() -> Path | None:
    """This user's socket for this interpreter and this installation of memgit (None: no
    path fits, `_socket_file`)."""
    from pathlib import Path  # not on a hook's own path (`ask`)

    path = _socket_file()
    return Path(path) if path is not None else None


def _private(folder: str | Path, create: bool = False) -> bool:
    try:
        if create and not os.path.lexists(folder):
            os.mkdir(folder, 0o700)
        st = os.lstat(folder)
    except OSError:
        return False
    import stat  # only once a folder is there to check

    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and (st.st_mode & 0o077) == 0


def _own_socket(path: str) -> bool:
    import stat  # only once a socket is there to check

    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISSOCK(st.st_mode) and st.st_uid == os.getuid()


def _send(conn: socket.socket, data: dict[str, Any]) -> None:
    body = json.dumps(data, ensure_ascii=False).encode("utf-8", "replace")
    conn.sendall(struct.pack(">I", len(body)) + body)


def _receive(conn: socket.socket) -> Any:
    (size,) = struct.unpack(">I", _exact(conn, 4))
    if size > MAX_MESSAGE:
        raise ConnectionError("message too long")
    return json.loads(_exact(conn, size).decode("utf-8", "replace"))


def _exact(conn: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = conn.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            raise ConnectionError("closed")
        chunks.extend(chunk)
    return bytes(chunks)


def ask(agent: str, event: str, payload: dict[str, Any], cwd: str | Path) -> str | None:
    """The hook's answer from a running server, or None (do it here). Never raises."""
    path = _socket_file()
    if path is None or not _own_socket(path) or not _private(os.path.dirname(path)):
        return None
    import socket  # only with a server to ask: a hook with none (or turned off) does without

    try:
        here = os.getcwd()  # where the hook runs: a relative folder in the payload is from here
        mask = os.umask(0o077)  # the hook's umask, for the files the child writes for it
        os.umask(mask)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(path)
            conn.settimeout(ACK_TIMEOUT)
            if _exact(conn, 1) != ACK:
                return None
            conn.settimeout(REPLY_TIMEOUT)
            _send(conn, {"agent": agent, "event": event, "payload": payload, "cwd": str(cwd),
                         "here": here, "env": dict(os.environ), "home": HOME,
                         "umask": mask})
            answer = _receive(conn)
    except (OSError, ConnectionError, ValueError, struct.error):
        return None
    if not isinstance(answer, dict) or not isinstance(answer.get("out"), str):
        return None
    return str(answer["out"])


def spawn() -> None:
    """Start the server, detached; best effort."""
    from memgit import launch  # only when no server answered

    path = socket_path()
    if path is None or not _private(path.parent, create=True):
        return
    try:
        launch.detach(launch.argv("memgit.hookwarm"))
    except OSError:
        pass


def running() -> int | None:
    """The pid of this user's server for this interpreter, or None when none runs."""
    from memgit import launch  # only when asked (a hook that a server answers never is)

    path = socket_path()
    return launch.holder(path.with_suffix(".lock")) if path is not None else None


def _code_stamp() -> dict[str, tuple[int, int]]:
    """(mtime, size) of every memgit module this process has loaded."""
    out: dict[str, tuple[int, int]] = {}
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if name.startswith("memgit") and where:
            try:
                st = os.stat(where)
            except OSError:
                continue
            out[where] = (st.st_mtime_ns, st.st_size)
    return out


def _unchanged(stamp: dict[str, tuple[int, int]]) -> bool:
    for where, (mtime, size) in stamp.items():
        try:
            st = os.stat(where)
        except OSError:
            return False
        if (st.st_mtime_ns, st.st_size) != (mtime, size):
            return False
    return True


def serve(handle: Handler, idle_seconds: float = IDLE_SECONDS) -> None:
    """Serve hooks until idle for `idle_seconds`, or until memgit's code changes on disk."""
    import fcntl  # POSIX only (flock)
    import socket  # the server's own

    path = socket_path()
    if path is None or not _private(path.parent, create=True):
        return
    lock = open(path.with_suffix(".lock"), "a+")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server is starting or running
    lock.truncate(0)
    lock.write(str(os.getpid()))
    lock.flush()
    stamp = _code_stamp()
    path.unlink(missing_ok=True)
    old = os.umask(0o077)
    try:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
    finally:
        os.umask(old)
    server.listen(16)
    server.settimeout(1.0)
    inode = os.lstat(path).st_ino
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle_seconds:
            _reap()
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            last = time.monotonic()
            if not _same_user(conn):
                conn.close()
                continue
            try:
                conn.sendall(ACK)
            except OSError:  # the hook gave up already: it sent nothing, nothing to run
                conn.close()
                continue
            if not _unchanged(stamp):
                _refuse(conn)
                break
            _fork(conn, server, handle)
    finally:
        server.close()
        try:
            if os.lstat(path).st_ino == inode:
                path.unlink()
        except OSError:
            pass


def _same_user(conn: socket.socket) -> bool:
    import socket  # the server's own

    if not hasattr(socket, "SO_PEERCRED"):
        return True  # the private folder is what keeps others out here
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return False
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


def _refuse(conn: socket.socket) -> None:
    try:
        conn.settimeout(1.0)
        _receive(conn)
        _send(conn, {"stale": True})
    except (OSError, ConnectionError, ValueError, struct.error):
        pass
    conn.close()


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def _fork(conn: socket.socket, server: socket.socket, handle: Handler) -> None:
    try:
        pid = os.fork()
    except OSError:
        conn.close()
        return
    if pid:
        conn.close()
        return
    code = 0
    try:  # the child: one hook, as its own process would run it
        server.close()
        conn.settimeout(REPLY_TIMEOUT)
        request = _receive(conn)
        if request.get("home") != HOME:
            raise ValueError("a hook of another installation of memgit")
        mask = request["umask"]
        if not isinstance(mask, int) or isinstance(mask, bool) or not 0 <= mask <= 0o777:
            raise TypeError("no umask in the request")
        os.umask(mask)  # the hook's own, not the server's: the files it writes get the caller's modes
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})
        from pathlib import Path  # the child's, already imported by the server

        os.chdir(str(request["here"]))  # the hook's own folder (or no answer: the hook does it itself)
        cwd = Path(str(request["cwd"]))
        payload = request["payload"]
        if not isinstance(payload, dict):
            raise TypeError("payload is not a JSON object")
        out = handle(str(request["agent"]), str(request["event"]), payload, cwd)
        _send(conn, {"out": out})
    except BaseException:  # noqa: BLE001 - no answer: the hook does it itself
        code = 1
    finally:
        os._exit(code)
