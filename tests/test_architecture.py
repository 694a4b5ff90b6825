"""The shape STYLE.md asks for: each third-party package in one module, imports one way."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from .conftest import ROOT

PACKAGE = ROOT / "memgit"

#: Which module may import each third-party package.
OWNERS = {
    "click": "cli",
    "git": "gitrepo",
    "frontmatter": "memory",
    "yaml": "memory",
    "sqlite_utils": "sqlite",
    "pysqlite3": "sqlite",
    "sqlite3": "sqlite",
    "sqlite_vec": "sqlite",
    "numpy": "embedders",
    "onnxruntime": "embedders",
    "tokenizers": "embedders",
    "rank_bm25": "",
    "merge3": "mergedriver",
    "mcp": "mcpserver",
    "pydantic": "mcpserver",
}
ADAPTERS = {"cli", "api", "__main__", "__init__", "mcpserver", "githooks", "hookrun"}  # hookrun: the agent hooks' adapter


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def modules() -> dict[str, set[str]]:
    return {path.stem: imports(path) for path in sorted(PACKAGE.glob("*.py"))}


def test_each_third_party_package_is_imported_in_one_module() -> None:
    for module, names in modules().items():
        for name in names:
            top = name.split(".")[0]
            if top in OWNERS:
                owner = OWNERS[top]
                # The CLI may be split by command group: cli_hooks.py is part of the CLI.
                assert owner and (module == owner or module.startswith(owner + "_")), (
                    f"memgit/{module}.py imports {top}; only {owner or 'nobody'} may")


def test_nouns_do_not_import_adapters() -> None:
    for module, names in modules().items():
        if module in ADAPTERS or module.startswith("cli_"):
            continue
        for name in names:
            assert name not in ("memgit.cli", "memgit.api"), f"memgit/{module}.py imports {name}"


def test_only_the_standard_library_besides_the_owners() -> None:
    allowed = set(OWNERS) | {"memgit", "__future__"} | set(sys.stdlib_module_names)
    for module, names in modules().items():
        for name in names:
            assert name.split(".")[0] in allowed, f"memgit/{module}.py imports {name}"


def test_modules_stay_small() -> None:
    sizes = {path.name: len(path.read_text().splitlines()) for path in PACKAGE.glob("*.py")}
    assert max(sizes.values()) < 650, sizes  # STYLE.md: past ~400 lines a module splits by noun
