"""The shape docs/architecture.md describes: imports run one way, down the layers; no import
circle; each third-party package imported in one module; modules stay small.

Every file of the package is read, sub-packages included, and every import that runs:
`import memgit.x`, `from memgit import x`, `from memgit.x import y`, relative imports, and
imports inside functions (a lazy import still must not go up). Only `if TYPE_CHECKING:`
imports, which never run, are left out."""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

from .conftest import ROOT

PACKAGE = ROOT / "memgit"

#: The layers, lowest first. A unit is a sub-package or a top-level module of `memgit`. A
#: unit imports only itself and units of lower layers; two units of one layer do not import
#: each other, except the adapters (the ways in), which may start one another.
LAYERS: list[set[str]] = [
    {"errors", "distribution"},
    {"launch"},
    {"memory"},
    {"config"},
    {"git"},
    {"store"},
    {"index"},
    {"recall"},
    {"agents", "reflect"},
    {"capture"},
    {"api"},
    {"cli", "mcpserver", "hookrun", "hookjob", "hookwarm", "githooks", "mergedriver", "embedjob", "warm", "__main__", "__init__"},
]
ADAPTERS = LAYERS[-1]
RANK = {unit: number for number, layer in enumerate(LAYERS) for unit in layer}

#: Which module may import each third-party package (numpy: four, the embedder's arrays,
#: the stored vectors and the keyword postings a recalling process keeps, and the code
#: memories' hubness computed when a sync has values to compute).
OWNERS: dict[str, str | tuple[str, ...]] = {
    "click": "memgit.cli",  # the package: every command module
    "git": "",  # gitpython: memgit runs git itself (memgit.git.runner)
    "frontmatter": "memgit.memory.format",
    "yaml": "memgit.memory.format",
    "sqlite_utils": "memgit.index.sqlite",
    "pysqlite3": "memgit.index.sqlite",
    "sqlite3": "memgit.index.sqlite",
    "sqlite_vec": "memgit.index.sqlite",
    "numpy": ("memgit.index.embedders", "memgit.index.resident", "memgit.index.postings", "memgit.index.hubs"),
    "onnxruntime": "memgit.index.embedders",
    "tokenizers": "memgit.index.embedders",
    "rank_bm25": "",
    "merge3": "memgit.git.mergedriver",
    "mcp": "memgit.mcpserver",
    "pydantic": "memgit.mcpserver",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


FILES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under `if TYPE_CHECKING:` (they never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


@functools.cache  # every test reads the same walk: parsed once per module for the run
def imports(module: str) -> tuple[tuple[str, int, bool], ...]:
    """(imported module, line, inside a function) for every import of `module` that runs;
    third-party and standard-library imports by their full dotted name."""
    path = FILES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    local = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
             for n in ast.walk(f) if n is not f}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno, id(node) in local) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            for alias in node.names:
                # `from memgit import api` imports the module memgit.api; `from memgit.x import f` memgit.x
                sub = f"{name}.{alias.name}"
                found.append((sub if sub in FILES else name, node.lineno, id(node) in local))
    return tuple(found)


def memgit_imports(module: str) -> list[tuple[str, int, bool]]:
    return [(name, line, lazy) for name, line, lazy in imports(module) if name.split(".")[0] == "memgit"]


def test_the_walk_sees_every_kind_of_import() -> None:
    assert "memgit.api" in {name for name, _, lazy in memgit_imports("memgit.cli.common") if lazy}
    assert "memgit.index.embedjob" in {name for name, _, _ in memgit_imports("memgit.embedjob")}
    assert "memgit.cli.app" in {name for name, _, _ in memgit_imports("memgit.cli")}
    assert len(FILES) > 70 and "memgit.memory.format" in FILES and "memgit.cli.app" in FILES
    assert set(RANK) >= {unit(module) for module in FILES}, "a unit that no layer holds"


def test_imports_run_down_the_layers() -> None:
    wrong = []
    for module in FILES:
        here = unit(module)
        for name, line, lazy in memgit_imports(module):
            there = unit(name)
            if there == here or name == "memgit" and here == "__init__":
                continue
            if RANK[there] < RANK[here] or (RANK[there] == RANK[here] and here in ADAPTERS):
                continue
            wrong.append(f"{FILES[module].relative_to(ROOT)}:{line} imports {name}"
                         + (" (inside a function)" if lazy else ""))
    assert not wrong, "imports that go up or across the layers:\n" + "\n".join(wrong)


def test_no_import_circle() -> None:
    graph = {module: {name for name, _, _ in memgit_imports(module) if name in FILES and name != module}
             for module in FILES}
    circles = []
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            circles.append(" -> ".join(path[path.index(module):] + [module]))
            return
        if module in done:
            return
        for name in sorted(graph[module]):
            visit(name, path + [module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert not circles, "\n".join(circles)


def test_function_local_imports_say_why() -> None:
    """An import inside a function is there to keep start-up light (`memgit --help`, a cold
    recall, a hook); it says so on its line or the line above."""
    silent = []
    for module, path in FILES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for name, line, lazy in imports(module):
            if lazy and "#" not in lines[line - 1] and not lines[line - 2].strip().startswith("#"):
                silent.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not silent, "function-local imports without a comment:\n" + "\n".join(silent)


def test_each_third_party_package_is_imported_in_one_module() -> None:
    for module in FILES:
        for name, line, _ in imports(module):
            top = name.split(".")[0]
            if top in OWNERS:
                owners = OWNERS[top]
                owners = (owners,) if isinstance(owners, str) else owners
                assert any(owner and (module == owner or module.startswith(owner + ".")) for owner in owners), (
                    f"{FILES[module].relative_to(ROOT)}:{line} imports {top}; only {owners or 'nobody'} may")


def test_only_the_standard_library_besides_the_owners() -> None:
    allowed = set(OWNERS) | {"memgit", "__future__"} | set(sys.stdlib_module_names)
    for module in FILES:
        for name, line, _ in imports(module):
            assert name.split(".")[0] in allowed, f"{FILES[module].relative_to(ROOT)}:{line} imports {name}"


def test_nouns_do_not_import_adapters() -> None:
    for module in FILES:
        if unit(module) in ADAPTERS or unit(module) == "api":
            continue
        for name, line, _ in memgit_imports(module):
            assert unit(name) not in ADAPTERS | {"api"}, f"{FILES[module].relative_to(ROOT)}:{line} imports {name}"


def test_the_top_level_holds_only_the_ways_in_and_the_foundation() -> None:
    top = {path.stem for path in PACKAGE.glob("*.py")}
    assert top == {"__init__", "__main__", "api", "errors", "distribution", "config", "launch"} | (ADAPTERS - {"cli"}), top


def test_modules_stay_small() -> None:
    sizes = {str(path.relative_to(PACKAGE)): len(path.read_text().splitlines()) for path in FILES.values()}
    assert max(sizes.values()) < 650, sizes  # STYLE.md: past ~400 lines a module splits by noun
