"""``usable_cores`` reads the affinity mask, not the machine's count; ``idle_cores``
leaves out the cores other tasks are running on."""

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


def test_idle_cores_leaves_out_the_ones_other_tasks_run_on(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(cores, "usable_cores", lambda: 2)
    loadavg = tmp_path / "loadavg"
    monkeypatch.setattr(cores, "LOADAVG", str(loadavg))
    loadavg.write_text("0.41 0.30 0.22 1/311 4242\n")  # only the caller runs
    assert cores.idle_cores() == 2
    loadavg.write_text("2.95 2.10 1.20 3/311 4242\n")  # two busy processes beside it
    assert cores.idle_cores() == 1
    loadavg.write_text("9.00 9.00 9.00 12/311 4242\n")
    assert cores.idle_cores() == 1


def test_without_proc_the_load_average_stands_in(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(cores, "usable_cores", lambda: 4)
    monkeypatch.setattr(cores, "LOADAVG", str(tmp_path / "absent"))
    monkeypatch.setattr(os, "getloadavg", lambda: (2.2, 1.0, 1.0))
    assert cores.idle_cores() == 3
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert cores.idle_cores() == 4


def test_a_line_that_is_not_a_loadavg_is_refused() -> None:
    assert cores.running_tasks("0.52 0.58 0.59 3/467 1234") == 3
    with pytest.raises(ValueError):
        cores.running_tasks("garbage")
    with pytest.raises(ValueError):
        cores.running_tasks("0.1 0.2 0.3 x/467 1")
