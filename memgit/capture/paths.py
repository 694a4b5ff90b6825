"""Paths in a candidate made the repository's own: relative to its root whatever machine or
shell wrote them (POSIX, Windows `C:\\Users\\…`, Git Bash `/c/Users/…`, a session recorded on
another machine), files outside the repository left out, and home folders scrubbed from the
text, so that no memory carries someone's home folder or account name."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace

from memgit.capture.candidate import Candidate

_GIT_BASH = re.compile(r"^/([A-Za-z])(?=/|$)")  # /c/Users/… is C:\Users\…
_DRIVE = re.compile(r"^[A-Za-z]:(?:/|$)")
#: A home folder and the account name in it, wherever a path to it starts.
_HOME = re.compile(r"(?<![\w.~-])(?:[A-Za-z]:|/[A-Za-z](?=[\\/]))?[\\/](?:Users|home)[\\/][^\\/\s'\"`<>|:*?]+",
                   re.IGNORECASE)
_PATH_CHAR = re.compile(r"[\w.-]")
#: Account names too common to be anyone's: left alone in text.
_GENERIC_ACCOUNTS = {"user", "users", "dev", "admin", "root", "runner", "ubuntu", "ec2-user", "vscode", "node",
                     "app", "home", "shared", "public", "default", "guest", "codespace", "gitpod", "me"}


def normal(path: str) -> str:
    """`path` with forward slashes, a Git Bash drive as `c:/`, no `./`, `//` or trailing `/`."""
    path = path.strip().strip("'\"`").replace("\\", "/")
    path = _GIT_BASH.sub(lambda m: m.group(1).lower() + ":", path)
    if _DRIVE.match(path):
        path = path[0].lower() + path[1:]
    path = re.sub(r"/+", "/", path)
    path = re.sub(r"(^|/)\./", r"\1", path)
    return path.rstrip("/") if len(path) > 1 and not path.endswith(":/") else path


def _absolute(path: str) -> bool:
    return path.startswith(("/", "~")) or bool(_DRIVE.match(path))


def _key(path: str) -> str:
    """How two normal paths compare: Windows paths ignore case."""
    return path.casefold() if _DRIVE.match(path) else path


@dataclass
class Place:
    """Where a session's paths belong: this repository's `root`, the session's own working
    folder `cwd` (maybe on another machine) and, read only if needed, the repository's files."""

    root: str = ""
    cwd: str = ""
    files: Callable[[], Collection[str]] = field(default=lambda: ())
    _tracked: Collection[str] | None = field(default=None, init=False, repr=False)
    _above: str = field(default="", init=False, repr=False)  # the project's folder in the cwd

    def __post_init__(self) -> None:
        self.root, self.cwd = normal(self.root), normal(self.cwd)
        self.bases = tuple(b for b in dict.fromkeys((self.root, self.cwd)) if b and _absolute(b) and b != "/")
        # Relative paths in a transcript are relative to its working folder; that folder is
        # inside this repository when the session ran here.
        inside = self._under(self.cwd, self.root) if self.cwd and self.root else None
        self.prefix = inside if inside not in (None, ".") else ""
        self.here = inside is not None or not self.cwd
        # The account names in the folders the session ran in: a name on its own in a text
        # (a prompt, "whoami" output) is scrubbed as well as a path.
        names = {m.group(0).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] for b in self.bases
                 for m in _HOME.finditer(b)}
        self.accounts = sorted(n for n in names if len(n) >= 3 and n.casefold() not in _GENERIC_ACCOUNTS)

    def tracked(self) -> Collection[str]:
        if self._tracked is None:
            self._tracked = set(self.files())
        return self._tracked

    @staticmethod
    def _under(path: str, base: str) -> str | None:
        if _key(path) == _key(base):
            return "."
        if _key(path).startswith(_key(base) + "/"):
            return path[len(base) + 1:]
        return None

    def path(self, path: str) -> str | None:
        """`path` relative to the repository's root, or None when it is outside it."""
        path = normal(path)
        if not path or path == ".":
            return None
        if _absolute(path):
            rel = next((r for r in (self._under(path, b) for b in self.bases) if r is not None), None)
            if rel is None:  # outside: unless the session ran on another machine
                return None if self.here else self._by_suffix(path.split("/")[1:])
            if rel == ".":
                return None
        else:
            rel = path
            if self.prefix:
                rel = os.path.normpath(self.prefix + "/" + rel).replace(os.sep, "/")
        parts = rel.split("/")
        if ".." in parts or rel.startswith("~"):
            return None
        if self.here or not self.tracked() or rel in self.tracked():
            return rel
        # A session recorded on another machine: its working folder may have been a sub-folder
        # of the project, or above it (a home folder); the repository's own files say which,
        # and once a file showed the project's folder, what is not in it is outside.
        found = self._by_suffix(parts)
        if found is not None:
            self._above = self._above or rel[: len(rel) - len(found)]
            return found
        if self._above:
            return rel[len(self._above):] if rel.startswith(self._above) else None
        return rel

    def _by_suffix(self, parts: list[str]) -> str | None:
        """The longest tail of `parts` (two parts at least) that is a file of the repository."""
        tracked = self.tracked()
        for start in range(len(parts) - 1):
            tail = "/".join(parts[start:])
            if tail in tracked:
                return tail
        return None

    def paths(self, paths: Iterable[str]) -> tuple[str, ...]:
        """The repository's own of `paths`, in order, each once (all are seen first: one may
        show where the project's folder is)."""
        paths = list(paths)
        for path in paths:
            self.path(path)
        return tuple(dict.fromkeys(p for p in map(self.path, paths) if p is not None))

    def scrub(self, text: str) -> str:
        """`text` with the repository's own folder written as relative paths, and any other
        home folder as `~`."""
        for base in sorted(self.bases, key=len, reverse=True):
            text = _base_pattern(base).sub(_relative_match, text)
        text = _HOME.sub("~", text)
        for name in self.accounts:
            text = re.sub(rf"(?<![\w./\\-]){re.escape(name)}(?![\w/\\-])", "<user>", text, flags=re.IGNORECASE)
        return text

    def candidate(self, candidate: Candidate) -> Candidate:
        """`candidate` with its files made the repository's own and its text scrubbed."""
        files = self.paths(candidate.files)
        title, body = self.scrub(candidate.title), self.scrub(candidate.body)
        if (files, title, body) == (candidate.files, candidate.title, candidate.body):
            return candidate
        return replace(candidate, title=title, body=body, files=files)


def _base_pattern(base: str) -> re.Pattern[str]:
    """A folder however it is written: either slash, and a drive also as Git Bash's `/c`."""
    parts = base.split("/")
    first = parts[0]
    if _DRIVE.match(base):
        first = f"(?:{re.escape(first)}|/{re.escape(first[0])})"
        flags = re.IGNORECASE
    else:
        first, flags = re.escape(first), re.NOFLAG
    body = r"[\\/]+".join([first, *(re.escape(p) for p in parts[1:])])
    return re.compile(rf"(?<![\w.-]){body}(?P<sep>[\\/]+)?", flags)


def _relative_match(match: re.Match[str]) -> str:
    end, text = match.end(), match.string
    if match.group("sep") and end < len(text) and _PATH_CHAR.match(text[end]):
        return ""  # the folder's own path before a file in it: the file's relative path
    if end < len(text) and _PATH_CHAR.match(text[end]):
        return match.group(0)  # a longer name that only starts like the folder
    return "."
