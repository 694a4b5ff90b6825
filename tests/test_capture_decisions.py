"""Decisions the user made: answers to questions asked through a tool, approved plans, and choices
stated in the user's own words (renames, a technology picked over another, a scope, a rejection)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgit.agents import transcripts
from memgit.agents.events import Event
from memgit.capture.decisions import decisions
from memgit.capture.extract import extract
from memgit.cli import cli


def user(line: int, text: str) -> Event:
    return Event(line, "user", text)


def agent(line: int, text: str) -> Event:
    return Event(line, "assistant", text)


# -- answers through a tool --------------------------------------------------------------------------

QUESTION = "How should the first release handle live orders?"
OPTIONS = ("Paper trading only (Recommended)", "Live orders behind a flag", "Live orders by default")


def test_a_picked_option_with_a_note_is_a_decision_titled_by_the_note() -> None:
    answer = Event(40, "choice", "Paper trading only (Recommended)\nuser_note: Keep the exchange adapter "
                   "isolated so live trading can be added later.", target=QUESTION, options=OPTIONS)
    [found] = decisions([agent(39, "A few questions first."), answer])
    assert found.kind == "decision" and found.source == "user" and found.evidence == (40,)
    assert found.title == "Keep the exchange adapter isolated so live trading can be added later"
    assert found.body == (f"Question: {QUESTION}\n"
                          "Chosen: Paper trading only\n"
                          "Rejected: Live orders behind a flag; Live orders by default\n"
                          "The user's note: Keep the exchange adapter isolated so live trading can be added later.")


def test_a_picked_option_alone_is_titled_by_the_option_and_the_question() -> None:
    [found] = decisions([Event(7, "choice", "Live orders behind a flag", target=QUESTION, options=OPTIONS)])
    assert found.title == "Live orders behind a flag — How should the first release handle live orders"
    assert "Chosen: Live orders behind a flag\nRejected: Paper trading only; Live orders by default" in found.body


def test_a_free_answer_is_matched_to_the_option_it_restates() -> None:
    answer = Event(12, "choice", "the check passes on main; fix the warnings",
                   target="The lint hook fails on warnings in code we did not touch. How should we proceed?",
                   options=("Skip the hook (--no-verify)", "Fix the warnings first"))
    [found] = decisions([answer])
    assert "Chosen: Fix the warnings first\nRejected: Skip the hook (--no-verify)" in found.body
    assert found.title == "The check passes on main; fix the warnings"


def test_an_answer_in_no_option_s_words_is_kept_as_the_user_s_own_choice() -> None:
    answer = Event(5, "choice", "Neither: store the settings in pyproject.toml", target="Where do settings live?",
                   options=("A new settings.ini", "Environment variables"))
    [found] = decisions([answer])
    assert "Chosen:" not in found.body and "Rejected: A new settings.ini; Environment variables" in found.body
    assert found.files == ("pyproject.toml",)


def test_a_failed_or_empty_answer_is_no_decision() -> None:
    assert decisions([Event(3, "choice", "", target=QUESTION, options=OPTIONS),
                      Event(4, "choice", "ok", target=QUESTION, options=OPTIONS),
                      Event(5, "choice", "Paper trading only", target=QUESTION, options=OPTIONS, error=True),
                      Event(6, "choice", "Paper trading only", target=QUESTION, options=OPTIONS,
                            sidechain=True)]) == []


# -- plans -------------------------------------------------------------------------------------------

PLAN = """<proposed_plan>
# Ledger: an append-only event store

## Summary
Build the ledger as an append-only log with snapshots. It replaces the mutable tables.

## Storage
- One segment file per day under data/segments/.

