"""The offline rule-based distiller: crafted lines and real Claude Code transcripts."""

from __future__ import annotations

from typing import Any

import pytest

from memloom.llm import CLASSIFY, DISTILL, JUDGE, LLMError, OfflineLLM, distill, validate_distill
from memloom.llm.offline import MAX_CHARS, extract_memories
from memloom.llm.tasks import classify, judge, schema_for, system_for

from .transcript_lines import FIXTURES, payload

needs_fixtures = pytest.mark.skipif(not FIXTURES.is_dir(), reason="real transcripts not available")
JSSOUND = FIXTURES / (
    "handgemacht-ai__claude-code-log__test__test_data__real_projects__"
    "-Users-dain-workspace-JSSoundRecorder__7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
)


def chunk(*texts: tuple[str, str], project: str = "/home/u/acme-api") -> dict[str, Any]:
    return {
        "session": {"id": "s1", "project": project, "path": "/p/s1.jsonl"},
        "lines": [{"line": 10 + i, "role": r, "text": t} for i, (r, t) in enumerate(texts)],
    }


def extracted(*texts: tuple[str, str], **kw: Any) -> list[tuple[int, str, str]]:
    items = extract_memories(chunk(*texts), **kw)
    return [(m["lines"][0], m["type"], m["content"]) for m in items]


def test_crafted_statements() -> None:
    got = extracted(
        ("user", "I prefer pnpm over npm for this repo."),
        ("user", "Always run `make lint` before committing."),
        ("user", "Please remember that the staging database is read-only."),
        ("user", "OK, let's go with PostgreSQL for the job queue."),
        ("assistant", "To run the test suite, run `uv run pytest -q` from the repo root."),
        ("user", "We decided to drop Python 3.9 support because of the match statements."),
        ("user", "We use Tailwind and shadcn/ui for the frontend."),
        ("user", "Use httpx instead of requests."),
        ("user", "Remember to bump the version in pyproject.toml when releasing."),
        max_items=20,
    )
    assert got == [
        (10, "preference", "User preference: I prefer pnpm over npm for the acme-api repo."),
        (11, "preference", "User rule: always run `make lint` before committing."),
        (12, "fact", "User note for acme-api: the staging database is read-only."),
        (13, "fact", "Decision for acme-api: go with PostgreSQL for the job queue."),
        (
            14,
            "procedure",
            "In acme-api: To run the test suite, run `uv run pytest -q` from the repo root.",
        ),
        (
            15,
            "fact",
            "Decision for acme-api: drop Python 3.9 support because of the match statements.",
        ),
        (16, "fact", "In acme-api: we use Tailwind and shadcn/ui for the frontend."),
        (17, "preference", "User preference: use httpx instead of requests."),
        (18, "preference", "User rule: bump the version in pyproject.toml when releasing."),
    ]


def test_rules_with_a_condition_and_negations() -> None:
    got = extracted(
        ("user", "When writing tests, always use pytest fixtures instead of setUp methods."),
        ("user", "don't use default exports in TypeScript files"),
        ("user", "Never commit directly to main; open a PR instead."),
        ("user", "Avoid adding new dependencies without asking first."),
    )
    assert [(line, kind) for line, kind, _ in got] == [
        (10, "preference"),
        (11, "preference"),
        (12, "preference"),
        (13, "preference"),
    ]
    assert got[1][2] == "User rule: don't use default exports in TypeScript files."


@pytest.mark.parametrize(
    "text",
    [
        "Can you always run the tests?",
        "Should we always use tabs",
        "Maybe we should always use tabs.",
        "I think we should never use mocks.",
        "Don't change it.",
        "Don't worry about the failing flaky test.",
        "let's use it",
        "let's do that",
        "Never mind!",
        "Hey Claude, I'd like your help with refactoring the timeline filtering.",
        "Please fix these lint errors",
        "Here's the log:\n```\nnpm ERR! always use the cache\n```",
        "    always indent four spaces in this pasted code",
        "the api key is: always-abc123",
        "Always use [redacted:openai_key] for the staging API.",
        "Let's update readme with the working reinstall",
    ],
)
def test_skipped(text: str) -> None:
    assert extracted(("user", text)) == []


def test_assistant_lines_give_procedures_only() -> None:
    got = extracted(
        ("assistant", "Always use the staging database for tests."),
        ("assistant", "Let me run `npm test` to check."),
        ("assistant", "Linting: `ruff check` passes with no issues."),
        ("assistant", "You can now use `act` to test the workflow locally."),
    )
    assert got == [
        (13, "procedure", "In acme-api: You can now use `act` to test the workflow locally."),
    ]


def test_cap_dedupe_and_trim() -> None:
    rules = [("user", f"Always run the check number {i} before pushing.") for i in range(12)]
    rules.append(("user", "Always run the check number 3 before pushing!"))
    rules.append(("user", "Never use " + "very " * 65 + "long names."))
    items = extract_memories(chunk(*rules))
    assert len(items) == 8
    assert len({m["content"] for m in items}) == 8
    assert [m["lines"][0] for m in items] == sorted(m["lines"][0] for m in items)
    long = extract_memories(chunk(rules[-1]))
    assert len(long[0]["content"]) <= MAX_CHARS and long[0]["content"].endswith("…")
    assert len(extract_memories(chunk(*rules), max_items=3)) == 3


