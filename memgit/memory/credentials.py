"""Secret detection in memories: memories are committed and pushed, secrets must not be.

Memories quote code, so the patterns are precise rather than greedy. Four families, each
measured on the labelled corpus in `tests/data/secrets/` (`python benchmarks/secret_gate.py`):

- vendor tokens recognised by shape alone (`vendor_tokens.py`): `ghp_…`, `npm_…`, `SG.….…`;
- values in a place that holds a secret: a URL's password, `mysql -pX`, `curl -u user:X`,
  `sshpass -p X`, `docker login -p X`, `ldapsearch -w X`, an `Authorization:` header, a
  `.netrc` or `.pgpass` line, "the password is X";
- a literal assigned to a secret-sounding name: `password = "…"`, `API_KEY = …` (.env, YAML,
  TOML, INI, code), `--password=…`, `--api-key X`, `docker run -e DB_PASSWORD=…`,
  `?client_secret=…&`, `aws configure set aws_secret_access_key X`;
- the generic rule, last (`secret_words.py`): a random-looking value right after a credential
  word, for the kinds nobody listed: `X-Api-Token: 8fK2…`, `service_token: OW4G…`,
  `<password>vB9…</password>`, "the private key 0x9d28…".

Every field of a memory is scanned (`find_in_memory`), including fields imported from other
tools, and each match names its field; each match carries a fingerprint of the whole secret,
so "the same secret" is decided by value. Pure: standard library only, no I/O.

Decisions worth knowing:

- Placeholders are not secrets: `<your-token>`, `${SECRET}`, `{{ token }}`, `xxxxxxxx`,
  `********`, anything containing `your`, `example`, `placeholder`, `changeme`, `dummy` or
  `redacted`, a token padded with one repeated character (`ghp_XXXX…`), AWS's documented
  `…EXAMPLE` key id and Azurite's published account key.
- An assigned literal counts only if it is 8+ characters, has no spaces (so messages and
  prompts are not flagged; a passphrase with spaces is missed), is not a code reference
  (`getpass()`, `os.environ["X"]`, `settings.SECRET`, `OTHER_ENV_NAME`, `camelCaseName`) and
  looks random: a digit, a symbol, or upper case after the first letter (an all-lowercase
  word such as `"correcthorsebattery"` is missed).
- Unquoted `name = value` is believed only where the value is the whole rest of the line
  (.env, INI, `~/.aws/credentials`, YAML), and `name=value` without spaces where it is a
  word of its own (a shell variable, a flag, a URL query); in code an unquoted value is a
  reference, so one that ends at a comma or a bracket, or is a camelCase name, is not believed.
- Bare hex strings and UUIDs are not flagged on their own (git SHAs, lockfile hashes and
  request ids look the same); they are when assigned to a secret name (`api_key = 3acb…`).
- A PEM header quoted alone, without a key body under it, is documentation, not a key.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from dataclasses import field as _field
from typing import TYPE_CHECKING

from memgit.errors import MemgitError
from memgit.memory import secret_words
from memgit.memory.vendor_tokens import PRIVATE_KEY, TOKENS, is_placeholder

if TYPE_CHECKING:
    from memgit.memory.format import Memory

__all__ = ["SecretMatch", "find_in_memory", "find_secrets", "refuse_secrets"]


@dataclass(frozen=True)
class SecretMatch:
    """A likely secret: what kind, on which line (1-based), a redacted excerpt, and the field.

    `field` is empty for plain text; for a memory it is `title`, `body`, `tags`…, or the name
    of an imported field (`ticket.notes` for a nested one). `fingerprint` stands for the whole
    secret (a hash of it): two matches are the same secret when their fingerprints are equal,
    which excerpts (`AKIA…`) cannot tell.
    """

    pattern: str
    line: int
    excerpt: str
    field: str = ""
    fingerprint: str = _field(default="", repr=False, compare=False)

    @property
    def where(self) -> str:
        """Where to look, for messages: `body, line 3`, `tags`, `title`."""
        if not self.field:
            return f"line {self.line}"
        return f"{self.field}, line {self.line}" if self.line > 1 or self.field == "body" else self.field


# Options are looked for within 200 characters of the command: unbounded, a long line that
# repeats `mysql` would be scanned to its end once per repetition.
_VALUE = r"""(?P<value>'[^'\n]+'|"[^"\n]+"|[^\s'"`]+)"""  # quoted or up to the next space
# (name, pattern with a `value` group, and a `key` group when the key decides, minimum length).
# A place that holds a secret: what follows is believed if it looks like a real value.
_PLACES: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("password in URL", re.compile(r"://[^\s:/@]*:(?P<value>[^\s:/@]+)@"), 4),  # user may be empty: redis://:pw@
    ("password on a command line", re.compile(r"\bmysql\w*\b[^\n]{0,200}?[ \t]-p" + _VALUE), 6),
    ("password on a command line", re.compile(r"\bsshpass[ \t]+-p[ \t]*" + _VALUE), 6),
    (
        "password on a command line",
        re.compile(r"\bdocker[ \t]+login\b[^\n]{0,200}?[ \t](?:-p|--password)(?:[ \t]+|=)" + _VALUE),
        6,
    ),
    (
        "password on a command line",
        re.compile(r"""\bcurl\b[^\n]{0,200}?[ \t](?:-u|--user)(?:[ \t]*|=)['"]?[^\s:'"]+:(?P<value>[^\s'"`@]+)"""),
        6,
    ),
    ("token on a command line", re.compile(r"\bvault[ \t]+login[ \t]+(?:-\S+[ \t]+)*(?:hv[sbr]\.|s\.)?(?P<value>[\w\-]{20,})(?!\S)"), 20),
    ("password on a command line", re.compile(r"\bldap\w*\b[^\n]{0,200}?[ \t]-w[ \t]+" + _VALUE), 6),
    (
        "hard-coded secret",
        re.compile(
            r"\b(?:aws[ \t]+configure|(?:npm|yarn|pnpm)[ \t]+config)[ \t]+set[ \t]+(?:--\S+[ \t]+)*(?P<key>\S+)[ \t]+"
            + _VALUE
        ),
        8,
    ),
    ("password in SQL", re.compile(r"\b(?i:identified[ \t]+by|password)[ \t]+'(?P<value>[^'\n]+)'"), 8),
    ("password in Redis config", re.compile(r"^[ \t]*(?:requirepass|masterauth)[ \t]+" + _VALUE, re.MULTILINE), 8),
    ("token in URL", re.compile(r"://(?P<value>[A-Za-z0-9_\-]{20,})@"), 20),  # https://<token>@github.com
    ("password in .pgpass", re.compile(r"(?<!\S)[A-Za-z*][\w.\-]*:(?:[0-9]{2,5}|\*):[^\s:]+:[^\s:]+:(?P<value>[^\s:]+)"), 6),
    ("password in .netrc", re.compile(r"\bmachine[ \t]+\S+[^\n]{0,200}?[ \t]password[ \t]+(?P<value>\S+)"), 6),
    (
        "credential in an Authorization header",
        re.compile(r"\bAuthorization:[ \t]*(?:Basic|Bearer|Token|SSWS|Digest)[ \t]+(?P<value>[A-Za-z0-9+/=._~\-]{16,})"),
        16,
    ),
    ("hard-coded secret", re.compile(r"--from-literal=(?P<key>[\w.\-]+)=" + _VALUE), 8),
    (
        "password in prose",
        re.compile(
            # "password is X"; "(pw: X)" (`password: X` is YAML, read as an assignment)
            r"(?:\b(?i:password|passphrase|passwd|pwd|pw)(?:[ \t]+(?:for|of)[ \t]+[\w.\-]+)?[ \t]+(?:is|was)[ \t]+"
            r"|\b(?i:pwd|pw):[ \t]*)[`'\"]?(?P<value>[^\s`'\"]+)"
        ),
        8,
    ),
    # "use bearer token X", "ngrok config add-authtoken X": only long values with upper case,
    # lower case and digits, since after these words prose is as likely as a key.
    (
        "token in prose",
        re.compile(r"\b(?i:bearer|token|authtoken|api[ _-]?key)[ \t]+(?:(?:is|was)[ \t]+)?(?P<value>[A-Za-z0-9._~+\-]{20,}=*)"),
        20,
    ),
)
_MIXED_ONLY = frozenset({"token in prose", "token in URL"})
# Zero-width characters render as nothing, so `ghp_\u200b…` still works when pasted; removing
# them (they are never newlines) keeps line numbers right.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_TRAILING = ".,;:)"  # punctuation that ends a sentence, not a password

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
    r"^[ \t]*(?:-[ \t]+)?(?:(?:export|ENV|ARG|set)[ \t]+)?(?P<key>[A-Za-z_][\w.\-]*)(?:[ \t]*=[ \t]*|:[ \t]+)"
    r"""(?P<value>[^\s"'`]*[^\s"'`,;])[ \t]*(?:#.*)?$""",  # `password=pw,` is a keyword argument
    re.MULTILINE,
)
# `key=value` inside a line: `--password=…`, `docker run -e DB_PASSWORD=…`, `PGPASSWORD=… psql`,
# a URL's `?client_secret=…&`, a libpq or JDBC string. Stops at `,` and brackets, which end a
# keyword argument (`connect(password=db_password, …)`) whose value is a reference; a value
# running into a bracket (`KEY=abc[…]`) is not one at all (possessive `++`: no shorter retry).
# Every pattern here starts only where a word starts (the lookbehinds): starting inside
# one, `a-a-a-…` would be rescanned from every letter.
_PARAM = re.compile(r"""(?<![\w.\[\-])-{0,2}(?P<key>[A-Za-z][\w\-]*)=(?P<value>[^\s"'`&;,()<>\[\]{}]++)(?![(<\[\]{}])""")
# `--api-key VALUE`: a flag whose name says secret, and the next word.
_FLAG = re.compile(r"""(?<![\w\-])--?(?P<key>[A-Za-z][\w\-]*)[ \t]+(?P<value>[^\s"'`\-][^\s"'`]*)""")

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# fmt: off
_SECRET_WORDS = frozenset({
    "password", "passwd", "pwd", "passphrase", "secret", "token", "apikey", "auth", "credential",
    "credentials", "pass",  # RABBITMQ_DEFAULT_PASS
})
# A key is secret by what kind of key it is: `DD_APP_KEY`, `license_key`; not `cache_key`.
_SECRET_PAIRS = frozenset({
    ("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"), ("app", "key"),
    ("application", "key"), ("license", "key"), ("account", "key"), ("master", "key"),
    ("signing", "key"), ("encryption", "key"), ("client", "key"), ("service", "key"),
    ("admin", "key"), ("write", "key"),
})
# `token_type`, `password_prompt`, `secret_name`, `token_ttl_seconds`: about a secret, not one.
_NOT_SECRET_SUFFIXES = frozenset({
    "type", "types", "url", "uri", "endpoint", "file", "path", "dir", "name", "names", "id", "ids",
    "env", "var", "field", "header", "prefix", "length", "len", "count", "size", "kind", "format",
    "expiry", "expires", "ttl", "timeout", "label", "hint", "prompt", "message", "msg", "error",
    "help", "text", "description", "regex", "pattern", "policy", "rule", "source", "provider",
    "method", "scheme", "seconds", "secs", "ms", "minutes", "hours", "days", "lifetime", "age",
    "max", "min", "limit", "hash", "hashes", "digest", "salt", "rounds", "algorithm", "alg", "stdin",
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
# A name is made of words; 16+ letters and digits run together with a digit is a key's body.
_LONG_RANDOM = re.compile(r"(?=[A-Za-z0-9]{16})[A-Za-z]*[0-9][A-Za-z0-9]*")
# An unquoted camelCase or PascalCase name is a variable or a class (`password = hashedPassword`,
# `RSAPrivateKeyAlias = RSAPrivateKey`); quoted, it is a value.
_CAMEL = re.compile(r"(?:[a-z]{2,}|[A-Z]{0,5})(?:[A-Z][a-z]{2,})+[0-9]?")


def find_secrets(text: str) -> list[SecretMatch]:
    """The likely secrets in `text`, in the order they appear."""
    text = text.translate(_INVISIBLE)
    found: list[tuple[int, int, str, str, str]] = []  # start, end, pattern, excerpt, secret
    spans: list[tuple[int, int]] = []  # the found spans, sorted; they never overlap

    def taken(start: int, end: int) -> bool:
        # Only the neighbours can overlap: a text with thousands of matches stays fast.
        i = bisect.bisect_left(spans, (start, end))
        return bool(i and spans[i - 1][1] > start) or (i < len(spans) and spans[i][0] < end)

    def add(start: int, end: int, name: str, excerpt: str, secret: str) -> None:
        # Families run most precise first; a later match over the same characters (the
        # assignment around a vendor token, a JWT in an Authorization header) adds nothing.
        if not taken(start, end):
            bisect.insort(spans, (start, end))
            found.append((start, end, name, excerpt, secret))

    for match in PRIVATE_KEY.finditer(text):  # the header holds no secret; the body under it does
        add(match.start(), match.end(), "private key", match.group(), _key_body(text, match.end()))
    for name, pattern in TOKENS:
        for match in pattern.finditer(text):
            secret = match.group()
            if is_placeholder(secret):
                continue
            if name in ("OpenAI API key", "Anthropic API key", "Slack token") and not _looks_random(secret):
                continue  # sk-learn-style slugs, xoxb-your-token
            if secret.startswith("https://"):  # a webhook: its address finds it, its last part is the key
                head, _, last = secret.rpartition("/")
                add(match.start(), match.end(), name, head[:60] + "/" + _redact(last), secret)
                continue
            add(match.start(), match.end(), name, _redact(secret), secret)
    for name, pattern, min_length in _PLACES:
        for match in pattern.finditer(text):
            value = match.group("value").strip("'\"").rstrip(_TRAILING)
            key = match.groupdict().get("key")
            if key is not None:
                if not _is_secret_name(key):
                    continue
                name = f"hard-coded {_key_kind(key)}"
            if name in _MIXED_ONLY and not _is_mixed(value):
                continue  # a Sentry DSN's hex public key before the `@`; "token expiry-window-2024"
            if _is_literal(value, min_length=min_length, bare=True):  # bare: `{self.password}` is code
                prefix = text[match.start() : match.start("value")]
                add(match.start(), match.end(), name, (prefix + _redact(value))[-60:], value)
    for start, end, key, value, bare in _assignments(text):
        if _is_secret_name(key) and _is_literal(value, bare=bare):
            add(start, end, f"hard-coded {_key_kind(key)}", f"{key}={_redact(value)}", value)
    for candidate in secret_words.candidates(text):  # last: the least precise family
        value = candidate.value
        if taken(candidate.start, candidate.end):
            continue
        if _is_literal(value, min_length=10, bare=True) and secret_words.random_enough(
            value, candidate.strength
        ):
            add(candidate.start, candidate.end, "random value after a credential word",
                f"{candidate.name} {_redact(value)}", value)
    found.sort()
    matches, line, counted = [], 1, 0
    for start, _, name, excerpt, secret in found:  # lines counted once through the text
        line += text.count("\n", counted, start)
        counted = start
        matches.append(SecretMatch(name, line, excerpt, fingerprint=_fingerprint(secret)))
    return matches


def _fingerprint(secret: str) -> str:
    """A short hash that stands for the whole secret, and reveals none of it."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:20]


_KEY_END = re.compile(r"-----END [A-Z ]*-----")


def _key_body(text: str, start: int) -> str:
    """A private key's body after its header: up to its END line (or 8k characters), without
    the layout (line breaks, quoting, escaped newlines), so the same key reads the same."""
    end = _KEY_END.search(text, start, start + 8192)
    body = text[start : end.start() if end else start + 8192]
    return re.sub(r"\\n|[^A-Za-z0-9+/=]", "", body)


# The fields of a memory that hold text; `id`, `kind`, `status` and the dates are validated
# shapes that cannot hold a secret.
_MEMORY_FIELDS = ("id", "title", "body", "entity", "source", "task_id", "tags", "files", "symbols", "supersedes")


def find_in_memory(memory: Memory) -> list[SecretMatch]:
    """The likely secrets in every text field of `memory` and every imported field, each
    naming its field (`title`, `body`, `tags`, or the imported field's name)."""
    found: list[SecretMatch] = []
    for name in _MEMORY_FIELDS:
        found.extend(_find_in_value(name, getattr(memory, name), named=False))
    found.extend(_find_in_value("", memory.extra, named=True))
    return found


def _find_in_value(field: str, value: object, *, named: bool) -> Iterator[SecretMatch]:
    """Secrets in a field's value: text, numbers and dates as text, lists item by item,
    mappings key by key (`field.key`). Walked with a stack, not recursion, and each list or
    mapping once: YAML anchors can make a value contain itself."""
    stack: list[tuple[str, str, object]] = [(field, field, value)]  # where, name, value
    seen: set[int] = set()
    while stack:
        where, name, item = stack.pop()
        if item is None:
            continue
        if isinstance(item, (Mapping, list, tuple, set, frozenset)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            if not isinstance(item, Mapping):
                stack.extend((where, name, sub) for sub in reversed(list(item)))
                continue
            for key, sub in reversed(list(item.items())):
                key = str(key)
                in_key = find_secrets(key)
                if in_key:  # a secret as a key: report it, and never repeat it in a field path
                    key = _redact(key)
                    yield from (replace(match, field=where or "a field name") for match in in_key)
                stack.append((f"{where}.{key}" if where else key, key, sub))
            continue
        text = item if isinstance(item, str) else str(item)
        if named and "\n" not in text and '"' not in text:
            # An imported field's name is context a value needs: `db_password: Xk29!aa-Q71z`
            # is a password, `Xk29!aa-Q71z` alone is not recognisable.
            text = f'{name}: "{text}"'
        for match in find_secrets(text):
            yield replace(match, field=where)


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
    for pattern in (_BARE, _PARAM, _FLAG):
        for match in pattern.finditer(text):
            yield match.start(), match.end(), match.group("key"), match.group("value"), True


_GLUED = ("password", "passwd", "secret", "token")  # PGPASSWORD, DBSECRET: a prefix glued on

def _is_secret_name(key: str) -> bool:
    """`password`, `API_KEY`, `authToken`, `aws_secret_access_key`; not `author`, `token_type`."""
    words = [word.lower() for word in _WORDS.findall(key)]
    if not words or words[-1] in _NOT_SECRET_SUFFIXES:
        return False
    if any(word in _SECRET_WORDS or word.endswith(_GLUED) for word in words):
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
    if any(word in lowered for word in _PLACEHOLDER_WORDS) or lowered in _DEFAULTS or is_placeholder(value):
        return False
    if bare and _CAMEL.fullmatch(value):
        return False
    if _REFERENCE.fullmatch(value) and not _LONG_RANDOM.search(value):
        return False  # OTHER_ENV_NAME, settings.SECRET_KEY, access_token; not sbp_fe8647cf9cd0…
    if "://" in value or value.startswith(("/", "./", "~/")):
        return False  # a URL, a path, OTHER_ENV_NAME, settings.SECRET_KEY, access_token
    return _looks_random(value)


def _is_mixed(value: str) -> bool:
    """Upper case, lower case and a digit: how a random base62 key looks, and prose does not."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


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


def refuse_secrets(memory: Memory) -> None:
    """Raise `MemgitError` naming the first likely secret in any field of `memory`."""
    found = find_in_memory(memory)
    if found:
        first = found[0]
        raise MemgitError(
            f"this looks like a secret in {first.where} ({first.pattern}: {first.excerpt}); "
            "memories are pushed to remotes, so it was not saved. Remove it, or use --allow-secret"
        )