## Replay
- Rebuild any account from its events.
</proposed_plan>"""


def test_a_plan_followed_by_implement_the_plan_is_approved_with_its_title_goal_and_headings() -> None:
    [found] = decisions([Event(20, "plan", PLAN), user(24, "Implement the plan.")])
    assert found.title == "Approved plan: Ledger: an append-only event store"
    assert found.body == ("The user approved this plan: Build the ledger as an append-only log with snapshots.\n"
                          "- Storage\n- Replay")
    assert found.evidence == (20, 24)


def test_a_plan_through_a_tool_that_was_not_rejected_was_approved() -> None:
    [found] = decisions([Event(9, "plan", "1. Add a retry policy\n2. Use it in the client", tool="ExitPlanMode")])
    assert found.title == "Approved plan: Add a retry policy" and found.evidence == (9,)


def test_a_plan_the_agent_carries_out_before_the_user_objects_was_approved() -> None:
    events = [Event(9, "plan", PLAN), Event(11, "tool_call", tool="Edit", action="edit", files=("ledger.py",)),
              user(15, "nice")]
    [found] = decisions(events)
    assert found.title == "Approved plan: Ledger: an append-only event store" and found.evidence == (9,)


def test_a_rejected_or_unanswered_plan_is_no_decision() -> None:
    assert decisions([Event(9, "plan", PLAN, tool="ExitPlanMode", error=True)]) == []
    assert decisions([Event(9, "plan", PLAN), user(12, "no, keep the tables and add an audit log")]) == []
    assert decisions([Event(9, "plan", PLAN)]) == []


# -- choices stated in chat ----------------------------------------------------------------------------

def said(*texts: str) -> list[tuple[str, str]]:
    events = []
    for n, text in enumerate(texts):
        events.append(user(2 * n + 1, text) if n % 2 == 0 else agent(2 * n + 1, text))
    return [(c.title, c.body.splitlines()[0]) for c in decisions(events)]


def test_renames_the_user_made_or_asked_for() -> None:
    assert said("ok, I renamed this repo ledgerkit, from acct-tools, since it does more than accounts now.") \
        == [("I renamed this repo ledgerkit, from acct-tools, since it does more than accounts now",
             "Renamed: acct-tools -> ledgerkit")]
    assert said("/mv src/Parser.ts src/Tokenizer.ts") == [("/mv src/Parser.ts src/Tokenizer.ts",
                                                            "Renamed: src/Parser.ts -> src/Tokenizer.ts")]
    events = [user(1, "yes, please rename one of them so the two configs are not confused"),
              agent(2, "Done."),
              Event(3, "tool_call", tool="Bash", command="mv .ci/build.yml .ci/build-matrix.yml", action="run")]
    [found] = decisions(events)
    assert found.title == "Renamed .ci/build.yml to .ci/build-matrix.yml"


def test_a_tool_scope_or_page_chosen_in_words() -> None:
    assert said("hmm I have no licence for it, let's use Inter font instead") == [
        ("I have no licence for it, let's use Inter font instead", "Chosen: Inter font")]
    assert said("wire the app to use SQLite instead of the Postgres container")[0][1] == "Chosen: SQLite"
    assert said("ok let's go with Tailwind for the styling")[0][1] == "Chosen: Tailwind for the styling"
    assert said("let's go with that") == said("let's go with option 2") == said("we'll go with your suggestion") == []
    assert said("i want the API docs to be rebuilt whenever a tag is pushed")[0][0] \
        == "I want the API docs to be rebuilt whenever a tag is pushed"
    assert said("focus on the backend, I will handle the frontend")[0][0] == \
        "Focus on the backend, I will handle the frontend"
    assert said("the /settings page should be same as the /profile page, same layout")[0][0].startswith(
        "The /settings page should be same as")
    assert said("change it to ToolOutput, then run the checks")[0][0] == "Change it to ToolOutput, then run the checks"
    assert said("from the README, this section is no longer needed.")[0][1] == "Rejected: this section"


def test_a_question_rejecting_something_counts_once_the_agent_removes_it() -> None:
    removed = said("what if I didn't want a dark mode toggle tho?", "Understood, I removed the toggle from Header.tsx.")
    assert removed == [("No dark mode toggle", "Rejected: dark mode toggle")]
    assert said("what if I didn't want a dark mode toggle tho?", "You can hide it with a setting.") == []


def test_one_off_steps_hedges_questions_rules_and_pastes_are_not_decisions() -> None:
    assert said("run the tests") == []
    assert said("fix this") == []
    assert said("maybe we should use Redis instead") == []
    assert said("should we use Redis instead?") == []
    assert said("use this instead") == []
    # A rule is a convention, found by the stated rules, not a decision.
    assert said("Use pnpm instead of npm in this repo.") == []
    assert said("```\nlet's use sqlite instead\n```") == []
    assert said("x" * 3100 + " let's use Redis instead") == []


def test_the_agent_s_words_are_not_the_user_s_decision() -> None:
    assert decisions([agent(1, "Let's use Redis instead of Memcached."), user(2, "thanks")]) == []


# -- through a transcript and the command line -------------------------------------------------------

def test_capture_proposes_the_decisions_of_a_chat_log(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "session.md"
    log.write_text("### Human\n\nThe Graphik licence is too expensive; let's use Inter instead.\n\n"
                   "### Assistant\n\nSwitched the font stack to Inter in static/site.css.\n\n"
                   "### Human\n\nrun the tests\n\n### Assistant\n\nAll 12 tests pass.\n", encoding="utf-8")
    titles = [(c.kind, c.title) for c in extract(transcripts.read(log))]
    assert ("decision", "The Graphik licence is too expensive; let's use Inter instead") in titles
    runner = CliRunner()
    assert runner.invoke(cli, ["-C", str(repo), "init"], catch_exceptions=False).exit_code == 0
    result = runner.invoke(cli, ["-C", str(repo), "capture", "--json", str(log)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    found = [c for c in json.loads(result.stdout)["candidates"] if c["kind"] == "decision"]
    assert [c["title"] for c in found] == ["The Graphik licence is too expensive; let's use Inter instead"]
    assert found[0]["evidence"]["lines"] == [1]  # the turn's heading line


def test_vague_objects_and_talk_about_the_answer_are_not_decisions() -> None:
    assert said("I don't want you to touch the migrations") == []
    assert said("i don't need an explanation, just the fix") == []
    assert said("let's use the other one instead") == []
    assert said("use a different approach instead") == []
    assert said("how can i use #336699 instead of the red") == []  # a question without its mark


def test_a_later_choice_of_the_same_kind_overrides_an_earlier_one() -> None:
    found = said("let's use Graphik font instead", "Done.", "I have no licence; let's use Inter font instead")
    assert [body for _, body in found] == ["Chosen: Inter font"]


def test_this_in_a_comment_on_a_quoted_section_is_the_section() -> None:
    text = "### Manual Setup\n\nRun the installer by hand.\n\nfrom the README, this is no longer needed."
    assert said(text) == [("From the README, this is no longer needed", "Rejected: Manual Setup")]


OFFER = ("Two ways to store the sessions:\n\n### Option A: Signed cookies\nNo server state.\n\n"
         "### Option B: A Redis store\nSessions can be revoked.\n\nWhich would you prefer?")


def test_a_pick_among_options_the_agent_listed_in_text() -> None:
    for reply in ("B", "option B please", "go with B", "B sounds good", "b."):
        [found] = decisions([agent(1, OFFER), user(2, reply)])
        assert found.title == "Chose: A Redis store" and "Rejected: Signed cookies" in found.body, reply
    assert decisions([agent(1, OFFER), user(2, "Both look fine, can you explain A more?")]) == []
    assert decisions([agent(1, OFFER), user(2, "option A looks risky, what about B?")]) == []
    assert decisions([agent(1, OFFER), user(2, "definitely not option A")]) == []
    assert decisions([agent(1, "1. Read the file\n2. Fix the bug"), user(2, "2")]) == []  # no question asked


def test_a_yes_or_no_label_is_not_found_inside_the_note() -> None:
    answer = Event(8, "choice", "Yes\nbut no admin login for now", target="Include the admin UI?", options=("Yes", "No"))
    [found] = decisions([answer])
    assert "Chosen: Yes\nRejected: No\nThe user's note: but no admin login for now" in found.body


# -- through real transcripts (the readers turn tool answers into choice and plan events) -------------

def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def claude(n: int, kind: str, content: object, **fields: object) -> dict[str, object]:
    return {"type": kind, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n > 1 else None, "sessionId": "s-1",
            "cwd": "/w", "timestamp": f"2026-05-01T10:00:{n:02d}Z", "isSidechain": False,
            "message": {"role": kind, "content": content}, **fields}


def test_claude_code_ask_user_question_and_exit_plan_mode(tmp_path: Path) -> None:
    question = "The pre-commit hook fails on lint errors in files we did not touch. How should we proceed?"
    asked = {"questions": [{"question": question, "header": "Commit", "multiSelect": False,
                            "options": [{"label": "Skip the hook (--no-verify)", "description": "commit anyway"},
                                        {"label": "Fix the lint errors", "description": "fix them first"}]}]}
    plan = "# Cache the price feed\n\n1. Add a TTL cache in feed/cache.py\n2. Read through it in feed/client.py"
    records = [
        claude(1, "user", "commit the feed changes"),
        claude(2, "assistant", [{"type": "tool_use", "id": "t1", "name": "AskUserQuestion", "input": asked}]),
        claude(3, "user", [{"type": "tool_result", "tool_use_id": "t1",
                            "content": f'User has answered your questions: "{question}"="the lint passes on main; '
                                       'fix the lint errors". You can now continue with the user\'s answers in mind.'}],
               toolUseResult={"questions": asked["questions"],
                              "answers": {question: "the lint passes on main; fix the lint errors"}}),
        claude(4, "assistant", [{"type": "tool_use", "id": "t2", "name": "ExitPlanMode", "input": {"plan": plan}}]),
        claude(5, "user", [{"type": "tool_result", "tool_use_id": "t2",
                            "content": "User has approved your plan. You can now start coding."}]),
        claude(6, "assistant", [{"type": "tool_use", "id": "t3", "name": "Edit",
                                 "input": {"file_path": "/w/feed/cache.py", "old_string": "", "new_string": "x"}}]),
    ]
    events = transcripts.read(write_jsonl(tmp_path / "session.jsonl", records)).events
    if not any(e.role == "choice" for e in events):
        pytest.skip("this memgit's Claude Code reader does not read AskUserQuestion answers")
    found = [c for c in extract(transcripts.read(tmp_path / "session.jsonl")) if c.kind == "decision"]
    assert [c.title for c in found] == ["The lint passes on main; fix the lint errors",
                                        "Approved plan: Cache the price feed"]
    assert "Chosen: Fix the lint errors\nRejected: Skip the hook (--no-verify)" in found[0].body
    assert found[1].body == ("The user approved this plan.\n- Add a TTL cache in feed/cache.py\n"
                             "- Read through it in feed/client.py")


def codex(kind: str, payload: dict[str, object]) -> dict[str, object]:
    return {"timestamp": "2026-06-01T08:00:00Z", "type": kind, "payload": payload}


def test_codex_request_user_input_and_an_approved_proposed_plan(tmp_path: Path) -> None:
    asked = {"questions": [
        {"header": "Store", "id": "store", "question": "Where should sessions live?",
         "options": [{"label": "Redis (Recommended)", "description": "fast"},
                     {"label": "Postgres", "description": "one database"}]}]}
    answers = {"answers": {"store": {"answers": ["Postgres", "user_note: we already run it; no new services"]}}}
    plan = "<proposed_plan>\n# Session store in Postgres\n\n## Schema\n- sessions table\n\n## Expiry\n- nightly job\n" \
           "</proposed_plan>"
    records = [
        codex("session_meta", {"id": "cx-1", "cwd": "/w", "base_instructions": {"text": "x" * 20000}}),
        codex("event_msg", {"type": "user_message", "message": "plan the session store"}),
        codex("response_item", {"type": "function_call", "name": "request_user_input", "call_id": "c1",
                                "arguments": json.dumps(asked)}),
        codex("response_item", {"type": "function_call_output", "call_id": "c1", "output": json.dumps(answers)}),
        codex("response_item", {"type": "message", "role": "assistant",
                                "content": [{"type": "output_text", "text": plan}]}),
        codex("event_msg", {"type": "user_message", "message": "Implement the plan."}),
    ]
    path = write_jsonl(tmp_path / "rollout.jsonl", records)
    if not any(e.role == "choice" for e in transcripts.read(path).events):
        pytest.skip("this memgit's Codex reader does not read request_user_input answers")
    found = [c for c in extract(transcripts.read(path)) if c.kind == "decision"]
    assert [c.title for c in found] == ["We already run it; no new services",
                                        "Approved plan: Session store in Postgres"]
    assert found[0].body == ("Question: Where should sessions live?\nChosen: Postgres\nRejected: Redis\n"
                             "The user's note: we already run it; no new services")
    assert found[1].body == "The user approved this plan.\n- Schema\n- Expiry" and found[1].evidence == (5, 6)


def test_odd_events_do_not_break_the_rules() -> None:
    odd = [Event(1, "choice", "C++ (Recommended)", target="", options=("C++ (Recommended)", "", "  ", "Rust")),
           Event(2, "choice", "用 PostgreSQL", target="数据库用哪个？", options=("PostgreSQL", "MySQL")),
           Event(3, "choice", "x" * 5000, target="Why?", options=()),
           Event(4, "plan", "```\ncode only\n```"),
           Event(5, "plan", "   "),
           user(6, "ok"),
           Event(7, "plan", "no headings, just one line of plan"),
           user(8, "yes"),
           user(9, "rename"),
           user(10, "/mv"),
           user(11, "")]
    found = decisions(odd)
    assert [c.evidence for c in found] == [(1,), (2,), (7, 8)]  # one long word says nothing
    assert found[0].body == "Chosen: C++\nRejected: Rust" and found[1].title.startswith("PostgreSQL — ")
    assert all(len(c.title) <= 100 for c in found)
