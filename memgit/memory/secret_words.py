"""The generic secret rule: a random-looking value right after a credential word.

Vendors' shapes and known places (`credentials.py`) miss kinds nobody listed: an internal
service's token, another vendor's key, a password on a tool's command line. What they share is
a word that says credential — `key`, `token`, `secret`, `password`, `pass`, `pw`, `auth`,
`credential`, `bearer` (alone, in a name, or glued: `PGPASSWORD`, `authkey`) — and, right
after it, a value no one would type: `X-Api-Token: 8fK2…`, `"service_token": "OW4G…"`,
`<password>vB9…</password>`, `Authorization: ApiKey …`, "the private key 0x9d28…". This
module finds such pairs; `credentials.find_secrets` decides with the rest of its checks
(placeholders, references, paths).

How random is random enough depends on how sure the word is:

- a strong name (`api_token`, `X-Auth-Key`, "private key"): 16+ characters with a digit, or
  with case that changes too often for words (`qOVTEfhSQX…`, not `RSAPrivateKey`), and a
  Shannon entropy of 3.3 bits a character; a password word: 10+ characters and 3.0 bits;
  a hex string (20+) or a UUID only after a strong name, since after `key` alone they are
  ids, hashes and cache keys;
- `key` or `auth` alone: 20+ characters with upper case, lower case and digits.

Never a slug (`claude-sonnet-4-5-20250929`: words and numbers between dashes), mostly
capitalised words (`Ed25519PrivateKey`, a class), a hash with its algorithm (`sha256:…`), an
ARN, an email address, a value followed by `(` or `[` (code), or anything after `public`,
`cache`, `sort`, `primary`, `foreign`, `partition`, `gpg`, `ssh`, or a name about a
credential rather than one (`token_type`, `key_id`, `password_hash`).

Tuned on the corpus only (no false alarm among its look-alikes, none over 62 MB of installed
Python packages); `tests/data/secrets/unseen-*.jsonl` measure it on kinds it has not seen.

Linear in the text: candidate values are found in one pass (at most 256 characters each, no
backtracking), and each looks back at most 64 characters, on its own line, for its name.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Candidate", "candidates", "random_enough", "strength"]

# A value: a run of characters that are not spaces, quotes, brackets or separators, with
# base64's `=` padding. `:` and `=` end it, so `KEY=value` and `pass:value` split into name
# and value. Possessive: a long run is never rescanned from the inside.
_VALUE = re.compile(
    r"""(?<![^\s"'`<>(){}\[\],;:=])[^\s"'`<>(){}\[\],;:=]{10,}+={0,2}(?![^\s"'`<>(){}\[\],;:=])"""
)
_MAX_VALUE = 256
_REACH = 64
# Read backwards from just before the value: an opening quote, the operator (`:`, `=`, `:=`,
# `=>`, `>` of `<password>`) or spaces with an optional "is"/"was", closing quotes and brackets,
# the name, and the word before it ("private key", "WPA2 key").
_NAME_BEFORE_REVERSED = re.compile(
    r"""["'`]?(?:[ \t]*(?:=:|>=|[:=>])[ \t]*|[ \t]+(?:(?:si|saw)[ \t]+)?)["'\]]*"""
    r"""(?P<name>[\w.\-]*[A-Za-z])[-_]*(?![\w.\-])(?:[ \t]+:?(?P<prev>[\w\-]*[A-Za-z])[-_]*(?![\w.\-]))?"""
)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_NEEDLES = (
    "key",
    "token",
    "secret",
    "pass",
    "pw",
    "credential",
    "auth",
    "bearer",
)  # every strong word has one
# fmt: off
_STRONG = frozenset({
    "password", "passwd", "pwd", "passphrase", "pass", "secret", "token", "credential", "credentials",
    "apikey", "authkey", "authtoken", "authorization", "bearer",
})
# Credential words glued to another word: PGPASSWORD, DBSECRET, FIGMATOKEN, authkey.
_GLUED = ("password", "passwd", "secret", "token", "apikey", "authkey")
_PASSWORD = frozenset({"password", "passwd", "pwd", "pw", "passphrase", "pass"})
_NOT_PASS = frozenset({"bypass", "compass", "surpass", "trespass", "overpass", "underpass", "multipass"})
# `key` after one of these is a credential's name (`credentials._SECRET_PAIRS`, and `auth`).
_STRONG_BEFORE_KEY = frozenset({
    "api", "access", "private", "secret", "app", "application", "license", "account", "master",
    "signing", "encryption", "client", "service", "admin", "write", "auth",
})
_NOT_SECRET = frozenset({
    "public", "pub", "cache", "sort", "primary", "foreign", "partition", "idempotency", "object", "row",
    "id", "ids", "hash", "digest", "fingerprint", "type", "name", "url", "uri", "path", "file", "prefix",
    "length", "size", "count", "expiry", "expires", "ttl", "format", "header", "field", "env", "var",
    "hint", "prompt", "label", "policy", "endpoint", "version", "gpg", "pgp", "ssh", "kid", "lookup",
    "map", "dict", "index",
})
# fmt: on
_SLUG = re.compile(r"(?:[a-z]{2,}|[0-9]+)(?:[-_./](?:[a-z]{2,}|[0-9]+))*")
_DOTTED = re.compile(r"(?:[a-z_][a-z0-9_]*\.){2,}\w+")  # rust_openssl.hpke.X25519PrivateKey
_CAPITALISED = re.compile(r"[A-Z][a-z]{2,}")
_VOWEL = re.compile(r"[aeiouy]")
_HEX = re.compile(r"(?:0x)?[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_HASH_PREFIX = re.compile(r"(?i)(?:sha\d*|md5|blake\w*|h1|arn)[:\-]")


@dataclass(frozen=True)
class Candidate:
    """A value (`start`, `end` in the text), the name before it (`prev`: the word before),
    and how sure that name is (`strength`)."""

    start: int
    end: int
    name: str
    prev: str
    value: str
    strength: str


def candidates(text: str) -> Iterator[Candidate]:
    """Every value in `text` that follows a name with a credential word in it."""
    for match in _VALUE.finditer(text):
        value = match.group()
        if len(value) > _MAX_VALUE:
            continue
        if not _plausible(value) or text[match.end() : match.end() + 1] in ("(", "["):
            continue  # a word, not a generated value; a call or an index: code
        start = match.start()
        window = text[max(0, start - _REACH) : start]
        window = window[window.rfind("\n") + 1 :]
        lowered = window.lower()
        if not any(needle in lowered for needle in _NEEDLES):
            continue  # most values: cheaper than reading the name back
        before = _NAME_BEFORE_REVERSED.match(window[::-1])
        if before is None:
            continue
        name = before.group("name")[::-1]
        prev = (before.group("prev") or "")[::-1]
        how_strong = strength(name, prev)
        if how_strong:
            yield Candidate(start - before.end(), match.end(), name, prev, value, how_strong)


def _plausible(value: str) -> bool:
    """A digit, or case that changes often: what `random_enough` needs at least, checked first."""
    return any(c.isdigit() for c in value) or _case_changes(value) * 4 >= len(value)


@functools.lru_cache(maxsize=512)
def strength(name: str, prev: str = "") -> str:
    """`strong`, `password` (strong, a password), `weak` (`key`, `auth` alone) or "" (no
    credential word, or one about a credential rather than one: `token_type`, `public key`)."""
    words = [word.lower() for word in _WORDS.findall(name)]
    before = [word.lower() for word in _WORDS.findall(prev)]
    if not words or words[-1] in _NOT_SECRET or any(word in _NOT_SECRET for word in before[-1:] + words):
        return ""
    if any(_is_password_word(word) for word in words):
        return "password"
    if any(word in _STRONG or word.endswith(_GLUED) for word in words) or "authorization" in before[-1:]:
        return "strong"  # `Authorization: Basic …`: the scheme's name is not the credential word
    if words[-1] in ("key", "keys"):
        return (
            "strong"
            if (before[-1:] + words)[-2:-1] and (before[-1:] + words)[-2] in _STRONG_BEFORE_KEY
            else "weak"
        )
    if words[-1] == "auth":
        return "weak"
    return ""


def _is_password_word(word: str) -> bool:
    """`password`, `pw`, and words ending in one: `PGPASSWORD`, `requirepass`; not `bypass`."""
    return word in _PASSWORD or (word.endswith(("pass", "passwd", "password")) and word not in _NOT_PASS)


def entropy(value: str) -> float:
    """Shannon entropy of the characters of `value`, in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def random_enough(value: str, how_strong: str) -> bool:
    """Whether `value` looks generated rather than written, for a name of that strength."""
    value = value.rstrip(".,;:)!?") if not value.endswith("=") else value
    if _HASH_PREFIX.match(value) or ("@" in value and "." in value.split("@")[-1]):
        return False  # sha256:…, sha512-…, h1:…, arn:aws:…, an email address
    if _DOTTED.fullmatch(value):
        value = value.rsplit(".", 1)[1]  # module.attribute.Name: only the name can be a value
    if _SLUG.fullmatch(value):
        return False  # words and numbers: an identifier, a model name, a version
    letters = sum(c.isalpha() for c in value)
    words = [run for run in _CAPITALISED.findall(value) if _VOWEL.search(run, 1)]
    if letters and sum(map(len, words)) * 10 >= letters * 6:
        return False  # mostly capitalised words: a class (`Ed25519PrivateKey`), a phrase
    if _UUID.fullmatch(value) or _HEX.fullmatch(value):
        digits = value.removeprefix("0x")
        return how_strong != "weak" and (_UUID.fullmatch(value) is not None or len(digits) >= 20)
    upper = any(c.isupper() for c in value)
    lower = any(c.islower() for c in value)
    digit = any(c.isdigit() for c in value)
    if how_strong == "weak":
        return len(value) >= 20 and upper and lower and digit and entropy(value) >= 3.5
    # Without a digit, only case that changes too often for words (`qOVTEfhSQXkFfu`, not
    # `RSAPrivateKeyAlias`).
    mixed = digit and (upper or lower) or _case_changes(value) * 4 >= len(value)
    if how_strong == "password":
        return len(value) >= 10 and mixed and entropy(value) >= 3.0
    return len(value) >= 16 and mixed and entropy(value) >= 3.3


def _case_changes(value: str) -> int:
    """How often upper and lower case letters follow each other."""
    return sum(
        1 for a, b in itertools.pairwise(value) if a.isalpha() and b.isalpha() and a.isupper() != b.isupper()
    )
