"""What changed in the memory folder since the index last looked: cheaply, with no hook.

Measured on this 2-core machine (ext4 on an
overlay, warm cache): `os.scandir` + `stat` costs 33 ms for 10k files and 360 ms for 100k;
`git diff-files` over 100k tracked files takes 230-260 ms, as it stats every file too. So
a full stat of every file cannot meet 50 ms at 100k, and the check works in two parts:

1. Folder mtimes. Creating, deleting or renaming a file changes its folder's mtime, and that
   covers memgit's own writes (atomic `os.replace`), `git checkout`/`pull`/`merge` (git
   unlinks and re-creates files) and editors that save by rename. Only folders whose
   mtime moved are listed and their files stat'ed. In a folder of more than
   `STAT_ALL_MAX` files only new names and names whose inode number changed are stat'ed
   (`os.scandir` gives inode numbers without a `stat`; a file replaced by rename has a
   new inode): ~180 ms for a folder of 100k (60 ms `scandir`, 100 ms reading the `files`
   rows) against ~600 ms with a stat of every file. The price: a file deleted and
   re-created (as `git checkout` does) that gets its old inode number back, which
   happens on ext4, is left to part 2 in such a folder.
2. A rolling stat of indexed files (a cursor kept in the `meta` table) for edits made in
   place, which leave the folder's mtime and the inode alone, paced by the clock: a call
   stats the share of the store that the time since the last rolling stat (any process's;
   `meta` `rolled`) is of `ROLLING_WINDOW_S`, at least `ROLLING_MIN` and at most
   `ROLLING_FILES` files. A store of up to `ROLLING_MIN` files is checked completely on every
   call. So an in-place edit is seen by the first call `ROLLING_WINDOW_S` after it, or within
   ceil(N / ROLLING_FILES) calls (10 at 10k, 100 at 100k), whichever comes first; calls that
   follow each other closely (a server answering an agent, a loop of recalls) no longer stat
   a thousand files each (6-10 ms of a 2k-memory recall here).
   `sync(full=True)` (and `memgit reindex`) checks everything.

memgit's own writes: a folder whose mtime moved only by the writes this process made in it
(`memgit.store.folder.take_own_writes`: its mtime just before the first was the one the
index holds, and each write's "after" is the next one's "before" and the folder's mtime now)
is not listed again; only the files written are stat'ed. At 100k memories in one folder
that listing was most of `remember`'s own time. A file another program creates or deletes
in that folder during memgit's write or in the same clock tick right after it leaves the
folder's mtime where memgit's write put it, so such a folder is held as `own_mtime` and
listed once by the first call that finds it unchanged after that clock tick (`RACY_NS`): a
run of `remember`s lists nothing, and the recall after them lists the folder once (~180 ms
at 100k memories in one folder).

A stat change is confirmed by the content hash before anything is re-parsed. Timestamps
less than `RACY_NS` old (2 s on file systems with whole-second times) are stored as
unknown, so a change made in the same clock tick as a scan is still seen next time (git's
"racy timestamp" rule).

Measured in one folder of generated memories (keywords only, other work on the machine): a
sync with nothing changed takes 4 ms at 10k and 7 ms at 100k (the rolling stat of 1,000
files).

"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memgit.errors import MemgitError
from memgit.memory import format as fmt
from memgit.memory import lenient
from memgit.memory.format import Memory, is_memory_file
from memgit.store.folder import OwnWrite, Store, take_own_writes

if TYPE_CHECKING:
    from memgit.index.db import Database

#: At most this many files stat'ed per call for in-place edits (5-7 ms here).
ROLLING_FILES = 1000
#: At least this many (a store this size is checked in full on every call), ~0.7 ms.
ROLLING_MIN = 100
#: The rolling stat covers the whole store once in this many seconds of calls (see above).
ROLLING_WINDOW_S = 5.0
#: In a changed folder of more files than this, only new inode numbers are stat'ed (see above).
STAT_ALL_MAX = 20_000
#: Timestamps younger than this may still change within the same clock tick: trust them
#: later. Whole-second timestamps (FAT, HFS+, some network file systems) get RACY_COARSE_NS.
RACY_NS = 100_000_000
RACY_COARSE_NS = 2_000_000_000

#: (size, mtime_ns, inode) of a file.
Stat = tuple[int, int, int]


@dataclass
class Scan:
    """Changes seen on disk, before any database write."""

    changed: dict[str, Stat] = field(default_factory=dict)  # rel -> what it is now
    removed: set[str] = field(default_factory=set)
    dirs: dict[str, int] = field(default_factory=dict)  # folder -> mtime_ns (-1: racy; < -1: own_mtime)
    dirs_removed: set[str] = field(default_factory=set)
    cursor: str | None = None  # where the rolling check stopped, when it did not do all
    rolled: float | None = None  # when the rolling check ran (time.time()), when it ran paced
    checked: int = 0  # files stat'ed

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed or self.dirs or self.dirs_removed)


@dataclass
class Parsed:
    """A changed file, read: its memory (read liberally), or why it has none."""

    rel: str
    stat: Stat
    sha: str
    memory: Memory | None
    problems: list[str]


def dir_of(rel: str) -> str:
    return rel.rpartition("/")[0]


def racy(mtime_ns: int, now_ns: int) -> int:
    """`mtime_ns`, or -1 ("check again") when a change in the same clock tick could hide."""
    window = RACY_NS if mtime_ns % 1_000_000_000 else RACY_COARSE_NS
    return -1 if now_ns - mtime_ns < window else mtime_ns


def own_mtime(value: int) -> int:
    """A folder's mtime as the `dirs` table holds it after memgit's own writes alone moved it
    (< -1, "list it once its clock tick is over"), and back: the map is its own inverse."""
    return -2 - value


def _only_own(own: list[OwnWrite], rel_dir: str, known: int, current: int) -> list[str] | None:
    """The files of `rel_dir` this process wrote, when its writes alone moved the folder's
    mtime from `known` (what the index holds; -1, racy, is never trusted) to `current`; else None."""
    chain = [w for w in own if dir_of(w.rel) == rel_dir]
    if not chain or known == -1 or chain[0].before != known or chain[-1].after != current:
        return None
    if any(a.after != b.before for a, b in zip(chain, chain[1:])):
        return None
    return list(dict.fromkeys(w.rel for w in chain))


def stat(path: Path | str) -> Stat | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


class Detector:
    """Compares the memory folder with the `files` and `dirs` tables of an index database.

    It only reads the database; the index applies what it finds.
    """

    def __init__(self, db: Database, store: Store) -> None:
        self.db = db
        self.conn = db.conn
        self.store = store
        self.root = Path(store.root)
        self.rolling = ROLLING_FILES

    def detect(self, full: bool = False, *, rolling: bool = True) -> Scan:
        """What changed; `full` lists every folder and stats every file; without `rolling`,
        no file is stat'ed for in-place edits."""
        now = time.time_ns()
        scan = Scan()
        own = take_own_writes(self.root)
        known_dirs = dict(self.conn.execute("SELECT rel, mtime_ns FROM dirs").fetchall())
        if full or "" not in known_dirs:
            self._scan_dir("", scan, now, {}, stat_all=True)  # every folder, recursively
            for rel_dir in known_dirs:
                if rel_dir not in scan.dirs and rel_dir not in scan.dirs_removed:
                    self._dir_gone(rel_dir, scan)
            return scan
        for rel_dir, stored in sorted(known_dirs.items()):
            if rel_dir in scan.dirs or rel_dir in scan.dirs_removed:
                continue
            try:
                current = os.stat(self.root / rel_dir if rel_dir else self.root).st_mtime_ns
            except OSError:
                self._dir_gone(rel_dir, scan)
                continue
            unlisted = stored < -1  # moved by memgit's own writes since it was last listed
            mtime = own_mtime(stored) if unlisted else stored
            if current == mtime:
                if unlisted and racy(current, now) != -1:
                    # Untouched since memgit's own write, and that write's clock tick is over:
                    # list it once, for a file another program made in that same tick.
                    self._scan_dir(rel_dir, scan, now, known_dirs, stat_all=False)
                continue
            mine = _only_own(own, rel_dir, mtime, current)
            if mine is None:
                self._scan_dir(rel_dir, scan, now, known_dirs, stat_all=False)
                continue
            # Not listed now; the first call that finds it unchanged after the clock tick lists it.
            scan.dirs[rel_dir] = own_mtime(current)
            for rel in mine:
                now_stat = stat(self.root / rel)
                scan.checked += 1
                if now_stat is None:
                    scan.removed.add(rel)
                else:
                    scan.changed[rel] = now_stat
        if rolling:
            self._rolling(scan)
        return scan

    def detect_files(self, memory_ids: list[str]) -> Scan:
        """Only the files of `memory_ids` stat'ed against the index: the hits a recall is about
        to return, which an edit in place the rolling stat has not reached yet may have changed."""
        scan = Scan()
        rows = self.conn.execute(
            f"SELECT rel, size, mtime_ns FROM files WHERE memory_id IN ({', '.join('?' * len(memory_ids))})",
            memory_ids).fetchall() if memory_ids else []
        for rel, size, mtime_ns in rows:
            now_stat = stat(self.root / rel)
            scan.checked += 1
            if now_stat is None:
                scan.removed.add(rel)
            elif now_stat[0] != size or now_stat[1] != mtime_ns:
                scan.changed[rel] = now_stat
        return scan

    def _scan_dir(self, rel_dir: str, scan: Scan, now: int, known_dirs: dict[str, int],
                  stat_all: bool) -> None:
        """List one folder against the index, and its new subfolders recursively."""
        full = self.root / rel_dir if rel_dir else self.root
        try:
            dir_mtime = os.stat(full).st_mtime_ns  # before listing: a later change shows next time
            entries = list(os.scandir(full))
        except (FileNotFoundError, NotADirectoryError):
            self._dir_gone(rel_dir, scan)
            return
        except OSError:
            return
        scan.dirs[rel_dir] = racy(dir_mtime, now)
        stat_all = stat_all or len(entries) <= STAT_ALL_MAX
        known: dict[str, tuple[int, int, int]] = {
            row[0]: (row[1], row[2], row[3]) for row in self.conn.execute(
                "SELECT rel, size, mtime_ns, ino FROM files WHERE dir = ?", (rel_dir,))
        }
        seen: set[str] = set()
        prefix = f"{rel_dir}/" if rel_dir else ""
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            rel = prefix + name
            try:
                if entry.is_dir():  # follows symlinks, like os.walk; those are not descended
                    if not entry.is_symlink() and rel not in known_dirs and rel not in scan.dirs:
                        self._scan_dir(rel, scan, now, known_dirs, stat_all=True)
                    continue
                if not is_memory_file(name):
                    continue
                if entry.is_symlink():
                    continue  # never a memory (see Store.iter_files)
                seen.add(rel)
                before = known.get(rel)
                if (not stat_all and before is not None and before[1] != -1
                        and before[2] == entry.inode()):
                    continue  # same file as before: in-place edits are the rolling check's job
                st = entry.stat()
            except OSError:
                continue
            scan.checked += 1
            now_stat = (st.st_size, st.st_mtime_ns, st.st_ino)
            if before is None or before[:2] != now_stat[:2]:
                scan.changed[rel] = now_stat
        scan.removed.update(rel for rel in known if rel not in seen)

    def _dir_gone(self, rel_dir: str, scan: Scan) -> None:
        scan.dirs_removed.add(rel_dir)
        scan.removed.update(r[0] for r in self.conn.execute("SELECT rel FROM files WHERE dir = ?", (rel_dir,)))

    def _rolling(self, scan: Scan) -> None:
        """Stat the next `self.rolling` indexed files, for edits made in place."""
        n_files = self.conn.execute("SELECT count(*) FROM files").fetchone()[0]
        budget = self.budget(n_files)
        if budget >= n_files:
            rows = self.conn.execute("SELECT rel, size, mtime_ns, dir FROM files").fetchall()
        else:
            rows = self.conn.execute(
                "SELECT rel, size, mtime_ns, dir FROM files WHERE rel > ? ORDER BY rel LIMIT ?",
                (self.db.meta("cursor") or "", budget)).fetchall()
            if len(rows) < budget:  # wrap around
                rows += self.conn.execute(
                    "SELECT rel, size, mtime_ns, dir FROM files ORDER BY rel LIMIT ?",
                    (budget - len(rows),)).fetchall()
            scan.cursor = rows[-1][0] if rows else ""
        if n_files > min(ROLLING_MIN, self.rolling):
            scan.rolled = time.time()
        # The loop runs 1,000 times a recall: `rel` is relative and clean, so no os.path.join
        # (a third of the stat's cost), and no look-ups in `scan` when it holds nothing.
        root = str(self.root) + os.sep
        changed, removed, dirs_removed = scan.changed, scan.removed, scan.dirs_removed
        known = bool(changed or removed or dirs_removed)
        os_stat = os.stat
        checked = 0
        for rel, size, mtime_ns, rel_dir in rows:
            if known and (rel in changed or rel in removed or rel_dir in dirs_removed):
                continue  # known already
            checked += 1
            try:
                st = os_stat(root + rel)
            except OSError:
                removed.add(rel)
                continue
            if st.st_size != size or st.st_mtime_ns != mtime_ns:
                changed[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
        scan.checked += checked

    def budget(self, n_files: int) -> int:
        """How many files this call's rolling stat takes (see the module docstring)."""
        low = min(ROLLING_MIN, self.rolling)
        if n_files <= low:
            return n_files
        try:
            elapsed = time.time() - float(self.db.meta("rolled") or 0.0)
        except ValueError:
            elapsed = ROLLING_WINDOW_S
        if elapsed < 0:  # the clock went back: take the most
            elapsed = ROLLING_WINDOW_S
        paced = -(-n_files * min(elapsed, ROLLING_WINDOW_S) // ROLLING_WINDOW_S)
        return int(max(low, min(self.rolling, paced)))

    def read(self, rel: str, st: Stat, now: int) -> Parsed | None:
        """Read and parse one file (`st` from before the read); None if it vanished."""
        st = (st[0], racy(st[1], now), st[2])
        try:
            with open(self.store.path_of(rel), "rb") as handle:
                data = handle.read(fmt.MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return Parsed(rel, st, "", None, [f"{rel}: cannot read: {exc.strerror}"])
        except MemgitError as exc:
            return Parsed(rel, st, "", None, [str(exc)])
        sha = hashlib.sha1(data).hexdigest()
        memory, problems = lenient.check(data, rel, self.store.kinds)
        return Parsed(rel, st, sha, memory, [str(p) for p in problems])
