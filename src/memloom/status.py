"""``memloom status`` and the viewer's Activity page: one document describing the
whole capture setup.

It sits above capture and the server (it reads the capture queue, the hooks,
the daemon record and the engine), so neither has to import the other to
describe it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from memloom.capture.budget import Budget, daily_cap
from memloom.capture.connect import installed_hooks, settings_path
from memloom.capture.plugin import plugin_installed
from memloom.capture.queues import open_queue
from memloom.capture.scope import load_scope
from memloom.daemon_record import read_daemon

__all__ = ["FAILURE_KINDS", "agents_summary", "capture_summary", "gather"]

#: Event kinds that count as a failure ("last error" in ``memloom status``).
FAILURE_KINDS = (
    "hook_refused",
    "hook_notify_error",
    "hook_prompt_recall_error",
    "hook_wake_failed",
    "hook_recall_failed",
    "worker_error",
    "budget_paused",
)


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _event(e: tuple[str, str | None, float] | None) -> dict[str, Any] | None:
    if e is None:
        return None
    return {"kind": e[0], "detail": e[1], "at": e[2], "at_text": _when(e[2])}


#: What an adapter's ``installed_hooks`` says besides which hooks are in.
_NOT_HOOKS = ("readable", "feature_disabled")


def agents_summary(
    imports: dict[str, Any] | None = None, native: list[dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """Per agent memloom can read: whether its home exists, which hooks are in (for
    Codex, ``trust``: whether Codex will run each, :meth:`Codex.hook_trust`) and,
    given the ledger's ``imports`` (:meth:`memloom.Memloom.ledger_stats`), how many of
    its sessions were imported, when last, and the newest session still failing; given
    ``native`` (:meth:`memloom.Memloom.native_summary`), the folders of the agent's own
    memory memloom reads, with their files, notes and memories, and when last read."""
    from memloom.agents import agent_names, get_agent

    out: dict[str, dict[str, Any]] = {}
    for name in agent_names():
        agent = get_agent(name)
        try:
            hooks = agent.installed_hooks()
            where: str | None = str(agent.settings_path())
        except Exception as exc:  # an agent without hooks, or settings it cannot read
            hooks, where = {}, None
            if not isinstance(exc, NotImplementedError | OSError | ValueError):
                raise
        out[name] = {
            "source": agent.name,
            "found": agent.found(),
            "home": str(agent.home()) if agent.found() else None,
            "hooks": {k: v for k, v in hooks.items() if k not in _NOT_HOOKS},
            "settings": where,
            "plugin": plugin_installed(name),  # memloom installed as the agent's plugin
        }
        if hooks.get("feature_disabled"):  # Codex: config.toml turns hooks off
            out[name]["hooks_disabled"] = True
        trust = getattr(agent, "hook_trust", None)  # Codex: skips untrusted hooks silently
        if trust is not None and any(out[name]["hooks"].values()):
            try:
                out[name]["trust"] = trust()
            except (OSError, ValueError) as exc:
                out[name]["trust"] = {"error": str(exc)}
        if imports is not None:
            seen = imports.get("agents", {}).get(agent.name) or {
                "sessions": 0,
                "memories": 0,
                "last_import": None,
                "last_error": None,
            }
            last = seen["last_import"]
            out[name]["imports"] = {**seen, "last_import_text": _when(last) if last else None}
        if native is not None and agent.native_memory:
            out[name]["native"] = [
                {**f, "read_at_text": _when(f["read_at"]) if f["read_at"] else None}
                for f in native
                if f["agent"] == agent.name
            ]
    return out


def capture_summary(
    home: Path,
    settings_raw: dict[str, Any],
    settings: Any = None,
    imports: dict[str, Any] | None = None,
    native: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Queue, budget, scope, hooks and the last events: no engine needed.

    ``settings`` picks the queue (SQLite or PostgreSQL); without it they are
    read from ``home``. ``imports`` (the ledger's stats) adds each agent's imports.
    """
    from memloom.capture.background import wait_settled

    wait_settled(home)  # a session-end hook may still be queueing its session
    scope = load_scope(home)
    queue = open_queue(home, settings)
    try:
        cap = daily_cap(settings_raw)
        used = Budget(queue, cap).used()
        last_hook = queue.last_event("hook_notify")
        last_fail = queue.last_event(*FAILURE_KINDS)
        pending = queue.pending()
    finally:
        queue.close()
    return {
        "scope": {
            "all": scope.all,
            "projects": scope.projects,
            "recall": scope.recall,
            "enabled": scope.enabled,
        },
        "hooks": {**installed_hooks(), "settings": str(settings_path())},
        "agents": agents_summary(imports, native),
        "capture": {
            "queued": pending,
            "last_hook": _event(last_hook),
            "last_failure": _event(last_fail),
        },
        "budget": {"used": used, "cap": cap, "paused": used >= cap},
    }


