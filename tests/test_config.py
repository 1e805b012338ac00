"""Settings that decide where the store is and whom it acts for."""

from __future__ import annotations

import pytest

from memloom.config import load_settings, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://u:s3cret@db:5432/x?sslmode=require",
            "postgresql://u:***@db:5432/x?sslmode=require",
        ),
        (
            "postgresql://u@db/x?password=s3cret&sslmode=require",
            "postgresql://u@db/x?password=***&sslmode=require",
        ),
        ("postgresql://db/x", "postgresql://db/x"),
        ("/home/me/.memloom/memloom.db", "/home/me/.memloom/memloom.db"),
    ],
)
def test_database_urls_are_shown_without_passwords(url, shown):
    assert redact_url(url) == shown


def test_owner_and_shared_scopes_from_the_environment_or_config(tmp_path, monkeypatch):
    (tmp_path / "config.toml").write_text('owner = "carol"\nshared = ["team", "ops"]\n')
    s = load_settings(tmp_path, "postgresql://db/x")
    assert (s.owner, s.shared, s.is_postgres, s.sqlite_path) == (
        "carol",
        ("team", "ops"),
        True,
        None,
    )
    monkeypatch.setenv("MEMLOOM_OWNER", "dave")
    monkeypatch.setenv("MEMLOOM_SHARED", "team, , qa")
    s = load_settings(tmp_path)
    assert (s.owner, s.shared, s.is_postgres) == ("dave", ("team", "qa"), False)
