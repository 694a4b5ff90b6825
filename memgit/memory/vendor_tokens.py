"""The shapes of vendors' credentials: prefixes, lengths and alphabets, one pattern each.

A vendor token is recognised by shape alone, wherever it is (prose, a URL, a config line), so
each shape must be rare outside real credentials: a distinctive prefix (`ghp_`, `npm_`,
`SG.`), an exact length, and no word character on either side. Pure: standard library only.
"""

from __future__ import annotations

import re

__all__ = ["PRIVATE_KEY", "TOKENS", "is_placeholder"]

_EDGE = r"A-Za-z0-9_\-"  # characters a token must not touch on either side


def _token(prefix: str, body: str, edge: str = _EDGE) -> re.Pattern[str]:
    """`prefix` + `body`, not inside a longer word.

    The pattern starts with the literal prefix so the regex engine skips ahead to it (texts
    can be 100k characters and there are dozens of shapes); the lookbehind placed after the
    prefix (`(?<![…].{n})`, n its length) checks the character before it.
    """
    return re.compile(f"{re.escape(prefix)}(?<![{edge}].{{{len(prefix)}}}){body}(?![{edge}])")


def _shape(pattern: str, edge: str = _EDGE) -> re.Pattern[str]:
    """A token without a literal prefix (digits first, hex first): bounded on both sides."""
    return re.compile(f"(?<![{edge}]){pattern}(?![{edge}])")


PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:RSA |EC |OPENSSH |DSA |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----"
    # a key body follows, on the next lines or after an escaped newline (JSON)
    r"(?=(?:[^\n]*\n){0,4}?[ \t>]*[A-Za-z0-9+/]{32,}|\\n[A-Za-z0-9+/]{32,})"
)

# (name, pattern); the name is what the user is told. Lengths follow each vendor's
# documentation or observed tokens; where a vendor has changed formats, both are listed.
TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("AWS access key id", re.compile(r"A(?:KIA|SIA)(?<![A-Za-z0-9].{4})[0-9A-Z]{16}(?![A-Za-z0-9])")),
    ("GitHub token", _token("gh", r"[pousr]_[A-Za-z0-9]{36,}")),
    ("GitHub token", _token("github_pat_", r"[A-Za-z0-9_]{22,}")),
    ("GitLab token", _token("gl", r"(?:pat|rt|dt|ptt|ft|cbt)-[A-Za-z0-9_\-]{20,}")),
    ("Anthropic API key", _token("sk-ant-", r"[A-Za-z0-9_\-]{20,}")),
    ("OpenAI API key", _token("sk-", r"(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("Stripe secret key", _shape(r"[rs]k_live_[A-Za-z0-9]{20,}")),
    ("Stripe webhook secret", _token("whsec_", r"[A-Za-z0-9]{32,}")),
    ("Slack token", _token("xox", r"[abposre]-[A-Za-z0-9\-]{10,}")),
    ("Slack webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{8,}/[A-Z0-9]{8,}/[A-Za-z0-9]{20,}")),
    ("JSON web token", _token("eyJ", r"[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}")),
    ("Google API key", _token("AIza", r"[0-9A-Za-z_\-]{35}")),
    ("Google OAuth client secret", _token("GOCSPX-", r"[A-Za-z0-9_\-]{28}")),
    ("Azure storage account key", _token("AccountKey=", r"[A-Za-z0-9+/]{86}==", edge="A-Za-z0-9")),
    ("Azure SAS signature", re.compile(r"[?&]sig=[A-Za-z0-9%+/]{30,}")),
    ("SendGrid API key", _token("SG.", r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}")),
    ("Twilio API key", _token("SK", r"[0-9a-f]{32}")),
    ("Mailgun API key", _token("key-", r"[0-9a-f]{32}")),
    ("Mailchimp API key", _shape(r"[0-9a-f]{32}-us[0-9]{1,2}")),
    ("npm token", _token("npm_", r"[A-Za-z0-9]{36}")),
    ("PyPI token", _token("pypi-AgE", r"[A-Za-z0-9_\-]{60,}")),
    ("Docker Hub token", _token("dckr_pat_", r"[A-Za-z0-9_\-]{20,}")),
    ("Heroku API key", _token("HRKU-", r"[A-Za-z0-9_\-]{20,}")),
    ("DigitalOcean token", _token("do", r"[opr]_v1_[0-9a-f]{64}")),
    ("Shopify token", _token("shp", r"(?:at|ss|ca|pa)_[0-9a-fA-F]{32}")),
    ("Square token", _token("sq0", r"(?:csp|atp)-[A-Za-z0-9_\-]{22,}")),
    ("Discord bot token", _shape(r"M[TNOQ][A-Za-z0-9_\-]{22,26}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}")),
    ("Discord webhook", re.compile(r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_\-]{60,}")),
    ("Telegram bot token", _shape(r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}")),
    ("Databricks token", _token("dapi", r"[0-9a-f]{32}")),
    ("New Relic key", _token("NR", r"(?:AK|JS|II)-[A-Z0-9]{19,27}")),
    ("New Relic license key", _shape(r"[0-9a-f]{36}NRAL")),
    ("Sentry token", _token("sntry", r"[su]_[A-Za-z0-9+/=_\-]{40,}")),
    ("Vault token", _token("hv", r"[sbr]\.[A-Za-z0-9_\-]{24,}")),
    ("Hugging Face token", _token("hf_", r"[A-Za-z0-9]{34}")),
    ("Atlassian API token", _token("ATATT3", r"[A-Za-z0-9_\-=]{60,}")),
    ("Postman API key", _token("PMAK-", r"[0-9a-f]{24}-[0-9a-f]{34}")),
    ("Linear API key", _token("lin_api_", r"[A-Za-z0-9]{40}")),
    ("Grafana token", _token("gl", r"(?:sa|c)_[A-Za-z0-9_+/=]{32,}")),
    ("Doppler token", _token("dp.", r"(?:st|ct|sa|scim|audit)\.[A-Za-z0-9_.\-]{40,}")),
    ("Terraform Cloud token", _shape(r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{60,}")),
    ("Firebase server key", _token("AAAA", r"[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}")),
    ("Bitbucket app password", _token("ATBB", r"[A-Za-z0-9]{32}")),
    ("Fly.io token", _token("FlyV1 ", r"fm[12][a-z]?_[A-Za-z0-9+/=_,\-]{40,}")),
    ("Asana token", _shape(r"[0-9]/[0-9]{12,19}:[0-9a-f]{32}")),
    ("Supabase token", _token("sbp_", r"[0-9a-f]{40}")),
    ("PlanetScale token", _token("pscale_", r"(?:tkn|pw|oauth)_[A-Za-z0-9_\-]{32,}")),
    ("Netlify token", _token("nfp_", r"[A-Za-z0-9]{36}")),
    ("age secret key", _token("AGE-SECRET-KEY-1", r"[0-9A-Z]{58}")),
)

# Keys that are published on purpose, so every project may quote them: Azurite's (the Azure
# storage emulator's) well-known account key.
_PUBLISHED = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",)
_FILLER = re.compile(r"(.)\1{5,}|x{4}|X{4}|your|example|EXAMPLE|…|\.\.\.")


def is_placeholder(token: str) -> bool:
    """`ghp_XXXX…`, `sk-your-key…`, AWS's `…EXAMPLE` id, Azurite's key: documentation, not secrets.

    Six equal characters in a row almost never occur in a random token (about 1 in 10⁴ for
    64 hex digits), but always in a stub made by holding a key down.
    """
    return bool(_FILLER.search(token)) or any(token.endswith(key) for key in _PUBLISHED)
