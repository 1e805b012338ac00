"""Whether Codex trusts memloom's hooks: Codex skips an untrusted hook without a word.

Codex (0.169.0) runs a hook from ``hooks.json`` only once the user has trusted it
(``/hooks`` in its TUI) or when a run passes ``--dangerously-bypass-hook-trust``.
Trusting a hook records, in ``config.toml``::

    [hooks.state."<CODEX_HOME>/hooks.json:user_prompt_submit:1:0"]
    trusted_hash = "sha256:…"

The key is the hooks file's path, the event as Codex labels it (snake case), the
index of the matcher group in the event's list and of the handler in the group.
The hash is SHA-256 over the compact JSON, keys sorted, of the handler's
normalised identity (:func:`hook_hash`)::

    {"event_name": "user_prompt_submit",
     "hooks": [{"async": false, "command": "…", "timeout": 5, "type": "command"}]}

(``timeout`` defaults to 600 and is at least 1; ``statusMessage`` and the group's
``matcher`` are included when set.) Any change to the command or timeout changes
the hash, and Codex then treats the hook as *modified* until trusted again; a hook
moved to another index loses its trust. The formula was checked against the
``currentHash`` that Codex 0.169.0's own ``codex app-server`` reports for each
hook (JSON-RPC ``hooks/list``; tests/e2e/test_codex.py), and a run without the
bypass flag fires hooks trusted this way. ``[hooks.state."<key>"] enabled =
false`` turns a hook off whatever its trust.

memloom never writes trust itself: that is the user's decision in Codex.
Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "DISABLED",
    "MODIFIED",
    "TRUSTED",
    "UNTRUSTED",
    "event_label",
    "hook_hash",
    "hook_key",
    "hook_states",
    "memloom_handlers",
    "memloom_trust",
    "state_key",
]

TRUSTED = "trusted"
UNTRUSTED = "untrusted"
#: trusted once, changed since (a new memloom path, a new timeout)
MODIFIED = "modified"
#: ``enabled = false`` in its ``[hooks.state]``
DISABLED = "disabled"
#: Events whose matcher Codex ignores (and leaves out of the hash).
_NO_MATCHER = {"UserPromptSubmit", "Stop"}
DEFAULT_TIMEOUT_S = 600


def event_label(event: str) -> str:
    """``UserPromptSubmit`` -> ``user_prompt_submit``: the event as Codex keys it."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def hook_key(hooks_file: Path, event: str, group: int, handler: int) -> str:
    """The ``[hooks.state]`` key of one handler of ``hooks_file``."""
    return f"{hooks_file}:{event_label(event)}:{group}:{handler}"


def hook_hash(event: str, handler: Mapping[str, Any], matcher: Any = None) -> str:
    """The hash Codex compares with ``trusted_hash`` for one command handler."""
    timeout = handler.get("timeout")
    if not isinstance(timeout, int) or isinstance(timeout, bool):
        timeout = DEFAULT_TIMEOUT_S
    normalised: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": max(timeout, 1),
        "async": handler.get("async") is True,
    }
    if isinstance(handler.get("statusMessage"), str):
        normalised["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_label(event), "hooks": [normalised]}
    if isinstance(matcher, str) and event not in _NO_MATCHER:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def hook_states(config_file: Path) -> dict[str, Mapping[str, Any]]:
    """``[hooks.state]`` of ``config_file``: key -> its table; empty when unreadable."""
    try:
        conf = tomllib.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    hooks = conf.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        return {}
    return {k: v for k, v in state.items() if isinstance(v, dict)}


def _same_file(a: str, b: Path) -> bool:
    try:
        return Path(a).resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def state_key(
    states: Mapping[str, Any], hooks_file: Path, event: str, g: int, h: int
) -> str | None:
    """The key under which ``states`` holds the handler, if any: exactly
    :func:`hook_key`, or the same file under another spelling of its path."""
    exact = hook_key(hooks_file, event, g, h)
    if exact in states:
        return exact
    tail = f":{event_label(event)}:{g}:{h}"
    for key in states:
        if key.endswith(tail) and _same_file(key[: -len(tail)], hooks_file):
            return key
    return None


def memloom_handlers(
    hooks: Mapping[str, Any], is_memloom: Callable[[Any], bool]
) -> Iterator[tuple[str, int, int, str]]:
    """``(event, group index, handler index, hash)`` of each memloom handler in
    ``hooks`` (hooks.json's ``hooks``)."""
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if is_memloom(handler):
                    yield event, g, h, hook_hash(event, handler, group.get("matcher"))


def memloom_trust(
    hooks: Mapping[str, Any],
    hooks_file: Path,
    config_file: Path,
    is_memloom: Callable[[Any], bool],
) -> dict[str, str]:
    """Per event holding a memloom handler in ``hooks`` (hooks.json's ``hooks``), its
    trust: :data:`TRUSTED`, :data:`UNTRUSTED`, :data:`MODIFIED` or :data:`DISABLED`
    (the worst of the event's memloom handlers)."""
    states = hook_states(config_file)
    rank = {TRUSTED: 0, MODIFIED: 1, UNTRUSTED: 2, DISABLED: 3}
    out: dict[str, str] = {}
    for event, g, h, digest in memloom_handlers(hooks, is_memloom):
        key = state_key(states, hooks_file, event, g, h)
        state = states[key] if key is not None else {}
        trusted = state.get("trusted_hash")
        if state.get("enabled") is False:
            status = DISABLED
        elif trusted == digest:
            status = TRUSTED
        else:
            status = MODIFIED if isinstance(trusted, str) else UNTRUSTED
        if rank[status] >= rank.get(out.get(event, TRUSTED), 0):
            out[event] = status
    return out
