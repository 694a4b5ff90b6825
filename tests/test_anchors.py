"""Anchors: the hard information recall matches exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.memory.anchors import extract_anchors, normalize_anchor, query_anchors


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # paths, and the file name of a path that has one
        ("edit src/config.py now", ["src/config.py", "config.py"]),
        ("see memgit/cli.py and docs/format.md.", ["memgit/cli.py", "cli.py", "docs/format.md", "format.md"]),
        (".github/workflows/ci.yml runs pytest", [".github/workflows/ci.yml", "ci.yml"]),
        ("the memgit/ folder", ["memgit/"]),
        ("src/memgit/store", ["src/memgit/store"]),
        ("~/.config/memgit", ["~/.config/memgit"]),
        ("/etc/hosts", ["/etc/hosts"]),
        ("run ./scripts/build.sh", ["./scripts/build.sh", "build.sh"]),
        ("error at src/config.py:42:7", ["src/config.py", "config.py"]),
        ("config.py and README.md", ["config.py", "README.md"]),
        ("Makefile, src/Makefile", ["Makefile", "src/Makefile"]),
        (".gitignore and .env", [".gitignore", ".env"]),
        # path::symbol
        (
            "src/config.py::Loader.load is slow",
            ["src/config.py::Loader.load", "src/config.py", "config.py", "Loader.load", "Loader", "load"],
        ),
        ("memgit/cli.py::main", ["memgit/cli.py::main", "memgit/cli.py", "cli.py", "main"]),
        ("std::vec::Vec", ["std::vec::Vec"]),
        # identifiers that are clearly code
        ("call parse_config with MAX_SIZE", ["parse_config", "MAX_SIZE"]),
        ("ConfigLoader and getUser, HTTPServer", ["ConfigLoader", "getUser", "HTTPServer"]),
        ("__init__ and _private", ["__init__", "_private"]),
        ("sha256 utf8 x86_64", ["sha256", "utf8", "x86_64"]),
        ("os.path.join and pytest.fixture", ["os.path.join", "pytest.fixture"]),
        ("self._cache_dir", ["self._cache_dir", "_cache_dir"]),
        ("@pytest.fixture", ["pytest.fixture"]),
        ("ConfigLoader.load(path)", ["ConfigLoader.load", "ConfigLoader", "load"]),
        ("print(x) and run() then os.path.join(a)", ["print", "run", "os.path.join", "join"]),
        # versions
        ("Python 3.11, v1.2.3 and 2.0.0rc1", ["3.11", "v1.2.3", "2.0.0rc1"]),
        ("python3.11 1.0.0-beta.1", ["python3.11", "3.11", "1.0.0-beta.1"]),
        (">=3.11,<4.0", ["3.11", "4.0"]),
        # flags
        ("use --no-commit or --json=x", ["--no-commit", "--json"]),
        # CJK around anchors, with and without spaces
        ("修改 src/config.py 里的 parse_config", ["src/config.py", "config.py", "parse_config"]),
        ("修改src/config.py里的parse_config。", ["src/config.py", "config.py", "parse_config"]),
        ("调用ConfigLoader，版本3.11", ["ConfigLoader", "3.11"]),
        ("café_name", ["café_name"]),
        # dedup is case-insensitive and by key; the first spelling wins
        ("Parse_Config parse_config PARSE_CONFIG", ["Parse_Config"]),
        ("./src/a.py and src/a.py", ["./src/a.py", "a.py"]),
        ("v1.2 and 1.2", ["v1.2"]),
    ],
)
def test_extract_anchors(text: str, expected: list[str]) -> None:
    assert extract_anchors(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "plain English words only, nothing to see here",
        "The End. Next sentence starts here",
        "numbers alone: 42, 1,000 and 7",
        "e.g. this, i.e. that, etc.",
        "and/or, km/h, w/ the fix, 1/2, 12/05/2024",
        "URLs and APIs and IDs",
        "NASA TODO README",
        "well-known long-term",
        "word(s) and file(s)",
        "https://github.com/owner/some_repo/blob/main/src/x.py?tab_id=3#L10",
        "mail first.last@example.com or me@example.org",
        "_emphasis_ in Markdown",
        "a -- b --- c",
        "",
        "\x00\x01\x02\x1b[31m\x7f",
    ],
)
def test_no_anchors(text: str) -> None:
    assert extract_anchors(text) == []


def test_several_texts_are_one_sequence() -> None:
    assert extract_anchors("parse_config", "PARSE_CONFIG src/a.py") == ["parse_config", "src/a.py", "a.py"]


@pytest.mark.parametrize(
    ("anchor", "key"),
    [
        ("src/Config.py", "src/config.py"),
        ("./src/config.py", "src/config.py"),
        ("parse_config()", "parse_config"),
        ("parse_config(", "parse_config"),
        ("config.py,", "config.py"),
        ("config.py.", "config.py"),
        ("(see config.py)", "see config.py"),
        ("`parse_config`", "parse_config"),
        ("memgit/", "memgit"),
        ("v1.2.3", "1.2.3"),
        ("V2.0", "2.0"),
        ("python3.11", "python3.11"),
        ("validate", "validate"),
        ("path::Symbol.method;", "path::symbol.method"),
        ("", ""),
    ],
)
def test_normalize_anchor(anchor: str, key: str) -> None:
    assert normalize_anchor(anchor) == key


def test_query_anchors_are_keys() -> None:
    query = "Why does ./src/config.py::Loader.load() fail on V3.11 with ParseError?"
    assert query_anchors(query) == [
        "src/config.py::loader.load",
        "src/config.py",
        "config.py",
        "loader.load",
        "loader",
        "load",
        "3.11",
        "parseerror",
    ]


def test_memory_and_query_meet_on_keys() -> None:
    memory = "Fixed `Src/Config.py` (see parse_config()), pinned v2.0.0."
    keys = {normalize_anchor(a) for a in extract_anchors(memory)}
    assert set(query_anchors("parse_config in src/config.py since 2.0.0")) <= keys


def test_long_input() -> None:
    text = ("修改 src/config.py 里的 parse_config; see https://x.org/a_b " * 2000) + "tail_anchor"
    assert len(text) > 100_000
    assert extract_anchors(text) == ["src/config.py", "config.py", "parse_config", "tail_anchor"]


def test_giant_token_is_not_an_anchor() -> None:
    assert extract_anchors("a/" * 5000 + "b.py") == []


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_crashes(text: str) -> None:
    anchors = extract_anchors(text)
    keys = [normalize_anchor(a) for a in anchors]
    assert all(keys) and len(set(keys)) == len(keys)
    assert query_anchors(text) == keys


code_ish = st.text(alphabet="aZ_09./-:~()@ 修\n", max_size=200)


@settings(max_examples=300, deadline=None)
@given(code_ish)
def test_never_crashes_on_code_like_text(text: str) -> None:
    for anchor in extract_anchors(text):
        assert anchor and anchor in text


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_large_inputs(chunk: str) -> None:
    text = (chunk * (100_000 // len(chunk) + 1))[:100_000]
    extract_anchors(text)
