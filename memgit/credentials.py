"""Secret detection in memory text: memories are committed and pushed, secrets must not be.

Memories quote code, so the patterns are precise rather than greedy: a token must have its
vendor's exact shape, and a `password = "…"` assignment must hold a literal that looks
like a real value. Pure: standard library only, no I/O.

Decisions worth knowing:

- Placeholders are not secrets: `<your-token>`, `${SECRET}`, `{{ token }}`, `xxxxxxxx`,
  `********`, anything containing `your`, `example`, `placeholder`, `changeme`, `dummy` or
  `redacted`, and AWS's documented `…EXAMPLE` key id.
- An assigned literal counts only if it is 8+ characters, has no spaces (so messages and
  prompts are not flagged; a passphrase with spaces is missed), is not a code reference
  (`getpass()`, `os.environ["X"]`, `settings.SECRET`, `OTHER_ENV_NAME`) and looks random:
  a digit, a symbol, or upper case after the first letter (an all-lowercase word such as
  `"correcthorsebattery"` is missed).
- A PEM header quoted alone, without a key body under it, is documentation, not a key.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["SecretMatch", "find_secrets"]


@dataclass(frozen=True)
class SecretMatch:
    """A likely secret: what kind, on which line (1-based), and a redacted excerpt."""

    pattern: str
    line: int
    excerpt: str


# Vendor tokens: (name, pattern). Each pattern starts with its literal prefix, so the
# regex engine can skip ahead to it; the lookbehind after the prefix (`(?<![…].{n})`, n its
# length) keeps a token from matching inside a longer word, which is what makes these precise.
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private key",
        re.compile(
            r"-----BEGIN (?:RSA |EC |OPENSSH |DSA |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----"
            # a key body follows, on the next lines or after an escaped newline (JSON)
            r"(?=(?:[^\n]*\n){0,4}?[ \t>]*[A-Za-z0-9+/]{32,}|\\n[A-Za-z0-9+/]{32,})"
        ),
    ),
    ("AWS access key id", re.compile(r"A(?:KIA|SIA)(?<![A-Za-z0-9].{4})[0-9A-Z]{16}(?![A-Za-z0-9])")),
    ("GitHub token", re.compile(r"gh[pousr]_(?<![A-Za-z0-9_].{4})[A-Za-z0-9]{36,}(?![A-Za-z0-9])")),
    ("GitHub token", re.compile(r"github_pat_(?<![A-Za-z0-9_].{11})[A-Za-z0-9_]{22,}")),
    ("GitLab token", re.compile(r"glpat-(?<![A-Za-z0-9_\-].{6})[A-Za-z0-9_\-]{20,}")),
    ("Anthropic API key", re.compile(r"sk-ant-(?<![A-Za-z0-9_\-].{7})[A-Za-z0-9_\-]{20,}")),
    (
        "OpenAI API key",
        re.compile(r"sk-(?<![A-Za-z0-9_\-].{3})(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ),
    ("Stripe secret key", re.compile(r"[rs]k_live_(?<![A-Za-z0-9_].{8})[A-Za-z0-9]{20,}")),
    ("Slack token", re.compile(r"xox[abposr]-(?<![A-Za-z0-9_\-].{5})[A-Za-z0-9\-]{10,}")),
    (
        "JSON web token",
        re.compile(
            r"eyJ(?<![A-Za-z0-9_\-].{3})[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"
        ),
    ),
    ("Google API key", re.compile(r"AIza(?<![A-Za-z0-9_\-].{4})[0-9A-Za-z_\-]{35}(?![A-Za-z0-9_\-])")),
    ("password in URL", re.compile(r"://[^\s:/@]+:(?P<value>[^\s:/@]+)@")),
)

# `name = "literal"` in Python, JS, TOML, YAML, JSON, PHP (`=>`) and Go (`:=`). Found from
# the operator and its quoted value (rare), then the name is read back from just before it.
_ASSIGNED = re.compile(
    r"""(?::=|=>|=(?!=)|:)[ \t]*[bBrRuU]{0,2}(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|`(?P<bq>[^`\n]*)`)"""
)
# The name before an operator, read backwards (the window is reversed) so that the match is
# anchored and short: optional type annotation (`password: str =`), closing quotes and
# brackets (`"token":`, `environ["API_KEY"] =`), then the name itself.
_NAME_BEFORE_REVERSED = re.compile(
    r"""[ \t]*(?:[\w.\[\],|]*[A-Za-z_][ \t]*:[ \t]*)?["'\]]*(?P<key>[\w.\-]*[A-Za-z_])(?![\w.\-])"""
)
_NAME_REACH = 100  # characters to look back for the name
_NAME_NEEDLES = ("pass", "pwd", "secret", "token", "auth", "key")  # every secret name has one
# Unquoted values are only believed where they are the whole rest of a line, as in .env
# files, shell exports, Dockerfiles and YAML: in code an unquoted value is a reference.
_BARE = re.compile(
    r"^[ \t]*(?:-[ \t]+)?(?:(?:export|ENV|ARG|set)[ \t]+)?(?P<key>[A-Za-z_][\w.\-]*)(?:=|:[ \t]+)"
    r"""(?P<value>[^\s"'`]*[^\s"'`,;])[ \t]*(?:#.*)?$""",  # `password=pw,` is a keyword argument
    re.MULTILINE,
)
_FLAG = re.compile(r"""-(?<![\w\-]-)-?(?P<key>[A-Za-z][\w\-]*)=(?P<value>[^\s"'`]+)""")

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SECRET_WORDS = frozenset({"password", "passwd", "pwd", "passphrase", "secret", "token", "apikey", "auth"})
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key")})
# `token_type`, `password_prompt`, `secret_name`: about a secret, not one.
# fmt: off
_NOT_SECRET_SUFFIXES = frozenset({
    "type", "types", "url", "uri", "endpoint", "file", "path", "dir", "name", "names", "id", "ids",
    "env", "var", "field", "header", "prefix", "length", "len", "count", "size", "kind", "format",
    "expiry", "expires", "ttl", "timeout", "label", "hint", "prompt", "message", "msg", "error",
    "help", "text", "description", "regex", "pattern", "policy", "rule", "source", "provider",
    "method", "scheme",
})
_PLACEHOLDER_WORDS = (
    "your", "example", "placeholder", "changeme", "change_me", "change-me", "dummy", "redacted", "xxxx",
)
# fmt: on
# Names in message order: `api_token` is a token, `api_key` an API key.
_KINDS = (
    ("password", "password"),
    ("passwd", "password"),
    ("pwd", "password"),
    ("passphrase", "passphrase"),
    ("token", "token"),
    ("api", "API key"),
    ("apikey", "API key"),
    ("secret", "secret"),
)
_DEFAULTS = frozenset({"password", "pass", "passwd", "pwd", "secret", "token"})
_PLACEHOLDER = re.compile(r"<[^>]*>|\$[{(]|^\$\w|\{\{|\{\w*\}|%\(|%s|\*\*\*|\.\.\.|^!")
_AUTH_SCHEME = re.compile(r"^(?:Basic|Bearer|Token|token) +")
_REFERENCE = re.compile(
    r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[a-z0-9]+(?:_[a-z0-9]+)+"
)


