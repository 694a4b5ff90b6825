"""Hard information in text: file paths, `path::symbol`, code identifiers, versions, flags.

Recall matches anchors exactly (a memory about `src/config.py` should surface whenever a
query names that file), so extraction favours what a person would grep for over English
words. Pure: standard library only, no I/O.

Decisions worth knowing:

- URLs and e-mail addresses are skipped entirely: their hosts and query strings are noise
  for matching code, and a URL's path rarely names a file of this repository.
- Only ASCII-spelled separators count (`/`, `.`, `::`, `-`); backslash paths are not
  recognised. CJK text needs no spaces around an anchor: `修改src/config.py里` works.
- `X.Y` numbers count as versions (`3.11` cannot be told from a decimal); integers never do.
- A two-part slash path of short or common words (`and/or`, `km/h`) is not a path.
"""

from __future__ import annotations

import functools
import re

__all__ = ["extract_anchors", "normalize_anchor", "query_anchors"]

# Scripts written without spaces (CJK, kana, hangul, full-width forms): they count as
# separators so that an anchor glued to them is still cut out cleanly.
_CJK = "\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff"

# A run of characters an anchor can be made of. Deliberately simple (it is the hot loop);
# URLs, e-mail addresses and CJK are dealt with per token, and only for the few tokens
# that are not plain words.
_TOKEN = re.compile(r"[\w./\-:~]+")
_URL_REST = re.compile(r"[^\s<>\"'`)\]]*")
_EMAIL_DOMAIN = re.compile(r"@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}(?::[\w./\-~]*)?")
_SINGLE_COLON = re.compile(r"(?<!:):(?!:)")
_FLAG = re.compile(r"--[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*")
# `[a-z][A-Z]` catches camelCase and CamelCase; `[A-Z]{2}[a-z]{2}` catches HTTPServer
# without catching plurals of acronyms (URLs, APIs, IDs).
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]{2}")
_VERSION = re.compile(
    r"(?:(?P<prefix>[A-Za-z][A-Za-z_]*[A-Za-z_])-?)?"  # python3.11, go1.21, node-18.2
    r"(?P<version>[vV]?\d+(?:\.\d+)+"
    r"(?:[-.]?(?:a|b|c|rc|alpha|beta|pre|dev|post)\.?\d*|-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?)"
)
# "word(s)" is English, not a call.
_PLURAL_PARENS = re.compile(r"\((?:s|es|ies)\)")

# Longer tokens are base64 blobs or minified code, not something anyone would name.
_MAX_TOKEN = 200

# Tables, one item after another rather than one a line.
# fmt: off
_EXTENSIONS = frozenset({
    "py", "pyi", "pyx", "ipynb", "md", "rst", "txt", "toml", "yml", "yaml", "json", "jsonl", "ini",
    "cfg", "conf", "env", "lock", "js", "mjs", "cjs", "ts", "tsx", "jsx", "vue", "svelte", "css",
    "scss", "sass", "less", "html", "htm", "xml", "svg", "rs", "go", "c", "h", "cc", "cpp", "cxx",
    "hpp", "hh", "java", "kt", "kts", "scala", "clj", "cljs", "groovy", "gradle", "swift", "m",
    "mm", "cs", "fs", "rb", "php", "pl", "pm", "lua", "r", "jl", "ex", "exs", "erl", "hrl", "hs",
    "ml", "mli", "elm", "dart", "zig", "nim", "sol", "sh", "bash", "zsh", "fish", "ps1", "bat",
    "cmd", "mk", "cmake", "dockerfile", "tf", "hcl", "nix", "sql", "db", "sqlite", "sqlite3", "csv",
    "tsv", "parquet", "proto", "graphql", "gql", "tex", "bib", "org", "adoc", "patch", "diff",
    "log", "pem", "crt", "key", "cer", "pub", "onnx", "pt", "bin", "whl", "gz", "tgz", "zip", "tar",
})
# Well-known files without an extension.
_FILENAMES = frozenset({
    "makefile", "gnumakefile", "dockerfile", "containerfile", "justfile", "gemfile", "rakefile",
    "procfile", "vagrantfile", "jenkinsfile", "pipfile", "brewfile", "podfile", "codeowners",
})
# Two-part slash pairs that are English, not paths.
_SLASH_WORDS = frozenset({
    "and/or", "either/or", "he/she", "his/her", "him/her", "yes/no", "on/off", "true/false",
    "read/write", "input/output", "client/server", "pros/cons", "before/after", "start/stop",
    "open/close",
})
# fmt: on


