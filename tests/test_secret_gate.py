"""The secret gate on every field: remember, update, import and lint, on real repositories.

Also the shapes the first version of the gate let through, each pinned by a test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.cli import cli
from memgit.errors import MemgitError
from memgit.memory.credentials import SecretMatch, find_in_memory, find_secrets
from memgit.memory.format import Memory

# Built from pieces so that this file does not itself hold a token a scanner would block.
GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
AWS_SECRET = "Zq3" + "xW9/vB2nM7kL4pR8tY6uI1oE5aS0dF+gH3jK"
HEX32 = "3acb9c4a" + "5185c5c8" + "c296b2d8" + "14efcf88"
AZURE_KEY = ("Qm9k" + "Xr7Tz2Lp/+" + "aB3d") * 4 + "Qm9k" + "Xr7Tz2Lp/+" + "=="  # 86 + "=="


def run(*args: str, cwd: Path, input: str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["-C", str(cwd), *args], input=input, catch_exceptions=False)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        # key = value with spaces around `=`: .env, INI, ~/.aws/credentials
        (f"aws_secret_access_key = {AWS_SECRET}", "hard-coded secret"),
        ("DB_PASSWORD = Xk29!aa-Q71z", "hard-coded password"),
        (f"api_key = {HEX32}", "hard-coded API key"),  # a hex API key assigned to a key name
        (f"DATADOG_APP_KEY: {HEX32}", "hard-coded credential"),
        ("https://hooks.slack.com/services/" + "T0ABC1234/B0DEF5678/" + "aB3dE6gH9jK2mN5pQ8sV1yZ4", "Slack webhook"),
        ("publish with npm_" + "aB3dE6gH9jK2mN5pQ8sV1yZ4" + "bC7fI0lOrU3x", "npm token"),
        (f"AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net", "Azure storage account key"),
        ("SG." + "aB3dE6gH9jK2mN5pQ8sV1y" + "." + "Zq3xW9vB2nM7kL4pR8tY6uI1oE5aS0dFgH3jK2mN5pQ", "SendGrid API key"),
        ("mysql -h db -u root -pXk29aaQ71zB shop", "password on a command line"),
        ("curl -u deploy:Xk29aaQ71zB https://ci.example.org/api", "password on a command line"),
        ("redis://:Gf9tH31KqKf4nDYs@cache:6379/0", "password in URL"),  # no user name
    ],
)
def test_previously_missed_shapes(text: str, pattern: str) -> None:
    assert [m.pattern for m in find_secrets(text)] == [pattern]


@pytest.mark.parametrize(
    "text",
    [
        "mysql -u root -p shop",  # prompts for the password
        "mysql -h 127.0.0.1 -P 3306 -u app -p",
        'mysql -u app -p"$DB_PASSWORD" shop',
        "curl -u $USER:$TOKEN https://api.example.org",
        "curl -u admin https://nexus.internal/",  # prompts
        "echo $PAT | docker login ghcr.io -u bot --password-stdin",
        "ghp_" + "X" * 36,
        "npm_config_registry=https://registry.npmjs.org/",
        # Azurite's published development key
        "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        "https://hooks.slack.com/services/T000/B000/XXXX",
        "password = hashedPassword",  # an unquoted camelCase name is a variable
        "PASSWORD_MIN_LENGTH = 12",
        "connect(password=db_password, user=user)",
        f"git cherry-pick {HEX32}{HEX32[:8]}",
        # found by scanning 68 MB of installed Python packages
        "RSAPrivateKeyWithSerialization = RSAPrivateKey",  # a class alias
        "# Accept MAC addresses (ex: '52:54:00:9d:0e:67')",  # not a .pgpass line
        "return f'machine {host} login {self.username} password {self.password}'",
    ],
)
def test_look_alikes_stay_quiet(text: str) -> None:
    assert find_secrets(text) == []


def test_every_field_of_a_memory_is_scanned_and_named() -> None:
    memory = Memory(
        id="m-1",
        title="deploy notes",
        body="first line\nuse " + GITHUB,
        entity="token " + GITHUB,
        task_id=GITHUB,
        tags=("ok", GITHUB),
        files=(GITHUB,),
        symbols=(GITHUB,),
        extra={"vendor": {"auth": {"db_password": "Xk29!aa-Q71z"}}, "notes": ["fine", 42, None, GITHUB]},
    )
    found = find_in_memory(memory)
    assert [(m.field, m.where) for m in found] == [
        ("body", "body, line 2"),
        ("entity", "entity"),
        ("task_id", "task_id"),
        ("tags", "tags"),
        ("files", "files"),
        ("symbols", "symbols"),
        ("vendor.auth.db_password", "vendor.auth.db_password"),
        ("notes", "notes"),
    ]
    # The imported field's name gave the value its meaning; alone it is not recognisable.
    assert found[6].pattern == "hard-coded password" and "Xk29" not in found[6].excerpt
    assert find_secrets("Xk29!aa-Q71z") == []


def test_a_value_that_contains_itself_is_walked_once() -> None:
    looped: list[object] = ["fine"]
    looped.append(looped)  # YAML anchors can build this
    deep: object = GITHUB
    for _ in range(5000):  # deeper than Python's recursion limit
        deep = [deep]
    memory = Memory(id="m-1", title="t", extra={"loop": looped, "deep": deep, "when": 2024})
    assert [m.field for m in find_in_memory(memory)] == ["deep"]


def test_a_secret_used_as_a_key_is_reported_without_repeating_it() -> None:
    memory = Memory(id="m-1", title="t", extra={"meta": {GITHUB: 1}, GITHUB: {"x": "fine"}})
    found = find_in_memory(memory)
    assert sorted((m.pattern, m.field) for m in found) == [("GitHub token", "a field name"), ("GitHub token", "meta")]
    assert not any(GITHUB in repr(match) for match in found)


def test_zero_width_characters_do_not_hide_a_token() -> None:
    assert [m.pattern for m in find_secrets("line one\nuse " + GITHUB[:8] + "\u200b" + GITHUB[8:])] == ["GitHub token"]
    assert find_secrets("a\u200bb\nuse " + GITHUB)[0].line == 2


def test_a_webhook_is_named_by_its_address_not_its_key() -> None:
    key = "aB3dE6gH9jK2mN5pQ8sV1yZ4"
    (match,) = find_secrets("alerts: https://hooks.slack.com/services/T0ABC1234/B0DEF5678/" + key)
    assert match.excerpt == "https://hooks.slack.com/services/T0ABC1234/B0DEF5678/aB3d…"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=60),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=12), _JSON, max_size=5), st.lists(st.text(max_size=40), max_size=4))
def test_any_imported_fields_are_scanned_without_crashing(extra: dict[str, object], tags: list[str]) -> None:
    memory = Memory(id="m-1", title="t", tags=tuple(tags), extra=extra)
    for match in find_in_memory(memory):
        assert match.field and match.excerpt


def test_where_for_plain_text() -> None:
    assert SecretMatch("GitHub token", 3, "ghp_…").where == "line 3"


def test_remember_refuses_a_secret_in_entity_tags_or_task_and_says_which(mem) -> None:  # type: ignore[no-untyped-def]
    for options, field in (
        ({"entity": GITHUB}, "in entity"),
        ({"tags": ["deploy", GITHUB]}, "in tags"),
        ({"task_id": f"ticket {GITHUB}"}, "in task_id"),
    ):
        with pytest.raises(MemgitError, match=f"looks like a secret {field} \\(GitHub token: ghp_…\\)"):
            mem.remember("the deploy bot pushes tags", **options)
    assert mem.list() == []
    assert mem.remember("the deploy bot pushes tags", tags=[GITHUB], allow_secret=True).created


def test_update_refuses_a_secret_in_tags(mem) -> None:  # type: ignore[no-untyped-def]
    memory = mem.remember("the deploy bot pushes tags").memory
    with pytest.raises(MemgitError, match="in tags"):
        mem.update(memory.id, tags=[GITHUB])
    assert mem.get(memory.id).tags == ()


def test_import_skips_a_line_whose_unknown_field_holds_a_token(repo: Path, tmp_path: Path) -> None:
    run("init", cwd=repo)
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps({"id": "x-1", "title": "clean"})
        + "\n"
        + json.dumps({"id": "x-2", "title": "from another tool", "vendor_meta": {"api_token": GITHUB}})
        + "\n"
    )
    result = run("import", str(source), cwd=repo)
    assert result.exit_code == 1
    assert "line 2: looks like a secret in vendor_meta.api_token (GitHub token); use --allow-secret" in result.stderr
    assert "imported 1, skipped 1" in result.stderr
    exported = run("export", cwd=repo).stdout.splitlines()
    assert [json.loads(line)["id"] for line in exported] == ["x-1"]
    again = run("import", "--allow-secret", str(source), cwd=repo)
    assert again.exit_code == 0 and "imported 1, skipped 0, 1 already present" in again.stderr  # x-1 is there
    assert {json.loads(line)["id"] for line in run("export", cwd=repo).stdout.splitlines()} == {"x-1", "x-2"}


def test_lint_reports_a_token_in_a_hand_written_files_tags(repo: Path) -> None:
    run("init", cwd=repo)
    (repo / ".memory" / "notes.md").write_text(f"---\ntitle: deploy notes\ntags: [deploy, {GITHUB}]\n---\n\nclean body\n")
    (repo / ".memory" / "other.md").write_text("---\ntitle: other\nticket: {db_password: 'Xk29!aa-Q71z'}\n---\n")
    result = run("lint", cwd=repo)
    assert result.exit_code == 1
    assert [line for line in result.stdout.splitlines() if "secret" in line] == [
        "notes.md: looks like a secret in tags: GitHub token (ghp_…)",
        "other.md: looks like a secret in ticket.db_password: hard-coded password (db_password=Xk2…)",
    ]


# The generic rule: a random-looking value right after a credential word, for kinds no vendor
# shape or known place covers. Values built from pieces, as above.
RANDOM = "OW4GS3U4E3fo" + "DyoLKy7HaQQ1"


@pytest.mark.parametrize(
    "text",
    [
        f'curl -H "X-Api-Token: {RANDOM}" https://internal.example.org/health',
        f"billing-api accepts service_token: {RANDOM} from the cron pod",
        f"<password>{RANDOM[:14]}</password> in settings.xml",
        f"Authorization: ApiKey {RANDOM}==",
        f"the admin password is {RANDOM[:12]}",  # a password word: 10+ characters
        "the signer's private key 0x" + "9d28eb8832" * 3 + "0b2a",  # hex after a strong name
        f"requirepass {RANDOM[:16]}",  # a credential word glued to another word
    ],
)
def test_a_random_value_after_a_credential_word_is_found(text: str) -> None:
    assert find_secrets(text), text


@pytest.mark.parametrize(
    "text",
    [
        "cache key: " + "3acb9c4a5185c5c8" * 2,  # hex after `key` alone: an id, a hash
        "the gpg key 3ACB9C4A5185C5C8C296B2D814EFCF8812345678",
        "private_key: Ed25519PrivateKey | None",  # a type: capitalised words
        "the private key is rust_openssl.hpke.MLKEM768PrivateKey",  # a dotted reference
        "private_key = Ed25519PrivateKey.from_private_bytes(d)",  # a call
        "model key: claude-sonnet-4-5-20250929",  # a slug
        "integrity key sha512-" + RANDOM * 3,  # a hash with its algorithm
        "the token count is 1800 per request",
        "public key " + RANDOM + RANDOM,
    ],
)
def test_look_alikes_after_a_credential_word_stay_quiet(text: str) -> None:
    assert find_secrets(text) == []


def test_a_match_carries_a_fingerprint_of_the_whole_secret() -> None:
    first, second = "AKIA" + "Q3ZXW7VB2NM4KL6P", "AKIA" + "R8TY6UI1OE5AS2DF"
    a, b = find_secrets(f"{first}\n{second}")
    assert a.excerpt == b.excerpt == "AKIA…"  # the excerpts cannot tell them apart
    assert a.fingerprint != b.fingerprint and len(a.fingerprint) == 20
    assert find_secrets(first)[0].fingerprint == a.fingerprint  # the same value, the same fingerprint
    assert first not in repr(a) and a.fingerprint not in repr(a)
    body = "MIIEowIBAAKCAQEA" + "XVEfGT2w8X240wlo" * 3
    one = find_secrets(f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----")
    two = find_secrets(f"-----BEGIN RSA PRIVATE KEY-----\n{body[::-1]}\n-----END RSA PRIVATE KEY-----")
    assert one[0].fingerprint != two[0].fingerprint  # keys differ by their body, not their header
