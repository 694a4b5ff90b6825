"""Which installed distribution this `memgit` is, and whether another one shares its name.

memgit is published as `memgit-agent`; its import package and its command are both `memgit`.
Another project publishes a distribution named `memgit` with its own `memgit` package and
command. Installed into one environment, the two write over each other's files, and
whichever was installed last owns the command. Only the standard library is used here, and
only when asked (`memgit --version`, `memgit status`, an error that may come from a clash).
"""

from __future__ import annotations

import base64
import hashlib
import re
import sys
from importlib import metadata
from pathlib import Path

#: memgit's name on the package index.
NAME = "memgit-agent"
#: The import package and the command.
PACKAGE = "memgit"
#: How to install memgit where nothing else can write over it.
ISOLATED = f"`pipx install {NAME}` or `uv tool install {NAME}`"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def version() -> str | None:
    """memgit's installed version, or None when it runs from a source tree that is not installed."""
    try:
        return metadata.version(NAME)
    except metadata.PackageNotFoundError:
        return None


def describe() -> str:
    """`memgit-agent 0.1.0`, the distribution and its version, as `memgit --version` prints it."""
    return f"{NAME} {version() or '(not installed: running from a source tree)'}"


def others() -> list[str]:
    """The installed distributions other than memgit's that provide a top-level `memgit` package
    (by their recorded files) or a `memgit` command (an editable install records no files)."""
    providers = set(metadata.packages_distributions().get(PACKAGE, []))
    for script in metadata.entry_points(group="console_scripts", name=PACKAGE):
        if script.dist is not None:
            providers.add(script.dist.name)
    return sorted(name for name in providers if _canonical(name) != NAME)


def clash() -> str | None:
    """What is wrong when this environment's `memgit` package is not (only) memgit's, or None."""
    found = others()
    if found:
        return (f"another package also installs the `{PACKAGE}` package and command: {', '.join(found)}. "
                f"The two cannot share one environment: each writes over the other's files, and "
                f"uninstalling either removes files the other needs. To keep memgit here, run "
                f"`pip uninstall -y {' '.join(found)} {NAME} && pip install {NAME}`; better, "
                f"install memgit on its own with {ISOLATED}.")
    changed = _changed_file()
    if changed:
        return (f"{changed} is not the file {NAME} installed: another package wrote over it or removed "
                f"it. Reinstall memgit (`pip install --force-reinstall --no-deps {NAME}`), or install it on its "
                f"own with {ISOLATED}.")
    return None


def _changed_file() -> str | None:
    """The path of `memgit/__init__.py` when the one Python imports is not what memgit's wheel
    installed (missing, different content, or another folder first on the path); None when it is,
    or when memgit is an editable install or not installed (its files are then the source tree)."""
    try:
        files = metadata.distribution(NAME).files or []
    except metadata.PackageNotFoundError:
        return None
    entry = next((f for f in files if f.as_posix() == f"{PACKAGE}/__init__.py"), None)
    if entry is None:  # an editable install records a .pth file, not the package's files
        return None
    installed = Path(str(entry.locate())).resolve()
    module = sys.modules.get(PACKAGE)
    imported = getattr(module, "__file__", None)
    if imported is not None and Path(imported).resolve() != installed:
        return str(imported)
    if not installed.is_file():
        return str(installed)
    if entry.hash is not None and entry.hash.mode == "sha256":
        digest = base64.urlsafe_b64encode(hashlib.sha256(installed.read_bytes()).digest()).rstrip(b"=")
        if digest.decode() != entry.hash.value:
            return str(installed)
    return None
