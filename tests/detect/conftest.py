"""Shared fixtures for memloom.detect tests."""

from __future__ import annotations

import pathlib

import pytest

from memloom.detect import Detector

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "secrets"


@pytest.fixture(scope="session")
def det() -> Detector:
    return Detector()


@pytest.fixture(scope="session")
def fixtures_dir() -> pathlib.Path:
    return FIXTURES
