"""The gitleaks-derived corpus (tests/fixtures/secrets): recall and false-positive floors.

Scoring follows the corpus README: a TP line counts when its secret value no longer
appears in the redacted line; an FP line counts when the redactor changes it at all.
"""

from __future__ import annotations

import pathlib

import pytest

from memloom.detect import Detector


def _rows(path: pathlib.Path) -> list[list[str]]:
    with open(path, encoding="utf-8") as fh:
        return [line.rstrip("\n").split("\t") for line in fh]


@pytest.fixture(scope="module")
def tp_rows(fixtures_dir: pathlib.Path) -> list[list[str]]:
    rows = _rows(fixtures_dir / "secrets_tp_values.tsv")
    assert rows[0] == ["rule_id", "secret", "line"]
    return rows[1:]


def test_corpus_copy_is_complete(fixtures_dir: pathlib.Path, tp_rows: list[list[str]]) -> None:
    assert len(tp_rows) == 5505
    assert len({r[0] for r in tp_rows}) == 216
    assert len(_rows(fixtures_dir / "secrets_fp_strict.txt")) == 248
    assert len(_rows(fixtures_dir / "secrets_fp.txt")) == 318
    assert "Zachary Rice" in (fixtures_dir / "LICENSE").read_text()


def test_tp_recall_at_least_97_percent(det: Detector, tp_rows: list[list[str]]) -> None:
    missed = [(rule, line) for rule, secret, line in tp_rows if secret in det.redact(line)[0]]
    recall = 1 - len(missed) / len(tp_rows)
    assert recall >= 0.97, f"recall {recall:.2%}; first misses: {missed[:5]}"


def test_tp_lines_classify_as_credentials(det: Detector, tp_rows: list[list[str]]) -> None:
    levels = [det.max_level(line) for _, _, line in tp_rows]
    assert sum(lv == 3 for lv in levels) / len(levels) >= 0.97


def test_strict_fp_at_most_3_percent(det: Detector, fixtures_dir: pathlib.Path) -> None:
    rows = _rows(fixtures_dir / "secrets_fp_strict.txt")
    changed = [(rule, line) for rule, line in rows if det.redact(line)[0] != line]
    rate = len(changed) / len(rows)
    assert rate <= 0.03, f"strict FP {rate:.2%}: {changed}"


def test_redaction_is_idempotent_on_corpus(
    det: Detector, tp_rows: list[list[str]], fixtures_dir: pathlib.Path
) -> None:
    lines = [line for _, _, line in tp_rows] + [
        r[1] for r in _rows(fixtures_dir / "secrets_fp.txt")
    ]
    for line in lines:
        once, hits = det.redact(line)
        assert det.redact(once) == (once, []), line
        for h in hits:
            assert 0 <= h.start < h.end <= len(line)