def test_remember_note_and_priority() -> None:
    texts = [("user", f"We use tool{i} for task{i}.") for i in range(9)]
    texts.append(("user", "Note that the API server listens on port 8080 in development."))
    items = extract_memories(chunk(*texts))
    assert len(items) == 8
    assert any("port 8080" in m["content"] for m in items)


def test_reply_shape_validates_without_drops() -> None:
    payload = chunk(
        ("user", "Always run `make lint` before committing."),
        ("user", "Let's switch to Ruff for formatting."),
        ("assistant", "Then run `npm run build` to build the site."),
    )
    llm = OfflineLLM()
    reply = llm.complete(DISTILL, system_for(DISTILL), payload, schema_for(DISTILL))
    memories, dropped = validate_distill(reply, chunk_lines=(10, 12))
    assert dropped == 0 and len(memories) == 3
    result = distill(llm, payload)
    assert result.dropped == 0 and [m.type for m in result.memories] == [
        "preference",
        "fact",
        "procedure",
    ]
    assert llm.calls[DISTILL] == 2 and llm.offline and llm.model is None


@needs_fixtures
def test_real_transcript_jssoundrecorder() -> None:
    doc = payload(JSSOUND)
    assert doc["session"]["project"] == "/Users/dain/workspace/JSSoundRecorder"
    result = distill(OfflineLLM(), doc)
    got = [(m.lines[0], m.type, m.content) for m in result.memories]
    assert result.dropped == 0
    assert got == [
        (
            61,
            "procedure",
            "In JSSoundRecorder: Anyone with Node.js (very common for web dev) can just run "
            "`npm install` and `npm start`.",
        ),
        (64, "fact", "Decision for JSSoundRecorder: go with vite."),
        (169, "fact", "Decision for JSSoundRecorder: migrate to AudioWorklet."),
    ]


@needs_fixtures
def test_every_real_session_gives_valid_sensible_items() -> None:
    sessions = [p for p in sorted(FIXTURES.glob("*.jsonl")) if "__agent-" not in p.name]
    total = 0
    for path in sessions:
        doc = payload(path)
        if not doc["lines"]:
            continue
        numbers = [x["line"] for x in doc["lines"]]
        reply = OfflineLLM().complete(DISTILL, "", doc, schema_for(DISTILL))
        memories, dropped = validate_distill(reply, chunk_lines=(min(numbers), max(numbers)))
        assert dropped == 0, path.name
        for m in memories:
            assert len(m.content) <= MAX_CHARS
            assert not m.content.endswith("?")
            assert m.lines[0] in numbers
        assert len(memories) <= 8
        total += len(memories)
    # Conservative: a handful from ~25 real sessions, not one per line.
    assert 3 <= total <= 40


def test_offline_classify_and_judge() -> None:
    llm = OfflineLLM()
    labels, dropped = classify(
        llm,
        "acme uses pnpm for packages",
        ["acme uses pnpm for packages", "acme does not use pnpm for packages", "Deploys on Fly"],
    )
    assert dropped == 0
    assert [x.label for x in labels] == ["identical", "contradictory", "complementary"]
    verdict, dropped = judge(
        llm, {"text": "a", "asserted_at": None, "excerpt": ""}, [{"text": "b"}]
    )
    assert verdict is not None and verdict.verdict == "unsure" and verdict.index is None
    assert llm.calls == {CLASSIFY: 1, JUDGE: 1}


def test_unknown_task() -> None:
    with pytest.raises(LLMError, match="does not know the task"):
        OfflineLLM().complete("memloom_other", "", {}, {})


# Issue 43: questions, headings and narration are never memories, whoever wrote them.
@pytest.mark.parametrize("role", ["user", "assistant"])
@pytest.mark.parametrize(
    "text",
    [
        "The question is: when the subagent runs `git commit`, does the hook fire",
        "The question is: when the subagent runs `git commit` the hook fires twice.",
        "Problem Description: running `npm test` fails on CI with a timeout.",
        "Summary: use `uv run pytest` to run the tests.",
        "## Running the tests with `make test`",
        "Steps to reproduce: run `npm start` and open the page.",
        "Build And Deploy: run `npm run build` first.",
        "To run the tests, use one of these commands:",
        "Let me run `pytest -q` to check the fix.",
        "I'll use `ruff check` on the whole tree.",
        "Now I need to run `npm install` in the frontend.",
        "Looking at the logs, `docker compose up` starts the db first.",
        "First, run `make setup` in a fresh clone.",
        "Great, now run `npm test` again to confirm the fix.",
        "Here's how you run it: `npm run dev`.",
        "Which is better, `uv pip install` or `pip install` for the CI image.",
        "Should I use `pnpm install` or `npm install` here?",
        "Use `uv` (or `pip install -e .` for the tests.",
        "Always run `make lint` before committing, right?",
    ],
)
def test_never_memories(text: str, role: str) -> None:
    assert extracted((role, text)) == []


