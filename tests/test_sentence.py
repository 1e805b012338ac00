"""memloom.sentence: where a statement's verb phrase begins (issue 40)."""

from __future__ import annotations

import pytest

from memloom.claims import claim
from memloom.sentence import choice_verb, is_scope_word, main_verb, same_scope_group, verb_form


def verb_of(text: str) -> str | None:
    c = claim(text)
    i = main_verb(c.tokens, [k in ("word", "neg") for k in c.kinds])
    return None if i is None else c.tokens[i]


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("The frontend uses pnpm", "uses"),
        ("Unit tests run on every push", "run"),  # a plural subject, then its verb
        ("The orders table is partitioned by month", "is"),  # "orders" after "the": a noun
        ("Run the tests with pytest -x", "run"),  # an imperative
        ("Use pnpm in this monorepo", "use"),
        ("Test coverage must stay above 80%", "must"),  # a base form that is a noun
        ("Uploads to the billing API are limited to 10 MB", "are"),  # -s first: a noun
        ("Deploys go out on Tuesday", "go"),
        ("Failed jobs are retried twice", "are"),  # -ed first: an adjective
        ("The build logs are kept for a week", "are"),
        ("Tests must not hit the network", "must"),
        ("Always rebase before merging", "rebase"),  # adverbs are passed over
        ("The API doesn't cache responses", "¬"),  # a negated verb phrase
        ("Package manager: pnpm", None),  # no verb at all
    ],
)
def test_the_main_verb(text, verb):
    assert verb_of(text) == verb


def test_verb_forms_are_inflected_by_rule():
    for word in ("uses", "used", "using", "deploys", "retries", "retried", "mapped", "built"):
        assert verb_form(word), word
    for word in ("frontend", "table", "pnpm"):
        assert not verb_form(word), word


def test_choice_verbs_and_scope_words():
    assert choice_verb("uses") and choice_verb("prefers") and choice_verb("pinned")
    assert not choice_verb("restart") and not choice_verb("owns")
    assert is_scope_word("staging") and is_scope_word("frontend") and is_scope_word("admins")
    assert same_scope_group(["staging"], ["production"])
    assert same_scope_group(["unit"], ["integration"])
    assert not same_scope_group(["staging"], ["pnpm"])
    assert not same_scope_group([], ["staging"])
