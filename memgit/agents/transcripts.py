"""Agent session transcripts, read into one list of events whatever agent wrote them, by the
reader of the format a file sniffs as (`READERS`, first match wins; a new format is a module
in `memgit.agents.readers` and a line here).

`read` is capture's: the whole file, streamed, or a MemgitError saying why it is no
transcript (empty, binary, another format, too large). `tail` is a hook's: the last few
megabytes, and None for anything it cannot read. Either way reading is lenient: a malformed
line or an unknown record is skipped and counted, never fatal; a huge tool output is cut to its
start and end. Files are opened only through `memgit.agents.sessionfiles` (regular files only).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from memgit.agents.events import Transcript
from memgit.agents.readers import aider, cctrace, chat, claude, codex, cursor, export, gemini, pi, specstory
from memgit.agents.readers.reader import Head, Lines, Reader, head_of
from memgit.agents.sessionfiles import open_regular, read_tail
from memgit.errors import MemgitError

READERS: tuple[Reader, ...] = (codex, gemini, pi, claude, export, cursor, specstory, cctrace, aider, chat)
MAX_BYTES = 64 * 1024 * 1024  # a year of daily sessions is far below; more is not a transcript
HEAD_BYTES = 8192  # what `read` sniffs at least…
HEAD_LINES = 5  # …and further, until this many whole lines are in it (or the file ends),
HEAD_MAX_BYTES = 4 * 1024 * 1024  # up to this: one JSONL line can be long (Codex's session_meta)
TAIL_BYTES = 8_000_000  # what `tail` reads


def sniff(head: Head) -> Reader | None:
    """The reader of the first format `head` looks like."""
    return next((reader for reader in READERS if reader.sniff(head)), None)


def reader_named(name: str) -> Reader:
    """The reader of the format `name`, or a MemgitError listing the names there are."""
    found = next((reader for reader in READERS if reader.FORMAT == name), None)
    if found is None:
        raise MemgitError(f"unknown transcript format {name!r}: memgit reads "
                          f"{', '.join(reader.FORMAT for reader in READERS)}")
    return found


def read(path: str | Path, format: str | None = None) -> Transcript:
    """The transcript at `path`, in the format its start looks like, or in `format` (a
    reader's name) when one is given; a MemgitError saying why it is not one."""
    forced = reader_named(format) if format else None
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise MemgitError(f"cannot read {path}: {exc.strerror or exc}") from None
    if path.is_dir():
        raise MemgitError(f"{path} is a folder; give a transcript file")
    if not path.is_file():
        raise MemgitError(f"{path} is not a regular file (a device, a FIFO or a socket); "
                          "give a transcript file")
    if size == 0:
        raise MemgitError(f"{path} is empty: no session to capture")
    if size > MAX_BYTES:
        raise MemgitError(f"{path} is {size // 2**20} MB, over the {MAX_BYTES // 2**20} MB a transcript may "
                          "have; nothing was read")
    try:
        with open_regular(path) as handle:
            start = _head_bytes(handle)
    except OSError as exc:
        raise MemgitError(f"cannot read {path}: {exc.strerror or exc}") from None
    if b"\0" in start:
        raise MemgitError(f"{path} is a binary file, not a transcript")
    head = head_of(start.decode("utf-8", "replace").splitlines())
    if head.json and not head.records:
        raise MemgitError(f"{path} is not a transcript: no line of it is complete JSON (was it cut off?)")
    if forced is not None and not forced.sniff(head):
        seen = sniff(head)
        raise MemgitError(f"{path} is not in the {forced.FORMAT} format"
                          + (f" (it looks like {seen.FORMAT}: leave out --format)" if seen else ""))
    reader = forced or sniff(head)
    if reader is None:
        raise MemgitError(f"{path} is not a transcript memgit reads (Claude Code, Codex, Gemini CLI or pi JSONL, "
                          "Cursor, SpecStory, cctrace, Aider, a Markdown or plain-text chat log)")
    transcript = Transcript(str(path), reader.FORMAT)
    with open_regular(path) as handle:
        reader.read(_numbered(handle, transcript), transcript)
    if not transcript.events:
        raise MemgitError(f"{path} holds no messages ({transcript.skipped} lines skipped)")
    return transcript


def _head_bytes(handle: BinaryIO) -> bytes:
    """The start of a file to sniff: `HEAD_BYTES`, and more until it holds `HEAD_LINES` whole
    lines, so a first line of any length (up to `HEAD_MAX_BYTES`) is sniffed whole."""
    data = handle.read(HEAD_BYTES)
    while data.count(b"\n") < HEAD_LINES and len(data) < HEAD_MAX_BYTES:
        more = handle.read(64 * 1024)
        if not more:
            break
        data += more
    return data


def tail(path: str | Path, limit: int = TAIL_BYTES, end: int | None = None) -> Transcript | None:
    """The last `limit` bytes of the transcript at `path` (its first, partial line left out;
    with `end`, of its first `end` bytes), or None when it is missing, no regular file, too
    slow to read or in no format memgit reads. Line numbers count from the first line read."""
    try:
        data = read_tail(path, limit, end=end)  # a regular file only: the path comes from a hook payload
    except OSError:
        return None
    if len(data) >= limit:
        data = data.partition(b"\n")[2]
    lines = data.splitlines()
    head = head_of(line.decode("utf-8", "replace") for line in lines[:200])
    reader = sniff(head)
    if reader is None:
        return None
    transcript = Transcript(str(path), reader.FORMAT)
    reader.read(_numbered(lines, transcript), transcript)
    return transcript


def _numbered(lines: Iterator[bytes] | list[bytes], transcript: Transcript) -> Lines:
    for number, raw in enumerate(lines, 1):
        transcript.lines = number
        yield number, raw
