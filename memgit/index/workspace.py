"""The workspace: one open memory folder — its repository, settings, store, writer, index
and warning channel — what `Memgit` and every workflow under it (capture, checkpoints,
briefings, reflect) work on.

A CLI call opens a store, makes one call and exits; an MCP server or a hook runner keeps
one `Memgit` open for hours and may call it from several threads. So:

- the configuration is read again when `.memory/config.toml`, the user's own config file or
  the clone's git config changes (a `stat` of each per access: mtime, size and inode), and a
  change to a setting the index was opened with (embedder, warm process, background
  embedding, kinds) closes the index so that the next call opens it anew; inside `held()`
  (one recall) they are looked at once, by the first access;
- the index is opened on first use, once even when threads ask at the same time
  (operations on it are serialised by its `Database`: see `memgit.index.db`);
- `close()` closes the index; the store stays usable and the next call opens it again.

The writer is made on first use and kept (it holds the write lock's timeout).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Callable

from memgit import config as config_mod
from memgit.config import MEMORY_DIR
from memgit.errors import MemgitError
from memgit.git import localstate
from memgit.git import repo as gitrepo
from memgit.git.repo import Repo
from memgit.index.index import Index
from memgit.index.sqlite import FTS_WEIGHTS
from memgit.memory.format import Memory
from memgit.store.folder import Store, refuse_outside
from memgit.store.writer import Writer

Warn = Callable[[str], None]
Stamp = tuple[tuple[int, int, int] | None, ...]


def index_path(memory_dir: Path, repo: Repo | None) -> Path:
    """Where a memory folder's index lives: in the git dir, or the user's cache outside git."""
    if repo is not None:
        base = localstate.folder(repo.git_dir)
        if memory_dir == repo.root / MEMORY_DIR:
            return localstate.index_db(repo.git_dir)
    else:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        base = cache / "memgit"
    digest = hashlib.sha1(os.fsencode(memory_dir)).hexdigest()[:12]
    return base / f"index-{digest}.db"


class Workspace:
    """One open memory folder: see the module docstring."""

    def __init__(self, memory_dir: Path, repo: Repo | None, warn: Warn, *, warm: bool = False,
                 lock_timeout: float | None = None) -> None:
        self.memory_dir = memory_dir
        self.repo = repo
        self.warn = warn
        self.warm = warm
        self.lock_timeout = lock_timeout
        self._config: config_mod.Config | None = None
        self._stamp: Stamp | None = None
        self._index: Index | None = None
        self._writer: Writer | None = None
        self._lock = threading.Lock()
        self._sources: tuple[Any, list[Path]] | None = None  # the settings' files (`_sources_stamp`)
        self._held = threading.local()  # `held()`: this thread's depth, and whether it looked

    # -- settings ------------------------------------------------------------------------

    @contextmanager
    def held(self) -> Iterator[None]:
        """Within the block, on this thread, the settings are looked at once (by the first
        `config`, which reads them again if a file changed) and then taken as they are: one
        recall asks for them several times, a `stat` of four files each."""
        held = self._held
        held.depth = getattr(held, "depth", 0) + 1
        try:
            yield
        finally:
            held.depth -= 1
            if not held.depth:
                held.looked = False

    @property
    def config(self) -> config_mod.Config:
        """The settings, read again when one of their files changes."""
        held = self._held
        if self._config is not None and getattr(held, "looked", False):
            return self._config
        stamp = self._sources_stamp()
        if self._config is None or stamp != self._stamp:
            repo = self.repo
            config = config_mod.load(
                self.memory_dir if self.memory_dir.is_dir() else None,
                root=repo.root if repo is not None else None,
                git=gitrepo.settings(repo.root, "memgit.") if repo is not None else None,
            )
            old, self._config, self._stamp = self._config, config, stamp
            config_mod.warn_ignored(config, self.warn)
            if old is not None and _index_settings(old) != _index_settings(config):
                self.close()  # opened with the old embedder or kinds
        if getattr(held, "depth", 0):
            held.looked = True
        return self._config

    def _sources_stamp(self) -> Stamp:
        home = (os.environ.get("XDG_CONFIG_HOME"), os.environ.get("HOME"))  # where the user's file is
        if self._sources is not None and self._sources[0] == home:
            paths = self._sources[1]
        else:
            paths = [self.memory_dir / config_mod.CONFIG_NAME, config_mod.user_file()]
            if self.repo is not None:
                paths += [self.repo.git_dir / "config", self.repo.git_dir / "config.worktree"]
                common = self.repo.git_dir / "commondir"  # a linked worktree: the main config too
                if common.is_file():
                    paths.append(self.repo.git_dir / common.read_text().strip() / "config")
            self._sources = (home, paths)
        return tuple(_stamp(path) for path in paths)

    # -- the folder of memory files -------------------------------------------------------

    @property
    def store(self) -> Store:
        return self._store_for(self.config)

    def _store_for(self, config: config_mod.Config) -> Store:
        repo = self.repo  # git tells an original from a copy that repeats its id
        return Store(self.memory_dir, config.kinds, partial(gitrepo.first_added, repo) if repo else None,
                     repo.root if repo else None)

    def require_store(self) -> None:
        """Raise, saying what to do, when there is no memory folder to work on."""
        if not self.memory_dir.is_dir():
            if self.repo is not None and self.memory_dir == self.repo.root / config_mod.MEMORY_DIR:
                raise MemgitError(f"no {config_mod.MEMORY_DIR}/ in {self.repo.root}; run 'memgit init' first")
            state = "is not a folder" if self.memory_dir.exists() else "does not exist"
            raise MemgitError(f"memory folder {self.memory_dir} {state}")
        refuse_outside(self.memory_dir, self.repo.root if self.repo is not None else None)

    @property
    def writer(self) -> Writer:
        """Every write goes through it: lock, finish interrupted work, change set, commit."""
        if self._writer is None:
            self._writer = Writer(self.memory_dir, self.repo, lambda: self.store, self.warn,
                                  lock_timeout=self.lock_timeout)
            self._writer.landed = self._take_own_writes
        return self._writer

    def _take_own_writes(self) -> None:
        """An open index takes the files a write just landed, without listing their folder
        again (`memgit.index.changes`): the next command, in this process or another, finds
        the folder as the index left it."""
        index = self._index
        if index is not None and not index.in_memory:
            index.sync(embed="none", rolling=False)

    def load(self) -> list[Memory]:
        """Every memory, parsed from the files; each file skipped is said once."""
        loaded = self.store.load()
        for problem in loaded.skipped if not self.opened else ():  # else the index said it
            self.warn(f"skipping {problem} (see 'memgit lint')")
        return loaded.memories

    def rel_path(self, memory: Memory) -> str:
        """A memory's path relative to the repository root (or to the memory folder)."""
        base = self.repo.root if self.repo is not None else self.memory_dir
        return Path(os.path.relpath(self.memory_dir / memory.path, base)).as_posix()

    def path_prefix(self) -> str:
        """The memory folder relative to the repository root, with a slash ("" for the root)."""
        base = self.repo.root if self.repo is not None else self.memory_dir
        prefix = Path(os.path.relpath(self.memory_dir, base)).as_posix()
        return "" if prefix == "." else prefix + "/"

    # -- the index ----------------------------------------------------------------------

    def index_path(self) -> Path:
        return index_path(self.memory_dir, self.repo)

    @property
    def index(self) -> Index:
        """The index, opened (and migrated) on first use."""
        self.require_store()
        config = self.config  # first: a changed config closes an index opened with the old one
        with self._lock:
            if self._index is None:
                self._index = Index(
                    index_path(self.memory_dir, self.repo),
                    self._store_for(config),
                    config.index_embedder,
                    warn=self.warn,
                    warm=self.warm and config.index_warm,
                    background=config.index_background,  # past the in-call limit: memgit.embedjob
                    keep=not self.warm,  # a short-lived call (a hook, the CLI) only pays for what is kept
                )
            return self._index

    def start(self) -> bool:
        """For a process that will recall many times, as it starts (the MCP server): keep what
        is read from the first search on, and read the keyword channel's postings now, on a
        thread (`memgit.index.resident.Resident.start`); whether they are being read. Nothing
        for an index not built yet (the first recall builds it), one that keeps nothing (a
        hook, the CLI), or one that cannot be read now."""
        if not self.index_path().exists():
            return False
        index = self.index
        resident = index.resident
        if resident is None:
            return False
        try:
            return bool(index.db.guard(lambda: resident.start(index.conn, FTS_WEIGHTS)))
        except index.db.driver.Error:
            return False  # busy or read-only: the postings are read as queries ask for them

    def synced(self) -> Index | None:
        """The index, in step with the files, or None when there is no file-backed one."""
        try:
            index = self.index
            if index.in_memory:
                return None  # it parsed every file already: asking the files costs no more
            index.sync(embed="none")
            return index
        except MemgitError:
            return None

    @property
    def opened(self) -> bool:
        """Whether the index is open (it then already said which files it skips)."""
        return self._index is not None

    def close(self) -> None:
        with self._lock:
            index, self._index = self._index, None
        if index is not None:
            index.close()


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _index_settings(config: config_mod.Config) -> tuple[Any, ...]:
    return config.index_embedder, config.index_warm, config.index_background, config.kinds
