"""What ``memloom serve`` writes to its log has been through redaction."""

from __future__ import annotations

import logging
import time

from memloom.detect.logfilter import RedactingFilter
from tests.server.conftest import start_daemon, stop

# Assembled at run time so the source holds no literal secret.
TOKEN = "ghp_" + "Zq8rT4vW1xY6bN3mK9pL2sD5fG7hJ0aQeRtU"


def test_access_and_error_lines_are_redacted(tmp_path):
    d = start_daemon(tmp_path / "home", tmp_path / "claude", env={"MEMLOOM_LOG_LEVEL": "info"})
    try:
        with d.client() as api:
            assert api.get("/v1/memories", params={"source": TOKEN}).status_code == 200
            assert api.get(f"/v1/memories/{TOKEN}").status_code == 404
    finally:
        stop(d)
    d.process.wait(timeout=30)
    time.sleep(0.2)  # the drain thread reads the last lines
    log = d.log
    assert "GET /v1/memories" in log  # the access log was on: the test can fail
    assert TOKEN not in log
    assert "[redacted:github" in log


def test_filter_redacts_messages_arguments_and_tracebacks():
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    handler = Keep()
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("memloom.test.logfilter")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("token %s rejected", TOKEN)
        try:
            raise ValueError(f"bad key {TOKEN}")
        except ValueError:
            logger.exception("while storing")
        logger.warning("nothing to hide here")
    finally:
        logger.removeHandler(handler)
    assert all(TOKEN not in r for r in records)
    assert "[redacted:" in records[0] and "ValueError: bad key [redacted:" in records[1]
    assert records[2] == "nothing to hide here"