def api_token_file(home: Path, raw: dict[str, Any]) -> str | None:
    """The file holding the daemon's token (``memloom.access``): a configured one, else
    ``<home>/api-token``; None when the token comes from ``MEMLOOM_API_TOKEN``. Named,
    never shown: whoever reads it is the owner."""
    import os

    from memloom.access import TOKEN_FILE, configured_token_file

    if os.environ.get("MEMLOOM_API_TOKEN"):
        return None
    configured = configured_token_file(home, raw)
    return str(configured if configured is not None else home / TOKEN_FILE)


def distiller(settings: Any, llm: Any = None) -> dict[str, Any]:
    """Which LLM distils and why, today's calls through an agent's CLI against their cap,
    and the agent CLIs on this machine (``memloom llm``, ``memloom status``). A choice
    that cannot be used (its CLI gone from PATH) is reported, not raised."""
    from memloom.config import ConfigError, cli_daily_cap
    from memloom.llm import DailyMeter, installed_clis, offline_note, resolve_llm

    error = None
    if llm is None:
        try:
            llm = resolve_llm(config=settings.raw)
        except ConfigError as e:
            error = str(e)
    cap = cli_daily_cap(settings.raw)
    clis = installed_clis()
    offline = bool(getattr(llm, "offline", False))
    return {
        "provider": getattr(llm, "name", None),
        "description": getattr(llm, "description", None),
        "error": error,
        "offline": offline,
        "agent_cli": bool(getattr(llm, "metered", False)),
        "cli_calls": {"used": DailyMeter(settings.home, cap).used(), "cap": cap},
        "installed_clis": [
            {"provider": cli.name, "agent": cli.binary, "label": cli.label, "path": path}
            for cli, path in clis
        ],
        "note": offline_note() if offline else None,
    }


def gather(home_arg: Any = None) -> dict[str, Any]:
    """The ``memloom status --json`` document: daemon, capture, LLM, embedder, counts."""
    import memloom
    from memloom.config import load_settings

    settings = load_settings(home_arg)
    home = settings.home
    daemon = read_daemon(home)
    with memloom.open(settings=settings) as m:
        imports = m.ledger_stats()
        native = m.native_summary()
        stats = m.stats()
        llm = m.llm
        embedder = m.embedder.fingerprint
    summary = capture_summary(home, settings.raw, settings, imports, native)
    return {
        "home": str(home),
        "daemon": {
            "running": daemon is not None,
            "url": daemon.get("url") if daemon else None,
            "pid": daemon.get("pid") if daemon else None,
        },
        "api_token_file": api_token_file(home, settings.raw),
        "hooks": summary["hooks"],
        "agents": summary["agents"],
        "scope": summary["scope"],
        "capture": summary["capture"],
        "budget": summary["budget"],
        "llm": llm.description,
        "distiller": distiller(settings, llm),
        "embedder": embedder,
        "imports": imports,
        "memories": {"total": stats.total_memories, "active": stats.active_count},
    }
