"""The shells' seams: the CLI package's one-way registration, the stdlib-only leaves
(daemon record, validation text, capture jobs), and no import cycle through a shell."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memloom
from memloom import daemon_record
from memloom.daemon_record import (
    daemon_file,
    is_loopback,
    read_daemon,
    remove_daemon_record,
    write_daemon_record,
)
from memloom.error_text import describe_validation

SRC = Path(memloom.__file__).parent


def _loaded_after(code: str) -> list[str]:
    """Which of numpy/pydantic/the engine a fresh interpreter has loaded after ``code``."""
    probe = (
        f"{code}\nimport sys\n"
        "print([m for m in ('numpy', 'pydantic', 'memloom.engine') if m in sys.modules])"
    )
    res = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(res.stdout.strip().splitlines()[-1].replace("'", '"'))


@pytest.mark.parametrize(
    "module",
    [
        "memloom.cli",
        "memloom.daemon_record",
        "memloom.error_text",
        "memloom.capture.jobs",
        "memloom.capture.queues",
    ],
)
def test_loading_stays_light(module):
    # `memloom hook …` is dispatched through these; they must not pull in numpy or pydantic.
    assert _loaded_after(f"import {module}") == []


def test_the_hook_fast_path_imports_no_numpy_or_pydantic(tmp_path):
    code = (
        "import io, sys\n"
        "sys.stdin = io.StringIO('{}')\n"
        "from memloom._entry import main\n"
        "try:\n"
        f"    main(['--home', {str(tmp_path)!r}, 'hook', 'notify'])\n"
        "except SystemExit:\n"
        "    pass"
    )
    assert _loaded_after(code) == []


def _imports(path: Path) -> list[str]:
    """Every module a file imports, at top level or inside functions."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return names


def test_command_modules_never_import_the_cli_package():
    """One-way registration: ``cli/__init__`` adds the command modules, never the reverse."""
    commands = [
        p for p in (SRC / "cli").glob("*.py") if p.name not in ("__init__.py", "__main__.py")
    ]
    assert {p.stem for p in commands} >= {"_common", "memories", "conflicts", "team", "backup"}
    for path in commands:
        for name in _imports(path):
            if name == "memloom.cli" or name.startswith("memloom.cli."):
                assert name.startswith("memloom.cli._common"), f"{path.name} imports {name}"


def test_python_dash_m_memloom_cli_is_the_cli(tmp_path):
    env = {**os.environ, "MEMLOOM_HOME": str(tmp_path)}
    direct = subprocess.run(
        [sys.executable, "-m", "memloom.cli", "conflicts", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    entry = subprocess.run(
        [sys.executable, "-m", "memloom._entry", "conflicts", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert direct.returncode == entry.returncode == 0
    assert direct.stdout == entry.stdout
    assert "resolve" in direct.stdout


# ---------------------------------------------------------------- the daemon record


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LocalHost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_the_daemon_record_round_trips_and_a_stale_one_is_removed(tmp_path):
    assert read_daemon(tmp_path) is None
    record = {"pid": os.getpid(), "url": "http://127.0.0.1:4319"}
    path = write_daemon_record(tmp_path, record)
    assert path == daemon_file(tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert read_daemon(tmp_path) == record
    remove_daemon_record(tmp_path, os.getpid() + 1)  # someone else's: left alone
    assert path.exists()
    remove_daemon_record(tmp_path, os.getpid())
    assert not path.exists()

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    write_daemon_record(tmp_path, {"pid": dead.pid})
    assert read_daemon(tmp_path) is None
    assert not path.exists()
    assert daemon_record.stop_daemon(tmp_path) is None


@pytest.mark.security
def test_a_record_whose_pid_is_another_users_process_is_not_our_daemon(tmp_path):
    """A crashed daemon's pid reused by another user's process: not ours (it is not
    signalled, and nothing is sent to its port)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to start a process as another user (CI runs as root)")
    other = subprocess.Popen(["sleep", "30"], user=65534, group=65534, extra_groups=[])
    try:
        write_daemon_record(tmp_path, {"pid": other.pid, "url": "http://127.0.0.1:4319"})
        assert read_daemon(tmp_path) is None
        assert daemon_record.stop_daemon(tmp_path) is None
        assert other.poll() is None  # never signalled
    finally:
        other.kill()
        other.wait()


# ---------------------------------------------------------------- validation text


def test_describe_validation_is_one_line_per_error():
    errors = [
        {"loc": ("body", "entries", 0, "text"), "msg": "Field required"},
        {"loc": ("query", "limit"), "msg": "Value error, too big"},
        {"loc": (), "msg": "Value error, say something"},
    ]
    assert describe_validation(errors) == (
        "body.entries.0.text: Field required; query.limit: too big; say something"
    )
    assert describe_validation(errors, hide=("body", "query", "path"), limit=2) == (
        "entries.0.text: Field required; limit: too big"
    )
    assert describe_validation([], empty="invalid request") == "invalid request"


def test_cli_mcp_and_http_format_a_pydantic_error_alike():
    from pydantic import BaseModel, ValidationError, field_validator

    from memloom.cli._common import error_message
    from memloom.mcp import _one_line  # the MCP module's own formatter

    class Entry(BaseModel):
        text: str
        sensitivity: int

        @field_validator("text")
        @classmethod
        def _not_blank(cls, v: str) -> str:
            if not v.strip():
                raise ValueError("text is blank")
            return v

    with pytest.raises(ValidationError) as info:
        Entry(text=" ", sensitivity="high")
    expected = describe_validation(info.value.errors())
    assert expected.startswith("text: text is blank; sensitivity: ")
    assert error_message(info.value) == expected
    assert _one_line(info.value) == expected


# ---------------------------------------------------------------- the import graph


SHELLS = ("memloom.cli", "memloom.server", "memloom.mcp", "memloom.capture", "memloom.status")


def test_no_import_cycle_runs_through_a_shell():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("memloom", include_external_packages=False, cache_dir=None)
    for module in sorted(graph.modules):
        if not module.startswith(SHELLS) and module != "memloom.daemon_record":
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            assert back is None, f"cycle: {module} -> {' -> '.join(back or ())}"
