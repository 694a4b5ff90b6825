"""A release as a user gets it: the sdist and the wheel `python -m build` makes, the wheel
installed into a fresh virtual environment, and the `memgit` command run from there.

Nothing is downloaded: the build runs without isolation (hatchling comes with the `test`
extra), the wheel is installed with `--no-deps --no-index`, and the fresh environment reaches
memgit's dependencies through a `.pth` file naming this interpreter's site-packages. The
environment is built once for the module; the tests after the tour change it in order (another
package's `memgit` installed beside memgit, then uninstalled), as a user's would."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import site
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from memgit import distribution

from .conftest import ROOT, git

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = PYPROJECT["project"]["version"]
WHEEL = f"memgit_agent-{VERSION}-py3-none-any.whl"
SDIST = f"memgit_agent-{VERSION}.tar.gz"


def run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    if check:
        assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel built from it, as the release workflow builds them."""
    pytest.importorskip("build")
    pytest.importorskip("hatchling")
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT)
    assert sorted(p.name for p in out.iterdir()) == sorted([SDIST, WHEEL])
    return out


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the built wheel; the dependencies are this
    interpreter's, reached through a `.pth` file (its own `.pth` files, such as an editable
    install of this checkout, are not read from there). This interpreter's pip installs into it
    (`pip --python`), which saves the fresh environment a pip of its own."""
    if distribution.others():  # the fresh environment sees this one's packages: it would see them too
        pytest.skip(f"this environment also holds {', '.join(distribution.others())}, another `memgit`: "
                    "`pip uninstall -y memgit memgit-agent && pip install -e '.[test]'` cleans it")
    root = tmp_path_factory.mktemp("venv") / "env"
    run(sys.executable, "-m", "venv", "--without-pip", root)
    python = root / "bin" / "python"
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    (Path(purelib) / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    pip(root, "install", "--no-deps", "--no-index", "--no-compile", dist / WHEEL)
    return root


def pip(root: Path, *args: str | Path) -> None:
    """This interpreter's pip, on the environment at `root`, with no configuration (no index)."""
    env = clean_env(PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1")
    run(sys.executable, "-m", "pip", "--python", root / "bin" / "python", "--disable-pip-version-check", "-q",
        *args, env=env)


def clean_env(**extra: str) -> dict[str, str]:
    """The test's isolated environment, without anything that puts this checkout on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    return env | extra


def memgit(root: Path, *args: str, cwd: Path, check: bool = True, embedder: str = "none"
           ) -> subprocess.CompletedProcess[str]:
    return run(root / "bin" / "memgit", *args, cwd=cwd, env=clean_env(MEMGIT_INDEX_EMBEDDER=embedder), check=check)


def test_the_wheel_holds_the_package_its_templates_and_data(dist: Path) -> None:
    names = set(zipfile.ZipFile(dist / WHEEL).namelist())
    package = {p.relative_to(ROOT).as_posix() for p in (ROOT / "memgit").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    templates = {f"memgit/_templates/{p.relative_to(ROOT / 'templates').as_posix()}"
                 for p in (ROOT / "templates").rglob("*") if p.is_file()}
    assert package - names == set() and templates - names == set()
    assert {"memgit/data/tokenizer.json", "memgit/_templates/memory.md", "memgit/py.typed",
            "memgit/_templates/ci/memgit-reflect.yml", "memgit/_templates/ci/memgit-release.yml"} <= names
    assert {n.split("/")[0] for n in names} == {"memgit", f"memgit_agent-{VERSION}.dist-info"}


def test_the_wheels_metadata_names_memgit_agent_and_its_command(dist: Path) -> None:
    wheel = zipfile.ZipFile(dist / WHEEL)
    info = f"memgit_agent-{VERSION}.dist-info"
    meta = Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
    assert (meta["Name"], meta["Version"], meta["Requires-Python"]) == ("memgit-agent", VERSION, ">=3.11")
    assert meta["License-Expression"] == "Apache-2.0" and meta["Description-Content-Type"] == "text/markdown"
    assert meta["Summary"] and meta.get_all("Project-URL") and len(meta.get_all("Classifier") or []) >= 5
    assert "# memgit" in (meta.get_payload() or "")  # the README is the project's page on the index
    assert f"{info}/licenses/LICENSE" in wheel.namelist()
    scripts = wheel.read(f"{info}/entry_points.txt").decode()
    assert "memgit = memgit.cli:main" in scripts and "memgit-hook = memgit.hookrun:console" in scripts


def test_the_sdist_holds_what_builds_the_wheel_and_what_a_packager_reads(dist: Path) -> None:
    with tarfile.open(dist / SDIST) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "memgit/data/tokenizer.json",
            "templates/memory.md", "templates/ci/memgit-release.yml", "tests/conftest.py"} <= names


def test_the_installed_wheel_runs_the_tour(venv: Path, repo: Path) -> None:
    code = "import memgit; print(memgit.__file__); print(memgit.__version__)"
    where, version_attribute = run(venv / "bin" / "python", "-c", code, cwd=repo, env=clean_env()).stdout.split()
    assert Path(where).is_relative_to(venv), "memgit must come from the installed wheel"
    assert version_attribute == VERSION
    version = memgit(venv, "--version", cwd=repo)
    assert (version.stdout, version.stderr) == (f"memgit-agent {VERSION}\n", "")
    assert memgit(venv, "init", cwd=repo).stderr.startswith("Initialised")
    added = memgit(venv, "remember", "deploys go through the release branch, never from a laptop",
                   "--kind", "convention", cwd=repo, embedder="minilm").stdout.strip()
    assert re.fullmatch(r"m-[0-9a-f]{6}", added)
    found = memgit(venv, "recall", "where do deploys go from?", "--explain", cwd=repo, embedder="minilm")
    assert found.stdout.split()[1] == added and " vector 0." in found.stdout
    status = memgit(venv, "status", cwd=repo, embedder="minilm")
    assert f"installed:         memgit-agent {VERSION}\n" in status.stdout and status.stderr == ""
    # The embedder ran from the wheel: its tokenizer.json is package data
    assert "vectors_on:        True\n" in status.stdout and "vectors:           1\n" in status.stdout
    assert git(repo, "log", "-1", "--format=%s").startswith("memory: add")


def _wheel(path: Path, name: str, version: str, files: dict[str, str], scripts: str) -> Path:
    """A minimal wheel of another distribution (a stand-in for another project's)."""
    info = f"{name}-{version}.dist-info"
    files = files | {
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[console_scripts]\n{scripts}\n",
    }
    record = []
    for rel, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(text.encode())}")
    wheel = path / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as out:
        for rel, text in files.items():
            out.writestr(rel, text)
        out.writestr(f"{info}/RECORD", "\n".join(record + [f"{info}/RECORD,,"]) + "\n")
    return wheel


def test_another_packages_memgit_in_the_same_environment_is_explained(venv: Path, repo: Path,
                                                                       tmp_path: Path) -> None:
    """Another distribution named `memgit` ships its own `memgit/__init__.py`, modules and
    `memgit` command. Installed after memgit it writes over memgit's files: `--version` and
    `status` still work and say so, and a command that meets an overwritten module says why."""
    memgit(venv, "init", cwd=repo)
    other = {"memgit/__init__.py": '"""Another project."""\n__version__ = "0.13.0"\n',
             "memgit/tool.py": "def cli() -> None:\n    print('another memgit')\n"}
    pip(venv, "install", "--no-deps", "--no-index", "--no-compile", _wheel(tmp_path, "memgit", "0.13.0", other, "memgit = memgit.cli:cli"))
    version = memgit(venv, "--version", cwd=repo)
    assert version.stdout == f"memgit-agent {VERSION}\n"
    assert "another package also installs the `memgit` package and command: memgit." in version.stderr
    assert "pip uninstall -y memgit memgit-agent && pip install memgit-agent" in version.stderr
    assert distribution.ISOLATED in version.stderr
    status = memgit(venv, "status", cwd=repo)
    assert f"memgit-agent {VERSION}" in status.stdout and "another package also installs" in status.stderr

    # A later version of the other project ships a module memgit has too.
    other["memgit/api.py"] = '"""Another project\'s API."""\n'
    pip(venv, "install", "--no-deps", "--no-index", "--no-compile", _wheel(tmp_path, "memgit", "0.14.0", other, "memgit = memgit.cli:cli"))
    failed = memgit(venv, "recall", "deploys", cwd=repo, check=False)
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.startswith("Error: cannot import name 'open' from 'memgit.api'")
    assert "another package also installs the `memgit` package and command: memgit." in failed.stderr

    # Uninstalling it removes the files the two shared, memgit's command with them.
    pip(venv, "uninstall", "-y", "memgit")
    assert not (venv / "bin" / "memgit").exists()
    module = run(venv / "bin" / "python", "-m", "memgit", "--version", cwd=repo, env=clean_env())
    assert module.stdout == f"memgit-agent {VERSION}\n"
    assert "memgit/__init__.py is not the file memgit-agent installed" in module.stderr
    assert "pip install --force-reinstall --no-deps memgit-agent" in module.stderr


def test_memgit_agent_is_the_name_every_install_line_uses() -> None:
    """Installing `memgit` from the index installs another project: no line may say so."""
    wrong = re.compile(r"(pip|pipx|uv tool|uv pip) install[^\n`\"&;|]*?[\s'\"]memgit(\[[a-z,]+\])?(==[\w.]+)?(?=[\s'\"`]|$)")
    found = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if not path.is_file() or rel.startswith((".git/", ".venv")) or "/data/" in f"/{rel}" or \
                path.suffix not in {".py", ".md", ".toml", ".yml", ".yaml", ""}:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if wrong.search(line) and rel != "tests/test_release.py":
                found.append(f"{rel}:{number}: {line.strip()}")
    assert found == []
    assert wrong.search("pip install 'memgit[mcp]'") and wrong.search("pip install memgit")
    assert not wrong.search("pipx install memgit-agent") and not wrong.search("pip install -e .")


def test_the_ci_template_pins_the_released_version() -> None:
    template = (ROOT / "templates" / "ci" / "memgit-reflect.yml").read_text(encoding="utf-8")
    assert re.findall(r"pip install \"(memgit[^\"]*)\"", template) == [f"memgit-agent=={VERSION}"]
    assert PYPROJECT["project"]["name"] == distribution.NAME


def test_the_changelog_has_an_entry_for_this_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(VERSION)}\b", changelog, flags=re.MULTILINE)