def test_done_reports_and_rules_leaning_back_are_dropped() -> None:
    assert (
        extracted(("assistant", "Created `CONTRIBUTING.md` so anyone can run `cargo test`.")) == []
    )
    assert extracted(("user", "Do not also set a `role:` parameter.")) == []
    assert extracted(("user", "Do not touch the other two docs in this folder.")) == []
    # Text in another script: the rules are rules of English (a real Gemini CLI reply).
    assert (
        extracted(("assistant", "建立 `CONTRIBUTING.md`：包含 Running Tests (`cargo test`)")) == []
    )


def test_how_to_is_a_procedure_and_what_is_true_is_a_fact() -> None:
    # The first two are real assistant lines (claude-code-log transcripts, MIT licence:
    # tests/fixtures/transcripts/LICENSE).
    got = extracted(
        (
            "assistant",
            "`claude -p` can use WebSearch and Task tools - they're part of the default toolset.",
        ),
        (
            "assistant",
            "The project uses `uv` for packaging with `hatchling` as the build "
            "backend, targeting Python 3.12+.",
        ),
        ("assistant", "To rebuild the docs, run `make docs` from the repo root."),
        ("assistant", "Run `npm run build` before deploying to Netlify."),
        ("assistant", "Anyone with Node.js can just run `npm install` and `npm start`."),
        ("assistant", "Force reinstall: `uv tool upgrade --reinstall mytool` after a change."),
        ("assistant", "The test suite uses `pytest` with the xdist plugin."),
        ("user", "I prefer `pnpm install` over `npm install` in the acme-api repo."),
        max_items=20,
    )
    assert [kind for _, kind, _ in got] == [
        "fact",
        "fact",
        "procedure",
        "procedure",
        "procedure",
        "procedure",
        "fact",
        "preference",
    ]


def test_a_line_wrapped_mid_sentence_is_read_whole() -> None:
    text = (
        "On Windows shells you may need to quote any value that holds `{...}` so the\n"
        "shell leaves the braces alone; run `gh api --help` to see more."
    )
    got = extracted(("assistant", text))
    assert [c for _, _, c in got] == [
        "In acme-api: On Windows shells you may need to quote any value that holds `{...}` "
        "so the shell leaves the braces alone; run `gh api --help` to see more."
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Always open `docs/AGENTS.md` when the",  # cut where the line broke
        "Run `make lint` and then `make test` and",
        "Running `npm run dev` to rebuild on every change.",  # a list item, no verb
        "With one of: `create`, `plan`, `start`.",
        "Create a new function that finds the PR with `gh pr view --json url`.",  # a task step
        "For demos, run `make demo` or read the sections above.",  # points away
        "Update the toolchain with `rustup update` if needed.",  # hedged
        "I'd recommend running `cargo doc` for the API reference.",  # first-person advice
        "The user wants the CLI installable with `uv tool install .` from any folder.",
        "They provide `uv tool upgrade --reinstall` for that.",
    ],
)
def test_fragments_task_steps_and_narration_are_not_memories(text: str) -> None:
    assert extracted(("assistant", text), ("user", text)) == []


def test_stop_what_you_are_doing_is_not_a_rule() -> None:
    assert extracted(("user", "STOP what you are doing and wait for the user to reply.")) == []


def test_read_tool_line_numbers_are_left_out() -> None:
    got = extracted(("assistant", "  15 - Run `make docs` to build the site locally."))
    assert [c for _, _, c in got] == ["In acme-api: Run `make docs` to build the site locally."]


def test_how_to_anywhere_in_the_sentence_is_a_procedure() -> None:
    got = extracted(
        ("assistant", "Uninstall with `uv tool uninstall acme-cli` when you are done."),
        ("assistant", "`uv tool install --force .` - to force a reinstall."),
        ("assistant", "For scripts, use `uv run acme --json` to get machine output."),
        ("assistant", "Ruff enforces 100 columns; run `ruff check .` before committing."),
        ("assistant", '"To upgrade every tool: `uv tool upgrade --all`"'),
        ("assistant", "Lint: `ruff check src tests`"),
        max_items=20,
    )
    assert [kind for _, kind, _ in got] == ["procedure"] * 6


def test_what_is_true_stays_a_fact_and_a_standing_rule_is_a_preference() -> None:
    got = extracted(
        ("assistant", "All tooling runs through `uv` in the acme-api repo."),
        ("assistant", "Type checking: both `mypy` and `pyright` run in `pre-commit`."),
        ("assistant", "`make install` upgrades `pip` and installs the CLI locally."),
        ("assistant", "ALWAYS disable pagers with `git --no-pager log` in scripts."),
        max_items=20,
    )
    assert [kind for _, kind, _ in got] == ["fact", "fact", "fact", "preference"]