@functools.cache
def _cjk_run() -> re.Pattern[str]:
    """Compiled on first use (a CJK token): the class costs milliseconds to compile."""
    return re.compile(f"[{_CJK}]+")


def extract_anchors(*texts: str) -> list[str]:
    """The anchors in `texts`, in order of first appearance, original spelling kept.

    Duplicates (by `normalize_anchor`, so case-insensitively) are dropped. A
    `path::Symbol.method` yields itself, the path, the path's file name, `Symbol.method`,
    `Symbol` and `method`.
    """
    seen: set[str] = set()
    result: list[str] = []
    for text in texts:
        done: set[tuple[str, bool]] = set()  # a repeated token adds nothing new
        skip_to = 0
        for match in _TOKEN.finditer(text):
            token = match.group()
            start, end = match.span()
            is_call = text.startswith("(", end) and not _PLURAL_PARENS.match(text, end)
            # Most of any text is plain words: leave them as fast as possible.
            if (
                token.isalpha()
                and token.isascii()
                and not is_call
                and (token.islower() or token.isupper() or token[1:].islower())
                and token.lower() not in _FILENAMES
            ):
                continue
            if start < skip_to or (token, is_call) in done:
                continue
            if "://" in token:  # a URL: skip it with its query string
                rest = _URL_REST.match(text, end)
                skip_to = rest.end() if rest else end
                continue
            if start >= 2 and text[start - 2].isalnum() and _EMAIL_DOMAIN.match(text, start - 1):
                continue  # the domain of an e-mail address
            email = _EMAIL_DOMAIN.match(text, end) if text.startswith("@", end) else None
            if email:  # first.last@example.com
                skip_to = email.end()
                continue
            done.add((token, is_call))
            if token.isascii():
                anchors = _token_anchors(token, is_call)
            else:
                pieces = _cjk_run().split(token)
                anchors = [
                    a
                    for i, p in enumerate(pieces)
                    for a in _token_anchors(p, is_call and i == len(pieces) - 1)
                ]
            for anchor in anchors:
                key = normalize_anchor(anchor)
                if key and key not in seen:
                    seen.add(key)
                    result.append(anchor)
    return result


def normalize_anchor(anchor: str) -> str:
    """The key anchors are matched by: lower case, without the punctuation prose adds.

    Strips surrounding quotes and backticks, trailing `.,:;!?)`, a trailing `()`, a leading
    `./`, a trailing `/`, and the `v` of a version (`v1.2.3` matches `1.2.3`).
    """
    if anchor.isidentifier():  # the common case, and the hot path of extraction
        return anchor.lower()
    key = anchor.strip().strip("`'\"").lstrip("([{<")
    while True:
        stripped = key.rstrip(".,:;!?)]}>`'\"").removesuffix("(")  # `(` is left of a trailing `()`
        if stripped == key:
            break
        key = stripped
    while key.startswith("./"):
        key = key[2:]
    if len(key) > 1:
        key = key.rstrip("/")
    key = key.lower()
    if key.startswith("v"):
        version = _VERSION.fullmatch(key)
        if version and not version.group("prefix"):
            key = key[1:]
    return key


def query_anchors(query: str) -> list[str]:
    """The normalised anchor keys of a query, in order, without duplicates."""
    return [normalize_anchor(anchor) for anchor in extract_anchors(query)]


