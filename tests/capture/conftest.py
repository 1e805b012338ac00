"""The capture tests' shared fixture: a memloom home that holds one memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.seed import remember


@pytest.fixture
def seeded_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    remember(home, {"text": "The acme deploy script lives in tools/deploy.sh"})
    return home