def find_secrets(text: str) -> list[SecretMatch]:
    """The likely secrets in `text`, in the order they appear."""
    found: list[tuple[int, int, str, str]] = []  # start, end, pattern, excerpt
    for name, pattern in _TOKENS:
        for match in pattern.finditer(text):
            secret = match.group()
            if name == "private key":
                excerpt = secret  # the header names the kind and holds nothing secret
            elif name == "password in URL":
                value = match.group("value")
                if not _is_literal(value, min_length=4):
                    continue
                excerpt = secret[: match.start("value") - match.start()] + _redact(value)
            else:
                if name == "AWS access key id" and secret.endswith("EXAMPLE"):
                    continue  # the key id of AWS's own documentation
                if name in ("OpenAI API key", "Anthropic API key", "Slack token") and not _looks_random(
                    secret
                ):
                    continue  # sk-learn-style slugs, xoxb-your-token
                excerpt = _redact(secret)
            found.append((match.start(), match.end(), name, excerpt))
    for start, end, key, value, bare in _assignments(text):
        if not (_is_secret_name(key) and _is_literal(value, bare=bare)):
            continue
        if any(s < end and start < e for s, e, _, _ in found):
            continue  # already reported as a vendor token, or the same line twice
        found.append((start, end, f"hard-coded {_key_kind(key)}", f"{key}={_redact(value)}"))
    found.sort()
    return [SecretMatch(name, text.count("\n", 0, start) + 1, excerpt) for start, _, name, excerpt in found]


