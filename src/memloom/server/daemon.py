"""The long-running ``memloom serve`` process: the API, a decay schedule, the capture worker.

It writes ``$MEMLOOM_HOME/daemon.json`` (pid, address) so the CLI and the hooks
can find it, refuses to start twice, and on SIGTERM/SIGINT lets the worker
finish or abandon its current chunk cleanly (the ledger only ever records
finished chunks) before it closes the store.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import memloom
from memloom.daemon_record import (
    is_loopback,
    reachable_url,
    read_daemon,
    remove_daemon_record,
    write_daemon_record,
)
from memloom.engine import Memloom
from memloom.errors import DaemonError

log = logging.getLogger("memloom.daemon")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4319


class Services:
    """Background work of the daemon, started and stopped with the app."""

    def __init__(
        self,
        engine: Memloom,
        home: Path,
        *,
        decay_interval: float = 3600.0,
        capture: bool = True,
        sweep_interval: float = 1800.0,
    ) -> None:
        self.engine = engine
        self.home = home
        self.decay_interval = decay_interval
        #: How often every agent's session folders are swept for sessions no hook queued.
        self.sweep_interval = sweep_interval
        self.capture = capture
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self.started_at = time.time()
        self.decay_runs = 0
        self.last_decay: dict[str, Any] | None = None
        self.worker_state: dict[str, Any] = {"last_run": None, "last_error": None, "jobs_done": 0}

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        self._stop.clear()
        self._threads = [threading.Thread(target=self._decay_loop, name="memloom-decay")]
        if self.capture:
            self._threads.append(
                threading.Thread(target=self._capture_loop, name="memloom-capture")
            )
        for t in self._threads:
            t.daemon = True
            t.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout=30)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "started_at": self.started_at,
            "decay": {
                "interval_s": self.decay_interval,
                "runs": self.decay_runs,
                "last": self.last_decay,
            },
            "capture": {**self.worker_state, "queued": self._queue_length()},
        }

    # ---------------------------------------------------------------- decay

    def _decay_loop(self) -> None:
        while not self._stop.wait(self.decay_interval):
            try:
                result = self.engine.decay()
                self.decay_runs += 1
                self.last_decay = {"at": time.time(), **result.model_dump()}
            except Exception as exc:  # the next pass tries again; the API stays up
                log.exception("decay pass failed")
                self.last_decay = {"at": time.time(), "error": str(exc)}

    # ---------------------------------------------------------------- capture

    def _queue_length(self) -> int | None:
        from memloom.capture.queues import open_queue

        try:
            q = open_queue(self.home, self.engine.settings)
            try:
                return q.pending()
            finally:
                q.close()
        except Exception as exc:  # status still answers; the queue file is unreadable
            log.debug("capture queue unreadable: %s", exc)
            return None

    def notify(self, payload: dict[str, Any]) -> dict[str, Any]:
        from memloom.agents import DEFAULT_AGENT
        from memloom.capture.notify import accept_notification

        agent = payload.get("agent") or DEFAULT_AGENT
        result = accept_notification(self.home, payload, agent=agent)
        if result.get("queued"):
            self._wake.set()
        return result

    #: How often the idle capture loop looks at the queue: the hooks only queue a
    #: session (no request to the daemon, which would cost every hook a round trip).
    POLL_SECONDS = 2.0

    def _wait_for_work(self, longest: float = 60.0) -> None:
        """Until a job is queued (seen within POLL_SECONDS), a wake-up (POST
        /v1/capture/notify, stop), or ``longest`` seconds."""
        from memloom.capture.queues import open_queue

        deadline = time.monotonic() + longest
        try:
            queue = open_queue(self.home, self.engine.settings)
        except Exception as exc:  # the queue is unreadable: fall back to the timer
            log.debug("capture queue unreadable: %s", exc)
            self._wake.wait(timeout=longest)
            return
        try:
            while not self._stop.is_set() and time.monotonic() < deadline:
                if self._wake.wait(timeout=self.POLL_SECONDS):
                    return
                if queue.pending():
                    return
        finally:
            queue.close()

    def _capture_loop(self) -> None:
        from memloom.capture.worker import CaptureWorker

        worker = CaptureWorker(self.engine, self.home, should_stop=self._stop.is_set)
        next_sweep = 0.0  # at start-up, then every sweep_interval
        while not self._stop.is_set():
            if time.monotonic() >= next_sweep:
                next_sweep = time.monotonic() + self.sweep_interval
                try:
                    worker.sweep()
                except Exception as exc:
                    log.exception("sweep failed")
                    self.worker_state["last_error"] = str(exc)
            try:
                done = worker.drain()
                self.worker_state.update(worker.state())
                self.worker_state["jobs_done"] += done
            except Exception as exc:  # logged and shown in status; the loop carries on
                log.exception("capture worker failed")
                self.worker_state["last_error"] = str(exc)
            self._wait_for_work()
            self._wake.clear()


class _Server:
    """uvicorn's server, with SIGTERM/SIGINT ending it gracefully and the process exiting 0.

    (uvicorn re-raises the signal after shutting down, which would skip our
    clean-up and make a clean stop look like a crash.)
    """

    def __new__(cls, config: Any) -> Any:
        import contextlib

        import uvicorn

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Any:
                def handle(signum: int, frame: Any) -> None:
                    self.should_exit = True

                previous = {
                    sig: signal.signal(sig, handle) for sig in (signal.SIGTERM, signal.SIGINT)
                }
                try:
                    yield
                finally:
                    for sig, handler in previous.items():
                        signal.signal(sig, handler)

        return Server(config)


def viewer_link(url: str, token: str) -> str:
    """The viewer's address with the token in its ``#fragment``: a browser never sends
    a fragment to a server, so the token reaches no log; the page reads it and drops it."""
    from urllib.parse import quote

    return f"{url}/#token={quote(token, safe='')}"


def curl_line(url: str, where: str) -> str:
    """A ``curl`` call to paste, as the Distill guide writes its calls (``-d``) with the
    token added: the shell reads it from ``where`` (its file, or ``MEMLOOM_API_TOKEN``)
    when the line runs, so the line holds no token (it may land in logs and scrollback)."""
    import shlex

    if where == "MEMLOOM_API_TOKEN":
        secret = "$MEMLOOM_API_TOKEN"
    else:
        secret = f"$(cat {shlex.quote(where)})"
    body = '{"query": "how do I run the app locally?"}'
    return f"curl -H \"Authorization: Bearer {secret}\" {url}/v1/memory/recall -d '{body}'"


def serve(
    home: str | os.PathLike[str] | None = None,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token_file: str | os.PathLike[str] | None = None,
    decay_interval: float | None = None,
) -> None:
    """Run the daemon in the foreground until SIGTERM/SIGINT, serving the holder of its
    token only (``memloom.access``: ``MEMLOOM_API_TOKEN``, ``token_file``, a configured
    token file, else ``<home>/api-token``, made on the first start)."""
    import sys

    import uvicorn

    from memloom.access import ensure_token, read_token_file
    from memloom.config import allowed_hosts, load_settings
    from memloom.errors import ConfigError
    from memloom.guard import DEFAULT_MAX_BODY
    from memloom.server.app import create_app

    settings = load_settings(home)
    existing = read_daemon(settings.home)
    if existing is not None:
        raise DaemonError(
            f"memloom is already serving {existing.get('url')} (pid {existing['pid']}); "
            "stop it with: memloom stop"
        )
    if decay_interval is None:
        decay_interval = float(os.environ.get("MEMLOOM_DECAY_INTERVAL", "3600"))
    try:
        # The data folder holds the token, the record and the queue, whatever the store.
        settings.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        if token_file is not None:
            path = Path(token_file).expanduser().absolute()
            secret, explicit, where = read_token_file(path), True, str(path)
        else:
            source = ensure_token(settings.home, settings.raw)
            secret, explicit = source.token, source.origin != "home"
            where = str(source.path) if source.path is not None else "MEMLOOM_API_TOKEN"
        hosts = allowed_hosts(settings.raw)
    except (ConfigError, OSError) as exc:
        raise DaemonError(str(exc)) from exc

    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise DaemonError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    actual_port = sock.getsockname()[1]

    engine = memloom.open(settings=settings)
    try:
        tokens = engine.has_tokens()
        if not is_loopback(host) and not (explicit or tokens):
            raise DaemonError(
                f"refusing to listen on {host} with the generated token: set your own "
                "(MEMLOOM_API_TOKEN, --token-file, or [server] token_file in config.toml) "
                "or create API tokens on a shared store (memloom tokens create); every "
                "request then needs 'Authorization: Bearer <token>'"
            )
        engine.embedder.embed_query("warm up")  # the first prompt-recall should not pay for it
        from memloom.capture.budget import sweep_interval

        services = Services(
            engine,
            settings.home,
            decay_interval=decay_interval,
            sweep_interval=sweep_interval(settings.raw),
        )
        max_body = int(os.environ.get("MEMLOOM_MAX_BODY_BYTES", DEFAULT_MAX_BODY))
        app = create_app(
            engine,
            token=secret,
            host=host,
            allowed_hosts=hosts,
            services=services,
            max_body=max_body,
        )
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        url = f"http://{shown}:{actual_port}"
        record = {
            "pid": os.getpid(),
            "host": host,
            "port": actual_port,
            "url": url,
            "token_required": True,
            "token_file": where if where != "MEMLOOM_API_TOKEN" else None,
            "started_at": time.time(),
            "version": memloom.__version__,
        }
        write_daemon_record(settings.home, record)
        log.info("memloom serving %s", url)
        browse = reachable_url(url)
        sys.stderr.write(
            f"memloom: serving {url} (token: {where})\n"
            f"memloom: viewer: {viewer_link(browse, secret)}\n"
            f"memloom: try: {curl_line(browse, where)}\n"
        )
        sys.stderr.flush()
        config = uvicorn.Config(
            app,
            log_level=os.environ.get("MEMLOOM_LOG_LEVEL", "warning"),
            lifespan="on",
            timeout_graceful_shutdown=20,
        )
        from memloom.detect.logfilter import install as redact_logs

        logging.basicConfig(format="memloom: %(levelname)s %(name)s: %(message)s")
        redact_logs()  # after uvicorn.Config has set up its handlers
        server = _Server(config)
        try:
            server.run(sockets=[sock])
        finally:
            try:
                remove_daemon_record(settings.home, os.getpid())
            except (OSError, ValueError) as exc:  # already gone or replaced: nothing to undo
                log.debug("daemon record not removed: %s", exc)
    finally:
        engine.close()
        sock.close()
