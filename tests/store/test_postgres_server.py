"""The test-suite's PostgreSQL server (tests/support/postgres.py) is real,
has pgvector, hands each test its own empty database and listens on loopback
only."""

from __future__ import annotations

import socket

import psycopg
import pytest

from tests.support.postgres import TestServer

#: Filled by the first of the two "fresh database" tests, read by the second.
_seen: dict[str, str] = {}


def test_server_version_is_at_least_16(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        version = int(conn.execute("SHOW server_version_num").fetchone()[0])
    assert version >= 160000


def test_vector_extension_is_installed_in_the_fresh_database(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        row = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        assert row is not None
        distance = conn.execute("SELECT '[1,0,0]'::vector <=> '[0,1,0]'::vector").fetchone()[0]
    assert distance == pytest.approx(1.0)


def _user_tables(conn: psycopg.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT tablename FROM pg_tables"
        " WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
    ).fetchall()
    return [r[0] for r in rows]


@pytest.mark.parametrize("turn", [1, 2])
def test_each_test_gets_its_own_empty_database(pg_url: str, turn: int) -> None:
    with psycopg.connect(pg_url) as conn:
        name = conn.execute("SELECT current_database()").fetchone()[0]
        assert _user_tables(conn) == []
        conn.execute("CREATE TABLE left_behind (id int)")
    assert name not in _seen.values()
    _seen[str(turn)] = name
    if turn == 2:
        assert _seen["1"] != _seen["2"]
        # The first test's database was dropped after it.
        with psycopg.connect(pg_url) as conn:
            gone = conn.execute(
                "SELECT count(*) FROM pg_database WHERE datname = %s", (_seen["1"],)
            ).fetchone()[0]
        assert gone == 0


def test_listens_on_loopback_only(postgres_server: TestServer, pg_url: str) -> None:
    if postgres_server.embedded is None:
        pytest.skip("MEMLOOM_TEST_DATABASE_URL: listening addresses are that server's business")
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone()[0] == "127.0.0.1"
        assert conn.execute("SELECT inet_server_addr()::text").fetchone()[0] == "127.0.0.1/32"
    port = postgres_server.embedded.port
    assert pg_url.startswith(f"postgresql://postgres@127.0.0.1:{port}/")
    # The kernel's own list of listening sockets: only 127.0.0.1 has the port.
    listening = _listening_addresses(port)
    if listening is not None:
        assert listening == {"127.0.0.1"}
    # Other loopback addresses (IPv6 included) are refused.
    for family, address in ((socket.AF_INET, "127.0.0.2"), (socket.AF_INET6, "::1")):
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:  # no IPv6 here
            continue
        with sock:
            sock.settimeout(1)
            try:
                refused = sock.connect_ex((address, port)) != 0
            except OSError:
                refused = True
        assert refused, f"the test server answers on {address}:{port}"


def _listening_addresses(port: int) -> set[str] | None:
    """Local addresses of the TCP sockets listening on ``port``, from
    /proc/net/tcp{,6}; None where there is no /proc."""
    found: set[str] = set()
    for name, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            with open(name) as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            if width == 8:
                return None
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            addr_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(addr_hex)
            # /proc prints each 32-bit word in host (little-endian) order.
            words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            found.add(socket.inet_ntop(socket.AF_INET if width == 8 else socket.AF_INET6, words))
    return found
