"""Headless Chromium (the Debian binary, through Playwright) against a live ``memloom serve``.

Like the PostgreSQL tests, these never skip: without a Chromium they fail, saying how
to get one (``pytest -m 'not chromium'`` leaves them out knowingly)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from playwright import sync_api

#: A Chromium binary of your own, when ``chromium`` is not on PATH.
CHROMIUM_ENV = "MEMLOOM_TEST_CHROMIUM"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def find_chromium() -> str:
    """The Chromium to drive: ``$MEMLOOM_TEST_CHROMIUM``, else ``chromium`` on PATH
    (never a browser Playwright downloads). Raises LookupError saying how to get one."""
    wanted = os.environ.get(CHROMIUM_ENV)
    found = shutil.which(wanted) if wanted else shutil.which("chromium")
    if found is None:
        raise LookupError(
            (f"{CHROMIUM_ENV}={wanted} is not an executable" if wanted else "no `chromium` on PATH")
            + ": the viewer's end-to-end tests need Debian's Chromium: "
            f"`sudo apt-get install chromium` (or set {CHROMIUM_ENV} to a Chromium binary)"
        )
    return found


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    try:
        executable = find_chromium()
    except LookupError as err:
        message = f"{err}; `pytest -m 'not chromium'` leaves them out"
        raise pytest.fail.Exception(message, pytrace=False) from None  # pytest.fail, unchained
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
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
