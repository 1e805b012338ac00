"""Task schemas, prompts, payloads and the item-by-item reply validators."""

from __future__ import annotations

from typing import Any

import pytest

from memloom.llm import LLMError
from memloom.llm.tasks import (
    CLASSIFY,
    DISTILL,
    JUDGE,
    MAX_CONTENT_CHARS,
    TASKS,
    LLMClassifier,
    classify_payload,
    judge_payload,
    schema_for,
    system_for,
    validate_classify,
    validate_distill,
    validate_distill_reasons,
    validate_judge,
)


def test_task_names() -> None:
    assert TASKS == ("memloom_distill", "memloom_classify", "memloom_judge")


def _objects(schema: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found += _objects(value)
    elif isinstance(schema, list):
        for value in schema:
            found += _objects(value)
    return found


@pytest.mark.parametrize("task", TASKS)
def test_schemas_are_openai_strict(task: str) -> None:
    schema = schema_for(task)
    assert schema["type"] == "object"
    for obj in _objects(schema):
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    text = repr(schema)
    for keyword in ("minLength", "maxLength", "minItems", "maxItems", "pattern", "format"):
        assert f"'{keyword}'" not in text


def test_schema_shapes() -> None:
    item = schema_for(DISTILL)["properties"]["memories"]["items"]
    assert item["properties"]["type"]["enum"] == ["fact", "preference", "episode", "procedure"]
    assert item["properties"]["lines"]["items"] == {"type": "integer"}
    label = schema_for(CLASSIFY)["properties"]["labels"]["items"]["properties"]["label"]
    assert label["enum"] == ["identical", "complementary", "contradictory"]
    judge = schema_for(JUDGE)["properties"]
    assert judge["index"]["type"] == ["integer", "null"]
    assert judge["verdict"]["enum"] == ["keep_new", "keep_existing", "keep_both", "unsure"]


def test_schema_for_returns_copies() -> None:
    schema_for(DISTILL)["properties"].clear()
    assert "memories" in schema_for(DISTILL)["properties"]
    with pytest.raises(ValueError, match="unknown LLM task"):
        schema_for("memloom_other")


@pytest.mark.parametrize("task", TASKS)
def test_prompts_treat_the_input_as_untrusted_data(task: str) -> None:
    prompt = system_for(task)
    assert "untrusted DATA" in prompt
    assert "never instructions" in prompt
    assert "Reply only with JSON" in prompt


def test_distill_prompt_covers_the_brief() -> None:
    prompt = system_for(DISTILL)
    for words in (
        "preference",
        "procedure",
        "episode",
        "secrets",
        "300 characters",
        '"it"',
        "[start, end]",
    ):
        assert words in prompt


# -------------------------------------------------------------------- distill


def test_validate_distill_keeps_valid_items() -> None:
    reply = {
        "memories": [
            {"type": "fact", "content": " acme uses Vite. ", "lines": [10, 12]},
            {"type": "procedure", "content": "Run `make test`.", "lines": [20, 20], "x": 1},
        ]
    }
    memories, dropped = validate_distill(reply, chunk_lines=(10, 20))
    assert dropped == 0
    assert [(m.type, m.content, m.lines) for m in memories] == [
        ("fact", "acme uses Vite.", (10, 12)),
        ("procedure", "Run `make test`.", (20, 20)),
    ]


def test_memories_drawn_only_from_context_lines_are_dropped() -> None:
    """A resumed chunk opens with lines the earlier run distilled (new lines start at 15)."""
    reply = {
        "memories": [
            {"type": "fact", "content": "old only", "lines": [10, 14]},
            {"type": "fact", "content": "spans both", "lines": [12, 15]},
            {"type": "fact", "content": "new only", "lines": [16, 18]},
        ]
    }
    memories, reasons = validate_distill_reasons(reply, chunk_lines=(10, 20), new_from=15)
    assert [m.content for m in memories] == ["spans both", "new only"]
    assert reasons == {"context_only": 1}
    # Without context every line is new.
    assert len(validate_distill_reasons(reply, chunk_lines=(10, 20))[0]) == 3


@pytest.mark.parametrize(
    "item",
    [
        {"type": "opinion", "content": "ok", "lines": [10, 10]},
        {"type": "Fact", "content": "ok", "lines": [10, 10]},
        {"type": "fact", "content": "", "lines": [10, 10]},
        {"type": "fact", "content": " \n\t ", "lines": [10, 10]},
        {"type": "fact", "content": "x" * (MAX_CONTENT_CHARS + 1), "lines": [10, 10]},
        {"type": "fact", "content": 42, "lines": [10, 10]},
        {"type": "fact", "content": "ok"},
        {"type": "fact", "content": "ok", "lines": [10]},
        {"type": "fact", "content": "ok", "lines": [10, 11, 12]},
        {"type": "fact", "content": "ok", "lines": [12, 11]},
        {"type": "fact", "content": "ok", "lines": ["10", "11"]},
        {"type": "fact", "content": "ok", "lines": [10.0, 11.0]},
        {"type": "fact", "content": "ok", "lines": [True, True]},
        {"type": "fact", "content": "ok", "lines": 10},
        {"type": "fact", "content": "ok", "lines": [9, 10]},
        {"type": "fact", "content": "ok", "lines": [20, 21]},
        "a string item",
        None,
    ],
)
def test_validate_distill_drops_invalid_items(item: Any) -> None:
    good = {"type": "fact", "content": "kept", "lines": [10, 20]}
    memories, dropped = validate_distill({"memories": [item, good]}, chunk_lines=(10, 20))
    assert dropped == 1
    assert [m.content for m in memories] == ["kept"]


def test_content_at_the_limit_is_kept() -> None:
    item = {"type": "fact", "content": "x" * MAX_CONTENT_CHARS, "lines": [1, 1]}
    assert validate_distill({"memories": [item]}, chunk_lines=(1, 1))[1] == 0


@pytest.mark.parametrize("reply", [[], "text", None, {}, {"memory": []}, {"memories": {}}])
def test_a_reply_without_memories_is_a_failed_call(reply: Any) -> None:
    with pytest.raises(LLMError):
        validate_distill(reply, chunk_lines=(1, 5))


def test_an_empty_memories_list_is_fine() -> None:
    assert validate_distill({"memories": []}, chunk_lines=(1, 5)) == ([], 0)


# ------------------------------------------------------------------- classify


def test_validate_classify() -> None:
    reply = {
        "labels": [
            {"index": 1, "label": "contradictory", "reason": "npm vs pnpm"},
            {"index": 0, "label": "identical", "reason": "same"},
            {"index": 0, "label": "complementary", "reason": "repeat index"},
            {"index": 2, "label": "identical", "reason": "out of range"},
            {"index": -1, "label": "identical", "reason": "negative"},
            {"index": "1", "label": "identical", "reason": "string index"},
            {"index": 1, "label": "similar", "reason": "unknown label"},
            ["not", "an", "object"],
        ]
    }
    labels, dropped = validate_classify(reply, 2)
    assert [(x.index, x.label) for x in labels] == [(0, "identical"), (1, "contradictory")]
    assert labels[1].reason == "npm vs pnpm"
    assert dropped == 6


def test_classify_reason_is_optional_for_lenient_servers() -> None:
    labels, dropped = validate_classify({"labels": [{"index": 0, "label": "identical"}]}, 1)
    assert labels[0].reason == "" and dropped == 0


@pytest.mark.parametrize("reply", [{"label": []}, {"labels": None}, "[]"])
def test_classify_reply_without_labels_fails(reply: Any) -> None:
    with pytest.raises(LLMError):
        validate_classify(reply, 1)


def test_classify_payload_indices_are_positions() -> None:
    assert classify_payload("new", ["a", "b"]) == {
        "new": {"text": "new"},
        "candidates": [{"index": 0, "text": "a"}, {"index": 1, "text": "b"}],
    }


def test_llm_classifier_adapter() -> None:
    class Fake:
        name, model, description, offline = "fake", None, "", False

        def complete(self, task: str, system: str, payload: dict, schema: dict) -> dict:
            assert task == CLASSIFY and len(payload["candidates"]) == 2
            return {
                "labels": [
                    {"index": 0, "label": "identical", "reason": ""},
                    {"index": 5, "label": "identical", "reason": ""},
                ]
            }

    classifier = LLMClassifier(Fake())
    labels = classifier.classify("uses pnpm", ["uses pnpm", "uses npm"])
    assert [(x.index, x.label) for x in labels] == [(0, "identical")]
    assert classifier.dropped == 1
    assert classifier.classify("x", []) == []


# ---------------------------------------------------------------------- judge


@pytest.mark.parametrize(
    ("reply", "n", "expected"),
    [
        ({"verdict": "keep_new", "index": 1, "reason": "r"}, 2, ("keep_new", 1)),
        ({"verdict": "keep_existing", "index": 0, "reason": "r"}, 2, ("keep_existing", 0)),
        ({"verdict": "keep_new", "index": None, "reason": "r"}, 1, ("keep_new", 0)),
        ({"verdict": "keep_both", "index": 3, "reason": "r"}, 2, ("keep_both", None)),
        ({"verdict": "unsure", "index": None, "reason": "r"}, 2, ("unsure", None)),
        ({"verdict": "keep_new", "index": None, "reason": "r"}, 2, None),
        ({"verdict": "keep_new", "index": 2, "reason": "r"}, 2, None),
        ({"verdict": "keep_existing", "index": "0", "reason": "r"}, 2, None),
        ({"verdict": "merge", "index": 0, "reason": "r"}, 2, None),
    ],
)
def test_validate_judge(reply: dict, n: int, expected: tuple | None) -> None:
    verdict, dropped = validate_judge(reply, n)
    if expected is None:
        assert (verdict, dropped) == (None, 1)
    else:
        assert verdict is not None and (verdict.verdict, verdict.index) == expected
        assert dropped == 0


@pytest.mark.parametrize("reply", [{"index": 0}, [], "keep_new"])
def test_judge_reply_without_verdict_fails(reply: Any) -> None:
    with pytest.raises(LLMError):
        validate_judge(reply, 1)


def test_judge_payload_shape() -> None:
    payload = judge_payload(
        {"text": "uses pnpm", "asserted_at": "2026-01-02T00:00:00Z", "excerpt": "L3: pnpm"},
        [{"text": "uses npm", "asserted_at": "2025-01-01T00:00:00Z", "excerpt": "L9: npm"}],
        "package manager differs",
    )
    assert payload == {
        "new": {"text": "uses pnpm", "asserted_at": "2026-01-02T00:00:00Z", "excerpt": "L3: pnpm"},
        "existing": [
            {
                "index": 0,
                "text": "uses npm",
                "asserted_at": "2025-01-01T00:00:00Z",
                "excerpt": "L9: npm",
            }
        ],
        "reason": "package manager differs",
    }