def _token_anchors(token: str, is_call: bool) -> list[str]:
    """The anchors in one run of code characters (no spaces inside)."""
    token = token.rstrip(".:-~")
    if not token.startswith("~/"):
        token = token.lstrip(":~")
    if not token or len(token) > _MAX_TOKEN:
        return []
    if token.startswith("--"):
        flag = _FLAG.match(token)
        return [flag.group()] if flag else []
    token = token.lstrip("-")
    if not token:
        return []
    if ":" in token:
        pieces = _SINGLE_COLON.split(token)
        if len(pieces) > 1:  # src/config.py:42, key:value
            found: list[str] = []
            for index, piece in enumerate(pieces):
                found += _token_anchors(piece, is_call and index == len(pieces) - 1)
            return found
        if "::" in token:
            return _qualified_anchors(token)
    if "/" in token:
        if _is_path(token):
            return [token, *_basename(token)]
        return [a for part in token.split("/") for a in _token_anchors(part, False)]
    version = _VERSION.fullmatch(token)
    if version:
        return [token, version.group("version")] if version.group("prefix") else [token]
    if "." in token:
        return _dotted_anchors(token, is_call)
    if "-" in token:  # hyphenated English (well-known) or package names: only code parts
        return [a for part in token.split("-") for a in _token_anchors(part, False)]
    if _is_code_word(token) or _is_filename(token) or (is_call and len(token) >= 3 and token.isidentifier()):
        return [token]
    return []


def _qualified_anchors(token: str) -> list[str]:
    """`path::Symbol.method`, or a qualified name such as `std::vec::Vec`."""
    head, _, symbol = token.partition("::")
    symbol = symbol.strip(":")
    parts = re.split(r"::|\.", symbol)
    if (
        head
        and symbol
        and all(part.isidentifier() for part in parts)
        and (_is_path(head) or _is_filename(head))
    ):
        found = [token, head, *_basename(head), symbol]
        if len(parts) > 1:
            found += [parts[0], parts[-1]]
        return found
    names = [name for name in token.split("::") if name]
    if len(names) > 1 and all(name.isidentifier() for name in names):
        return [token, *(name for name in names if _is_code_word(name))]
    return [a for name in names for a in _token_anchors(name, False)]


def _dotted_anchors(token: str, is_call: bool) -> list[str]:
    """A file name (`config.py`), a dotted name (`os.path.join`) or prose glued by dots."""
    if _is_filename(token):
        return [token]
    parts = token.split(".")
    # All single letters is an abbreviation (e.g., i.e.), not a name.
    if all(part.isidentifier() for part in parts) and any(len(part) > 1 for part in parts):
        found = [token, *(part for part in parts if _is_code_word(part))]
        if is_call and len(parts[-1]) >= 3:
            found.append(parts[-1])
        return found
    return [a for part in parts for a in _token_anchors(part, False)]


def _is_code_word(word: str) -> bool:
    """A single word that is clearly an identifier: snake_case, camelCase, sha256."""
    if not word.isidentifier():
        return False
    if "_" in word:
        core = word.strip("_")
        # `_word_` is Markdown emphasis; `__init__` and `_private` are code.
        emphasis = (
            word.startswith("_") and word.endswith("_") and not word.startswith("__") and "_" not in core
        )
        return bool(core) and not emphasis
    if _CAMEL.search(word):
        return True
    return len(word) >= 3 and not word.isalpha()  # an identifier with a digit: sha256, utf8


def _is_filename(name: str) -> bool:
    """A file name without a directory: a known extension, a dotfile or a Makefile."""
    if name.lower() in _FILENAMES:
        return True
    if name.startswith("."):  # .gitignore, .env, .github
        rest = name[1:]
        return len(rest) >= 2 and not rest.startswith(".") and any(char.isalpha() for char in rest)
    stem, dot, extension = name.rpartition(".")
    return bool(dot and stem.strip(".") and extension.lower() in _EXTENSIONS)


def _is_path(token: str) -> bool:
    """A path with at least one slash: `src/config.py`, `memgit/`, `~/.config`."""
    if not any(char.isalpha() for char in token):
        return False  # 1/2, 12/05/2024
    segments = [s for s in token.split("/") if s not in ("", ".", "..", "~")]
    if not segments or max(len(s) for s in segments) < 2:
        return False  # w/, a/b
    rooted = token.startswith(("/", "./", "../", "~/")) or token.endswith("/")
    if len(segments) == 1:
        return rooted
    short_or_english = max(len(s) for s in segments) <= 2 or token.lower() in _SLASH_WORDS
    return not (len(segments) == 2 and not rooted and short_or_english)  # km/h, I/O, and/or


def _basename(path: str) -> list[str]:
    """The file name of a path, when it names a file (`config.py`, `Makefile`)."""
    base = path.rstrip("/").rpartition("/")[2]
    if base and base != path and ("." in base.strip(".") or _is_filename(base)):
        return [base]
    return []
