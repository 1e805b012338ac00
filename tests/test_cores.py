"""``usable_cores``: the affinity mask, not the machine's count."""

from __future__ import annotations

import os

import pytest

from memloom import cores


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux affinity")
def test_usable_cores_honours_the_affinity_mask(monkeypatch) -> None:
    assert cores.usable_cores() == len(os.sched_getaffinity(0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    assert cores.usable_cores() == 1


def test_without_affinity_the_cpu_count_is_used(monkeypatch) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert cores.usable_cores() == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert cores.usable_cores() == 6
