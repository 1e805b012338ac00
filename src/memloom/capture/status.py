"""``memloom status``: one document describing the whole capture setup."""

from __future__ import annotations

import time
from typing import Any

from memloom.capture.budget import Budget, daily_cap
from memloom.capture.connect import installed_hooks, settings_path
from memloom.capture.queue import open_queue
from memloom.capture.scope import load_scope

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


def capture_summary(home: Any, settings_raw: dict[str, Any]) -> dict[str, Any]:
    """Queue, budget, scope, hooks and the last events: no engine needed."""
    scope = load_scope(home)
    queue = open_queue(home)
    try:
        cap = daily_cap(settings_raw)
        used = Budget(queue, cap).used()
        last_hook = queue.last_event("hook_notify")
        last_fail = queue.last_event(*FAILURE_KINDS)
        pending = queue.pending()
    finally:
        queue.close()

    def event(e: Any) -> dict[str, Any] | None:
        if e is None:
            return None
        return {"kind": e[0], "detail": e[1], "at": e[2], "at_text": _when(e[2])}

    return {
        "scope": {
            "all": scope.all,
            "projects": scope.projects,
            "recall": scope.recall,
            "enabled": scope.enabled,
        },
        "hooks": {**installed_hooks(), "settings": str(settings_path())},
        "capture": {
            "queued": pending,
            "last_hook": event(last_hook),
            "last_failure": event(last_fail),
        },
        "budget": {"used": used, "cap": cap, "paused": used >= cap},
    }


def gather(home_arg: Any = None) -> dict[str, Any]:
    import memloom
    from memloom.config import load_settings
    from memloom.server.daemon import read_daemon

    settings = load_settings(home_arg)
    home = settings.home
    daemon = read_daemon(home)
    scope = load_scope(home)
    queue = open_queue(home, settings)
    try:
        cap = daily_cap(settings.raw)
        budget = Budget(queue, cap)
        used = budget.used()
        last_hook = queue.last_event("hook_notify")
        last_fail = queue.last_event(*FAILURE_KINDS)
        pending = queue.pending()
    finally:
        queue.close()
    with memloom.open(settings=settings) as m:
        imports = m.backend.ledger_stats()
        stats = m.stats()
        llm = m.llm.description
        embedder = m.embedder.fingerprint
    hooks = installed_hooks()
    return {
        "home": str(home),
        "daemon": {
            "running": daemon is not None,
            "url": daemon.get("url") if daemon else None,
            "pid": daemon.get("pid") if daemon else None,
        },
        "hooks": {**hooks, "settings": str(settings_path())},
        "scope": {
            "all": scope.all,
            "projects": scope.projects,
            "recall": scope.recall,
            "enabled": scope.enabled,
        },
        "capture": {
            "queued": pending,
            "last_hook": None
            if last_hook is None
            else {
                "kind": last_hook[0],
                "detail": last_hook[1],
                "at": last_hook[2],
                "at_text": _when(last_hook[2]),
            },
            "last_failure": None
            if last_fail is None
            else {
                "kind": last_fail[0],
                "detail": last_fail[1],
                "at": last_fail[2],
                "at_text": _when(last_fail[2]),
            },
        },
        "budget": {"used": used, "cap": cap, "paused": used >= cap},
        "llm": llm,
        "embedder": embedder,
        "imports": imports,
        "memories": {"total": stats.total_memories, "active": stats.active_count},
    }
