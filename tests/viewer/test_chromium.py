"""The browser the viewer's tests drive, and what happens without it: a loud failure
that says how to get it, never a skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.viewer.conftest import CHROMIUM_ENV

ROOT = Path(__file__).resolve().parents[2]


def test_the_browser_is_a_real_chromium(chromium):
    page = chromium.new_page()
    try:
        assert page.evaluate("navigator.userAgent").count("Chrome/") == 1
    finally:
        page.close()
    assert chromium.version.split(".")[0].isdigit()


def _pytest(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    probe = f"{Path(__file__).relative_to(ROOT)}::test_the_browser_is_a_real_chromium"
    return subprocess.run(
        # one test, in this process's own pytest (-n 0: no workers, plain output)
        [sys.executable, "-m", "pytest", probe, "-q", "-n", "0", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_without_chromium_the_tests_fail_saying_how_to_get_it(tmp_path):
    missing = {CHROMIUM_ENV: str(tmp_path / "chromium")}
    res = _pytest("-rA", **missing)
    assert res.returncode == 1, res.stdout
    assert "1 error" in res.stdout and "skipped" not in res.stdout
    assert "apt-get install chromium" in res.stdout
    assert f"{CHROMIUM_ENV}={tmp_path / 'chromium'} is not an executable" in res.stdout
    # Leaving them out is a choice made on the command line.
    out = _pytest("-m", "not chromium", **missing)
    assert out.returncode == 5 and "1 deselected" in out.stdout, out.stdout
