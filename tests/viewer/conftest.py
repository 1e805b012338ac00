"""Headless Chromium (the Debian binary, through Playwright) against a live ``memloom serve``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class PageProblems(list):
    """Console errors and uncaught exceptions seen by a page (CSP violations land here)."""

    def __init__(self) -> None:
        super().__init__()
        self.allowed: tuple[str, ...] = ()

    def unexpected(self) -> list[str]:
        return [p for p in self if not any(a in p for a in self.allowed)]


@pytest.fixture
def problems() -> PageProblems:
    return PageProblems()


@pytest.fixture
def make_page(chromium, problems) -> Iterator[Any]:
    """A fresh browser context (own sessionStorage) per page, 1280×800."""
    contexts = []

    def make(base_url: str) -> Any:
        context = chromium.new_context(viewport={"width": 1280, "height": 800}, base_url=base_url)
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.new_page()
        page.on(
            "console",
            lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
        )
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        return page

    yield make
    for context in contexts:
        context.close()
    assert not problems.unexpected(), problems.unexpected()
