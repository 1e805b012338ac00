"""The table of tools and their credential options (`memloom.detect.tools`, issue 42):
every row well formed, and each rule's priority in the engine."""

from __future__ import annotations

from memloom.detect import Detector
from memloom.detect.engine import PRIO_GENERIC, PRIO_STRUCT, PRIO_TOOL
from memloom.detect.tools import NEW_RULES, OLD_RULES, PLAIN_KEYS, TOOLS

FORMS = {"", "pass:", "%", ",", ":", "conn", "conn:", "kv", "kv*", "kvs", "conninfo", "token"}


def test_rows_are_well_formed() -> None:
    assert len(TOOLS) >= 100
    for name, rows in TOOLS.items():
        assert name == name.lower() and " " not in name, name
        for row in rows:
            assert row.rule in OLD_RULES + NEW_RULES, (name, row.rule)
            assert row.options or row.position, name
            assert row.form in FORMS, (name, row.form)
            for opt, how in row.options.items():
                assert opt and how.bind and set(how.bind) <= set("ngec"), (name, opt)
                assert how.form in FORMS, (name, opt, how.form)
            if row.position_with[0]:
                assert row.needs, name


def test_rule_priorities(det: Detector) -> None:
    """Rules named before issue 42 keep their rank; a tool's new rule names a span only
    where no `NAME=value` rule found it, so no earlier finding is renamed."""
    prio = det._prio
    for rule in OLD_RULES:
        assert prio[rule] == PRIO_STRUCT, rule
    for rule in NEW_RULES:
        assert prio[rule] == PRIO_TOOL < PRIO_GENERIC, rule


def test_plain_keys_name_no_secret() -> None:
    assert {"username", "host", "port", "ttl"} <= PLAIN_KEYS
    assert not {"password", "token", "secret", "key"} & PLAIN_KEYS