def _assignments(text: str) -> Iterator[tuple[int, int, str, str, bool]]:
    """Every `name = value` in the text: start, end, name, value, and whether unquoted."""
    for match in _ASSIGNED.finditer(text):
        start = match.start()
        window = text[max(0, start - _NAME_REACH) : start]
        window = window[window.rfind("\n") + 1 :]
        if not any(word in window.lower() for word in _NAME_NEEDLES):
            continue  # most assignments: cheaper than reading the name back
        name = _NAME_BEFORE_REVERSED.match(window[::-1])
        if name:
            key = name.group("key")[::-1]
            value = next(v for v in match.group("dq", "sq", "bq") if v is not None)
            yield start - name.end(), match.end(), key, value, False
    for pattern in (_BARE, _FLAG):
        for match in pattern.finditer(text):
            yield match.start(), match.end(), match.group("key"), match.group("value"), True


def _is_secret_name(key: str) -> bool:
    """`password`, `API_KEY`, `authToken`, `aws_secret_access_key`; not `author`, `token_type`."""
    words = [word.lower() for word in _WORDS.findall(key)]
    if not words or words[-1] in _NOT_SECRET_SUFFIXES:
        return False
    if any(word in _SECRET_WORDS for word in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))


def _key_kind(key: str) -> str:
    """What a secret name holds, for the message: password, token, secret, API key."""
    words = [word.lower() for word in _WORDS.findall(key)]
    return next((kind for word, kind in _KINDS if word in words), "credential")


def _is_literal(value: str, min_length: int = 8, bare: bool = False) -> bool:
    """A value that looks like a real secret rather than a placeholder or a reference."""
    value = _AUTH_SCHEME.sub("", value, count=1)  # "Basic dXNl…": the credential is after it
    if len(value) < min_length or len(set(value)) == 1 or any(char.isspace() for char in value):
        return False
    if _PLACEHOLDER.search(value) or (bare and any(char in value for char in "()[]{}")):
        return False  # <token>, ${SECRET}, {{ t }}, %(pw)s, ****; unquoted getpass(), environ[…]
    lowered = value.lower()
    if any(word in lowered for word in _PLACEHOLDER_WORDS) or lowered in _DEFAULTS:
        return False
    if "://" in value or value.startswith(("/", "./", "~/")) or _REFERENCE.fullmatch(value):
        return False  # a URL, a path, OTHER_ENV_NAME, settings.SECRET_KEY, access_token
    return _looks_random(value)


def _looks_random(value: str) -> bool:
    """A digit, a symbol, or a capital after the first letter: not a plain word."""
    if any(char.isdigit() for char in value):
        return True
    if any(not char.isalnum() and char not in "-_." for char in value):
        return True
    return any(char.isupper() for char in value[1:]) and any(char.islower() for char in value)


def _redact(secret: str) -> str:
    """Enough of the start to find it again, never enough to use it."""
    return secret[: min(4, len(secret) // 4)] + "…"
