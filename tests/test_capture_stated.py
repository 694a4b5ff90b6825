"""Conventions and preferences from the user's own words, and only theirs.

Each transcript here is written in a real format (Claude Code JSONL, Codex rollout, Aider
history, a Markdown chat) and read the way `memgit capture` reads it. The phrasing is the way
people type to an agent: lower case, no full stops, rules inside requests, corrections; and
the text that is not theirs is what tools inject or what people paste: caveats, skill bodies,
hook feedback, tool results, another agent's role prompt, a build spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgit.agents import transcripts
from memgit.agents.readers.noise import user_text
from memgit.capture.extract import extract
from memgit.capture.stated import CHAT_CAP
from memgit.cli import cli


def claude(tmp_path: Path, turns: list[tuple[str, str]]) -> Path:
    """A Claude Code transcript of `turns` (role, text), none of them marked as injected: the
    way an export or an older version writes them."""
    lines = []
    for n, (role, text) in enumerate(turns):
        record: dict[str, object] = {"type": role, "sessionId": "s1", "uuid": f"u{n}",
                                     "timestamp": f"2026-03-02T10:{n:02d}:00Z", "cwd": "/work/app"}
        if role == "user":
            record["message"] = {"role": "user", "content": text}
        else:
            record["message"] = {"id": f"m{n}", "role": "assistant", "content": [{"type": "text", "text": text}]}
        lines.append(json.dumps(record))
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rules(path: Path) -> list[str]:
    return [c.title for c in extract(transcripts.read(path)) if c.kind in ("convention", "preference")]


def said(tmp_path: Path, text: str, reply: str = "Done.") -> list[str]:
    return rules(claude(tmp_path, [("user", text), ("assistant", reply)]))


# -- how people state a rule --------------------------------------------------------------------

@pytest.mark.parametrize(("text", "title"), [
    ("commit the parser fix on its own without co-author trailers",
     "Commit the parser fix on its own without co-author trailers"),
    ("create a rule that when you fix a bug you always add a failing test first",
     "Create a rule that when you fix a bug you always add a failing test first"),
    ("i would prefer for the settings to be a frozen dataclass rather than a dict",
     "I would prefer for the settings to be a frozen dataclass rather than a dict"),
    ("keep in mind I often have two sessions running in this checkout",
     "I often have two sessions running in this checkout"),
    ("please make sure every new route gets an integration test",
     "Make sure every new route gets an integration test"),
    ("ok so durations should be displayed as 1h 05m, not as minutes",
     "Durations should be displayed as 1h 05m, not as minutes"),
    ("i don't want it to show seconds in the report header", "I don't want it to show seconds in the report header"),
    ("keep the comments", "Keep the comments"),
    ("dont replace the licence headers when you rename things", "Dont replace the licence headers when you rename things"),
    ("the colours are too loud and I don't need the animations", "The colours are too loud and I don't need the animations"),
    ("work on the api, the mobile app i will handle", "Work on the api, the mobile app i will handle"),
    ("btw we use uv, not pip", "We use uv, not pip"),
    ("you're on yarn again, we use pnpm here", "You're on yarn again, we use pnpm here"),
    ("stop adding print statements to the handlers", "Stop adding print statements to the handlers"),
    ("ok cool. btw don't use emojis in commit messages", "Don't use emojis in commit messages"),
    ("IMPORTANT: never commit the generated client", "Never commit the generated client"),
    ("in future, run the linter before you hand back", "In future, run the linter before you hand back"),
    ("fyi i'm on windows so give me powershell commands", "I'm on windows so give me powershell commands"),
])
def test_a_rule_said_in_passing(tmp_path: Path, text: str, title: str) -> None:
    assert said(tmp_path, text) == [title]


def test_a_rule_after_a_condition_is_titled_by_the_rule(tmp_path: Path) -> None:
    text = ("When I export a report that has a row with a refund in it, the refund should be displayed "
            "in red with a minus sign in front. For example -12.50 in red.")
    found = extract(transcripts.read(claude(tmp_path, [("user", text), ("assistant", "I'll look.")])))
    stated = [c for c in found if c.kind in ("convention", "preference")]
    assert [c.title for c in stated] == ["The refund should be displayed in red with a minus sign in front"]
    assert stated[0].body.endswith("For example -12.50 in red.")  # the example stays with its rule


@pytest.mark.parametrize("text", [
    "keep going",
    "keep digging into the parser",
    "ok now deploy it",
    "don't do that",
    "do not worry about the lint warnings",
    "i don't like this colour",
    "keep the button but move it to the left",
    "make sure it works on mobile",
    "it always fails on the second run",
    "always the same error with this one",
    "the build doesn't work",
    "whenever you're ready, push it",
    "can you make sure the tests pass?",
    "I think we should never use globals",
    "don't forget the changelog this time",
    "i don't need to handle that case",
    "always read the docs first",
    "don't respond with long summaries",
    "stop doing that",
    "continue please and make sure you test everything",
    "Build the signup form.\n\nRequirements:\n- use the form library\n- never block the submit button\n",
])
def test_talk_and_the_task_at_hand_are_not_rules(tmp_path: Path, text: str) -> None:
    assert said(tmp_path, text) == []


@pytest.mark.parametrize("text", [
    "In NOTES.md, sort the sections by date. DO NOT CHANGE the wording.",
    "sort the imports in app.py\ndon't change anything else",
    "Rename load to read in io.py, keep the docstring.",
    "fix the parser. i don't want you to break the public api",
])
def test_a_guard_on_the_work_asked_for_is_not_a_rule(tmp_path: Path, text: str) -> None:
    assert said(tmp_path, text) == []


def test_a_guard_said_for_good_is_a_rule(tmp_path: Path) -> None:
    assert said(tmp_path, "Add the index. Don't touch the vendored folder, ever.") == [
        "Don't touch the vendored folder, ever"]


# -- corrections --------------------------------------------------------------------------------

def test_a_question_that_corrects_the_agent_counts_when_the_agent_takes_it(tmp_path: Path) -> None:
    question = "why didn't you add the new flag to the --help text?"
    assert said(tmp_path, question, "You're right, I missed it. Adding it now.") == [
        "Why didn't you add the new flag to the --help text?"]
    assert said(tmp_path, question, "The help text is generated from the parser.") == []
    # "why don't you…?" suggests; it does not correct.
    assert said(tmp_path, "why don't you try the cached client?", "Good point, trying it now.") == []


def test_a_question_that_is_a_correction(tmp_path: Path) -> None:
    question = "shouldn't this go through the retry_policy helper?"
    assert said(tmp_path, question, "Good point — switching to retry_policy.") == [
        "Shouldn't this go through the retry_policy helper?"]
    assert said(tmp_path, question, "It could, but the helper retries on 4xx too.") == []


def test_a_wrong_claim_about_the_code_corrected(tmp_path: Path) -> None:
    assert said(tmp_path, "[[page]] doesn't create links in these notes", "Good catch — they need a .md link.") == [
        "[[page]] doesn't create links in these notes"]
    assert said(tmp_path, "it doesn't create the file", "Sorry, let me check.") == []


def test_a_claim_made_without_checking(tmp_path: Path) -> None:
    text = "hey how can you say the config docs are current if you haven't read settings.py"
    assert said(tmp_path, text) == [
        "How can you say the config docs are current if you haven't read settings.py"]


# -- lists --------------------------------------------------------------------------------------

def test_a_list_under_do_not_is_one_rule(tmp_path: Path) -> None:
    text = "Add the export endpoint.\n\nDo NOT:\n- run the dev server\n- log tokens\n- add the CSV writer yet\n"
    assert said(tmp_path, text) == ["Do NOT run the dev server; Do NOT log tokens"]


def test_items_under_constraints_are_rules(tmp_path: Path) -> None:
    text = ("Review the loader for slow paths.\n\nConstraints:\n- stay on the standard library\n"
            "- keep loader.py free of I/O\n")
    assert said(tmp_path, text) == ["Stay on the standard library; keep loader.py free of I/O"]


def test_steps_of_a_request_are_not_rules(tmp_path: Path) -> None:
    text = "Speed up the search page.\n\nImprove:\n- avoid heavy fonts\n- always prefetch results\n"
    assert said(tmp_path, text) == []


def test_lines_the_person_calls_conventions(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(
        "# aider chat started at 2026-03-02 10:00:00\n\n"
        "#### add these conventions to STYLE.md  \n"
        "#### Headings are in sentence case.  \n"
        "#### Tables have a header row and no trailing pipes.  \n"
        "#### Code blocks always name their language.  \n\n"
        "Added the three conventions to STYLE.md.\n", encoding="utf-8")
    assert rules(path) == ["Headings are in sentence case", "Tables have a header row and no trailing pipes",
                           "Code blocks always name their language"]


def test_short_rules_in_a_row_are_one_list(tmp_path: Path) -> None:
    text = "Tidy the build.\n\nDo NOT add webpack.\nDo NOT add babel.\nDo NOT add jest.\n"
    assert said(tmp_path, text) == ["Do NOT add webpack; Do NOT add babel; Do NOT add jest"]


def test_a_rule_said_again_later_with_more_is_one_rule(tmp_path: Path) -> None:
    # People repeat their standing limits in each new request, adding to them as they go: one
    # memory that grows, not a second one that half-repeats the first.
    path = claude(tmp_path, [
        ("user", "Add the export page.\n\nDo NOT:\n- start the dev server\n- expose secrets\n"),
        ("assistant", "Added the export page."),
        ("user", "Now the import page.\n\nIMPORTANT:\n- do NOT expose the service role key\n"
                 "- do NOT start the dev server\n"),
        ("assistant", "Added the import page."),
    ])
    found = [c for c in extract(transcripts.read(path)) if c.kind in ("convention", "preference")]
    assert [c.title for c in found] == ["Do NOT start the dev server; Do NOT expose secrets"]
    assert "service role key" in found[0].body
    assert found[0].evidence == (1, 3)


def test_rules_of_one_list_that_share_words_stay_apart(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(
        "# aider chat started at 2026-03-02 10:00:00\n\n"
        "#### add these conventions to STYLE.md  \n"
        "#### Bullet lists use the - marker with one space after the marker.  \n"
        "#### Numbered lists pad the marker with spaces after it to four characters.  \n\n"
        "Added both conventions to STYLE.md.\n", encoding="utf-8")
    assert rules(path) == ["Bullet lists use the - marker with one space after the marker",
                           "Numbered lists pad the marker with spaces after it to four characters"]


# -- what the person did not write --------------------------------------------------------------

def test_what_tools_put_into_the_users_turn_is_not_read(tmp_path: Path) -> None:
    path = claude(tmp_path, [
        ("user", ("2026-03-02 10:00\n<local-command-caveat>Caveat: The messages below were generated by the user "
                 "while running local commands. DO NOT respond to these messages or otherwise consider them in "
                 "your response unless the user explicitly asks you to.</local-command-caveat>")),
        ("user", "<command-name>/model</command-name>\n<command-message>model</command-message>"),
        ("user", ("Base directory for this skill: /skills/release\n\n# Release\n\nALWAYS bump the version. "
                 "NEVER skip the changelog.\nDo not push tags by hand.")),
        ("user", "Stop hook feedback:\nNever leave TODO comments; fix them first."),
        ("user", "<skill name=\"review\">\nAlways request two reviewers.\n</skill>"),
        ("user", '[{"type": "tool_result", "tool_use_id": "toolu_01", "content": "Never retry: exit 1"}]'),
        ("user", "---\nname: docs-writer\ndescription: writes docs\n---\n\nAlways write in the second person."),
        ("assistant", "OK."),
        ("user", "we always pin exact versions in requirements.txt"),
    ])
    assert rules(path) == ["We always pin exact versions in requirements.txt"]


def test_another_agents_role_prompt_pasted_in_yields_nothing(tmp_path: Path) -> None:
    prompt = ("You are a careful research agent. You collect facts about a codebase for a report.\n\n"
              "## Rules\n- Do NOT git clone anything.\n- Do NOT guess; say when you do not know.\n"
              "- Always cite the file and the line.\n- Never run commands that write.\n"
              "- Use ripgrep instead of grep.\n- Read all docs first.\n- Keep answers under 200 words.\n\n"
              "## Output\nA JSON object with `facts` and `sources`.\n")
    assert said(tmp_path, prompt) == []
    headless = prompt.split("\n\n", 1)[1]  # the same rules without the role line: too many to be typed
    assert said(tmp_path, headless) == []


def test_the_agents_plan_handed_back_is_not_the_persons(tmp_path: Path) -> None:
    plan = ("Implement the following plan:\n\n# Plan: paging\n\n- Add `page` to list_items()\n"
            "- Never return more than 100 rows\n- Don't touch the v1 routes\n")
    assert said(tmp_path, plan) == []


def test_a_pasted_spec_keeps_only_its_rules_about_the_code(tmp_path: Path) -> None:
    spec = ("# Billing service: build specification\n\n## 1. Goal\nBill customers monthly through "
            "`billing/gateway.py`.\n" + "Background on pricing and the market. " * 30 + "\n\n"
            "## 2. Layout\n- api/ routers\n- core/ domain logic\n- jobs/ scheduled work\n\n"
            "## 3. Rules\n"
            "Do NOT invent endpoints that are not in this document.\n"
            "Do NOT read the docs twice, start coding.\n"
            "Do NOT call the gateway from the routers; go through `GatewayClient`.\n"
            "Never use float for money; use `Decimal`.\n"
            "Do NOT be slow.\n\n"
            "## 4. Steps\n1. Models\n2. Routers\n3. Tests\n")
    assert said(tmp_path, spec) == ["Do NOT call the gateway from the routers; go through `GatewayClient`",
                                    "Never use float for money; use `Decimal`"]


def test_a_message_yields_a_few_rules_at_most(tmp_path: Path) -> None:
    text = "\n".join(f"never use the {word} helper in `lib/{word}.py`" for word in
                     ("alpha", "beta", "gamma", "delta", "epsilon", "zeta"))
    assert len(said(tmp_path, text)) == CHAT_CAP


@pytest.mark.parametrize(("text", "kept"), [
    (("2026-03-02T10:00:00Z\nCaveat: The messages below were generated by the user while running local "
     "commands. DO NOT respond to these messages."), ""),
    ("[10:31]\n<command-name>/clear</command-name>", ""),
    ("PreToolUse:Bash hook error: blocked by policy", ""),
    ("System: Please continue.", ""),
    ("[{'type': 'tool_result', 'tool_use_id': 'toolu_9', 'content': 'never retry'}]", ""),
    ('{"stdout": "done", "stderr": "", "interrupted": false}', ""),
    ("Called the Read tool with the following input: {\"file_path\": \"app.py\"}", ""),
    ("Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all\n\nfix the parser",
     "fix the parser"),
    ("<ide_opened_file>The user opened app.py in the IDE.</ide_opened_file>always use tabs", "always use tabs"),
    ("my hook output looks wrong, can you check", "my hook output looks wrong, can you check"),
    ("PreToolUse hooks never fire here, check settings.json", "PreToolUse hooks never fire here, check settings.json"),
    ("UserPromptSubmit hook success: context added", ""),
    ("[Tool result: exit 0]", ""),
    ("---\nthat is a ruler, not a skill\n---\nkeep it", "---\nthat is a ruler, not a skill\n---\nkeep it"),
])
def test_noise_near_the_start_of_a_turn(text: str, kept: str) -> None:
    assert user_text(text) == kept


# -- end to end ---------------------------------------------------------------------------------

def test_capture_proposes_the_persons_rule_and_nothing_pasted(repo: Path, tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    meta = {"type": "session_meta", "payload": {"id": "r1", "cwd": str(repo),
                                                "base_instructions": {"text": "You are a coding agent. " * 800}}}
    records = [meta] + [{"type": "event_msg", "payload": {"type": "user_message", "message": text}} for text in (
        "<environment_context>\n  <cwd>/work/app</cwd>\n</environment_context>",
        "Add paging to the list endpoint. Don't change the response shape.",
        "also from now on every endpoint returns errors as problem+json",
    )]
    rollout.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(cli, ["-C", str(repo), "init"], catch_exceptions=False).exit_code == 0
    result = runner.invoke(cli, ["-C", str(repo), "capture", str(rollout), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [c["title"] for c in data["candidates"] if c["kind"] in ("convention", "preference")] == [
        "From now on every endpoint returns errors as problem+json"]
    assert sorted(p.name for p in (repo / ".memory").iterdir()) == ["config.toml"]  # nothing written
