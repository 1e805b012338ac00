"""Gemini CLI 0.61.0 only: what a resumed session keeps of memloom's context.

Gemini leaves every user message that starts with ``<hook_context>`` out of a
resumed session's history, and headless it puts SessionStart context in front of
the typed prompt. memloom therefore gives Gemini its digest with the first prompt
(BeforeAgent, after the typed text): resumed, the model still has the first prompt,
the digest and the memory, each once, and memloom does not give them again.
"""

from __future__ import annotations

import pytest

from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Sandbox
from tests.e2e.test_agents import FACT, PINNED, QUESTION, answered, connected

pytestmark = pytest.mark.skipif("gemini" not in DRIVERS, reason="no Gemini driver")


def test_a_resumed_session_keeps_the_first_prompt_and_memloom_s_context_once(sandbox: Sandbox):
    gemini = DRIVERS["gemini"]
    connected(gemini, sandbox)
    sandbox.save(FACT)
    sandbox.save(PINNED, pin=True)
    answered(gemini.run(sandbox, QUESTION))
    again = gemini.run(sandbox, "and which one in production?", resume=True)
    answered(again)
    history = again.requests[-1].text
    assert history.count(QUESTION) == 1, "the first prompt left the resumed history"
    assert history.count("5433") == 1 and history.count(PINNED) == 1
