"""Secret detection: precise, because memories quote code."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.memory.credentials import SecretMatch, find_secrets

# Built from pieces so that this file does not itself look like it holds secrets.
GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
AWS = "AKIA" + "Q3X7Z2M4N8P6R5T1"
OPENAI = "sk-" + "T3BlbkFJ" + "x9Y8w7V6u5T4s3R2q1P0" * 2
OPENAI_PROJ = "sk-proj-" + "Ab3_dE6-fG9hJ2kL5mN8pQ1rS4tU7vW0"
SLACK = "xoxb-" + "1234567890-0987654321-" + "AbCdEfGhIjKlMnOpQrStUvWx"
JWT = (
    "eyJhbGciOiJIUzI1NiJ9"
    + "."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    + "."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
PEM_BODY = "MIIEpAIBAAKCAQEA7x" + "Qm9k" * 12


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----", "private key"),
        (f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}", "private key"),
        (f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}", "private key"),
        (f"-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}", "private key"),
        (f"-----BEGIN DSA PRIVATE KEY-----\n{PEM_BODY}", "private key"),
        (f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{PEM_BODY}", "private key"),
        (
            (
                "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
                f"DEK-Info: AES-128-CBC,AB12\n\n{PEM_BODY}"
            ),
            "private key",
        ),
        (f'"key": "-----BEGIN RSA PRIVATE KEY-----\\n{PEM_BODY}\\n"', "private key"),
        (f"aws_access_key_id = {AWS}", "AWS access key id"),
        ("ASIA" + AWS[4:], "AWS access key id"),
        (f"token {GITHUB}", "GitHub token"),
        ("gho_" + GITHUB[4:], "GitHub token"),
        ("ghs_" + GITHUB[4:], "GitHub token"),
        ("github_pat_" + "11ABCDEFG0" + "a1b2c3d4e5f6g7h8i9j0_" * 3, "GitHub token"),
        ("glpat-" + "x1Y2z3W4v5U6t7S8r9Q0", "GitLab token"),
        (f"OPENAI_API_KEY={OPENAI}", "OpenAI API key"),
        (OPENAI_PROJ, "OpenAI API key"),
        ("sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2", "Anthropic API key"),
        ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "Stripe secret key"),
        (SLACK, "Slack token"),
        (f"Authorization: Bearer {JWT}", "JSON web token"),
        (f"key={GOOGLE}", "Google API key"),
        ("postgres://admin:s3cr3t-Pw@db.internal:5432/app", "password in URL"),
        # assignments of literals to secret-sounding names
        ('password = "hunter2hunter"', "hard-coded password"),
        ("API_KEY: 'abcd1234efgh'", "hard-coded API key"),
        ('{"token": "Zx81abQQ9910"}', "hard-coded token"),
        ("export SECRET_TOKEN=abcdefgh123", "hard-coded token"),
        ("DB_PASSWORD=hunter2hunter  # prod", "hard-coded password"),
        ("  password: hunter2hunter", "hard-coded password"),
        ("ENV API_KEY=abcd1234efgh", "hard-coded API key"),
        ('password: str = "hunter2hunter"', "hard-coded password"),
        ('const apiKey = "abcd1234efgh";', "hard-coded API key"),
        ('authToken := "abcd1234efgh"', "hard-coded token"),
        ("'passwd' => 'P@ssw0rd!!'", "hard-coded password"),
        ('client_secret = "Qw3rTy8uIop"', "hard-coded secret"),
        ('aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzKEY"', "hard-coded secret"),
        ('os.environ["API_KEY"] = "abcd1234efgh"', "hard-coded API key"),
        ('self.password = b"hunter2hunter"', "hard-coded password"),
        ('password = "correcthorseBattery"', "hard-coded password"),
        ("mysql --password=hunter2hunter db", "hard-coded password"),
        ('auth = "Basic dXNlcjpwYXNz"', "hard-coded credential"),
    ],
)
def test_finds(text: str, pattern: str) -> None:
    found = find_secrets(text)
    assert [m.pattern for m in found] == [pattern]


@pytest.mark.parametrize(
    "text",
    [
        "the mere word password, a token, a secret, an API key",
        "Password: see the team vault",
        "Token: required",
        "password = getpass()",
        'password = getpass.getpass("Password: ")',
        'password = os.environ["PASSWORD"]',
        'token = os.environ.get("GITHUB_TOKEN", "")',
        'token = request.headers["X-Token"]',
        "password = settings.DB_PASSWORD",
        "password=db_password,",
        "    connect(password=db_password, user=user)",
        'token = "<your-token>"',
        'api_key = "YOUR_API_KEY"',
        'api_key = "your-api-key-here"',
        'password = "xxxxxxxx"',
        'password = "********"',
        'password = "changeme"',
        'password = "change_me_please"',
        'secret = "REDACTED"',
        'password = ""',
        'password = "hunter2"',  # shorter than 8
        'password = "${SECRET}"',
        "PASSWORD=${DB_PASSWORD}",
        "TOKEN=$(cat ~/.token)",
        'token = "{{ vault_token }}"',
        'password = f"{prefix}{suffix}"',
        'password = "%(password)s"',
        'api_key_env = "OPENAI_API_KEY"',
        'token_type = "access_token"',
        'token_url = "https://example.org/oauth/token2"',
        'password_prompt = "Enter your password:"',
        'password_file = "/etc/app/secret1.txt"',
        'secret_name = "prod-db-password1"',
        'token = "access_token"',
        'author = "Jane Doe 1999"',
        'author = "JaneDoe1999"',
        "max_tokens = 4096",
        'tokenizer = "cl100k_base"',
        "if password == 'hunter2hunter':",
        'error = "token expired, retry"',
        "AKIAIOSFODNN7EXAMPLE",
        "AKIA" + "Q3X7Z2M4N8P6R5T1" + "EXTRA",  # part of a longer word
        "ghp_short",
        "sk-learn-compatible-estimator-names",
        "task-1234567890abcdefghijklmnop",
        "xoxb-your-bot-token-here",
        "eyJhbGciOiJIUzI1NiJ9 alone",
        "The key file starts with -----BEGIN OPENSSH PRIVATE KEY----- and ends with the END line.",
        "-----BEGIN PUBLIC KEY-----\n" + PEM_BODY,
        "-----BEGIN CERTIFICATE-----\n" + PEM_BODY,
        "postgres://user:password@localhost/db",
        "postgres://user:${PGPASSWORD}@localhost/db",
        "https://example.org:8080/path",
        "",
    ],
)
def test_does_not_flag(text: str) -> None:
    assert find_secrets(text) == []


def test_line_numbers_order_and_redaction() -> None:
    text = f"# notes\n\nuse {GITHUB}\nthen\npassword = 'hunter2hunter' and {AWS}\n"
    found = find_secrets(text)
    assert found == [
        SecretMatch("GitHub token", 3, "ghp_…"),
        SecretMatch("hard-coded password", 5, "password=hun…"),
        SecretMatch("AWS access key id", 5, "AKIA…"),
    ]
    for match in found:
        assert GITHUB not in match.excerpt and "hunter2hunter" not in match.excerpt


def test_a_vendor_token_in_an_assignment_is_reported_once() -> None:
    assert [m.pattern for m in find_secrets(f'GITHUB_TOKEN = "{GITHUB}"')] == ["GitHub token"]


def test_excerpt_never_reveals_much_of_a_short_secret() -> None:
    (match,) = find_secrets('password = "Ab3$efgh"')
    assert match.excerpt == "password=Ab…"


def test_secret_match_is_frozen() -> None:
    match = SecretMatch("x", 1, "y…")
    with pytest.raises(AttributeError):
        match.line = 2  # type: ignore[misc]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_crashes(text: str) -> None:
    for match in find_secrets(text):
        assert 1 <= match.line <= text.count("\n") + 1
        assert match.excerpt


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="pasword_TOKEN=:\"' \n-<>${}ghp_AKIA0123456789abcXYZ", max_size=300))
def test_never_crashes_on_assignment_like_text(text: str) -> None:
    find_secrets(text)


@settings(max_examples=30, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_large_inputs(chunk: str) -> None:
    find_secrets((chunk * (100_000 // len(chunk) + 1))[:100_000])
