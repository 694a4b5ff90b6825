"""The user's own store: personal memories ("I prefer short answers", "my machine has no
Docker") kept out of every project, in a git repository of their own.

It lives in `$MEMGIT_USER_STORE`, else `$XDG_DATA_HOME/memgit/user` (`~/.local/share/memgit/user`):
a work tree with its `.memory/` and `.git/`, so its index and local state are in
`<store>/.git/memgit/` as any clone's are. Only the user's environment names it: nothing a
project commits can move it. `prepare` makes it on first use: `git init`, `.memory/config.toml`
and a first commit, `memory: init`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memgit.config import CONFIG_NAME, DEFAULT_TOML, MEMORY_DIR
from memgit.errors import MemgitError
from memgit.git import repo as gitrepo
from memgit.git import runner
from memgit.store.folder import Store

ENV = "MEMGIT_USER_STORE"
#: The scopes a memory can live in; `all` (both) is for reading commands only.
SCOPES = ("project", "user")


def location(environ: Mapping[str, str] | None = None) -> Path:
    """Where the user store is (or will be): `$MEMGIT_USER_STORE`, else under `$XDG_DATA_HOME`
    (a relative `$XDG_DATA_HOME` is ignored, as the XDG rules say)."""
    environ = os.environ if environ is None else environ
    named = environ.get(ENV, "").strip()
    if named:  # a relative path is taken from the home folder, not from wherever memgit runs
        home = Path(environ.get("HOME") or Path.home())
        return home / Path(named).expanduser()
    base = environ.get("XDG_DATA_HOME", "")
    if not Path(base).is_absolute():
        base = str(Path(environ.get("HOME") or Path.home()) / ".local" / "share")
    return Path(base) / "memgit" / "user"


def memory_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user store's `.memory/`, symlinks resolved (as git names a work tree)."""
    return (location(environ) / MEMORY_DIR).resolve()


def find() -> gitrepo.Repo | None:
    """The user store's repository, or None while there is none. Raises MemgitError when the
    folder is there but is not a repository of its own (a folder inside another repository
    would put personal memories in that repository's history)."""
    root = location()
    if not (root / MEMORY_DIR).is_dir():
        return None
    return _own(root, gitrepo.find(root))


def require() -> gitrepo.Repo:
    """The user store's repository; raises MemgitError saying how to create it."""
    repo = find()
    if repo is None:
        raise MemgitError(f"no user store at {location()} yet; "
                          "'memgit remember --scope user \"…\"' creates it (set $MEMGIT_USER_STORE to move it)")
    return repo


def prepare() -> Path:
    """The user store's root, made first if needed: a git repository of its own, its
    `.memory/config.toml` committed."""
    root = location()
    if root.exists() and not root.is_dir():
        raise MemgitError(f"the user store {root} is not a folder; move it away or set ${ENV}")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MemgitError(f"cannot create the user store {root} ({exc.strerror or exc}); set ${ENV}") from exc
    root = root.resolve()  # git names the work tree by its real path
    around = gitrepo.find(root)
    # Inside a project's work tree the store's memories would show up in that project (a home
    # folder kept in git is no project: no `.memory/`).
    if around is not None and around.root.resolve() != root and (around.root / MEMORY_DIR).is_dir():
        raise MemgitError(f"the user store {root} would sit inside the project {around.root}, where its "
                          f"memories would show up; set ${ENV} to a folder outside any project")
    if around is not None and _others(around):
        raise MemgitError(f"{root} is a project's repository (it tracks files outside {MEMORY_DIR}/), not a "
                          f"user store: personal memories would be committed to it; set ${ENV} to a folder "
                          "of its own")
    if not (root / ".git").exists():
        done = runner.run(["init", "-q"], root)
        if not done.ok:
            raise MemgitError(f"could not create the user store's repository in {root}: {done.stderr.strip()}")
    repo = _own(root, gitrepo.find(root))
    config = root / MEMORY_DIR / CONFIG_NAME
    if not config.is_file():
        config.parent.mkdir(exist_ok=True)
        Store(config.parent).write_text(CONFIG_NAME, DEFAULT_TOML)
        gitrepo.commit(repo, [config], "memory: init")
    return root


def _others(repo: gitrepo.Repo) -> bool:
    """Whether `repo` tracks anything besides its `.memory/` folder."""
    done = runner.run(["ls-files", "-z"], repo.root)
    paths = done.stdout.split("\0") if done.ok else []
    return any(path and not path.startswith(f"{MEMORY_DIR}/") for path in paths)


def _own(root: Path, repo: gitrepo.Repo | None) -> gitrepo.Repo:
    if repo is None or repo.root.resolve() != root.resolve():
        raise MemgitError(f"the user store {root} is not a git repository of its own; "
                          f"run 'git init' in it, or set ${ENV} to another folder")
    return repo
