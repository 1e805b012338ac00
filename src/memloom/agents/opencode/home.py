"""Where OpenCode (and its fork Kilo Code) keep their files: the one definition of each.

* Sessions: the SQLite store ``$XDG_DATA_HOME/opencode/opencode.db`` (default
  ``~/.local/share/opencode/opencode.db``; ``OPENCODE_DB`` names another file), and
  before OpenCode 1.2 JSON files under ``<data>/storage/`` (:data:`LEGACY_DIR`).
* Kilo Code's CLI (``@kilocode/cli``, an OpenCode fork) keeps the same store as
  ``$XDG_DATA_HOME/kilo/kilo.db`` (``KILO_DB`` names another file): the reader
  reads it as it reads OpenCode's (docs/agents.md says what is verified).
* Configuration: ``$XDG_CONFIG_HOME/opencode`` (default ``~/.config/opencode``):
  ``opencode.json`` (or ``opencode.jsonc``) and the ``plugins/`` folder memloom's
  plugin goes into.

Standard library only (the hook fast path imports it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "LEGACY_DIR",
    "PLUGIN_NAME",
    "config_dir",
    "data_home",
    "default_db",
    "is_store_name",
    "legacy_roots",
    "plugin_path",
    "settings_path",
    "stores",
]

#: The store files OpenCode and Kilo Code write in their data folders (``opencode.db``,
#: ``kilo.db``), and those of a release channel's store (``opencode-<channel>.db``,
#: ``kilo-<channel>.db``; channel stores are reported by third parties, UNVERIFIED).
_STORE_NAME_RE = re.compile(r"(?:opencode|kilo)(?:-[A-Za-z0-9._]+)?\.db")
#: ``<data>/storage/{session,message,part}/``: the JSON files of OpenCode before 1.2.
LEGACY_DIR = "storage"
#: memloom's plugin file in ``<config>/plugins/``.
PLUGIN_NAME = "memloom.js"


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _xdg(env: Mapping[str, str] | None, var: str, default: str) -> Path:
    value = _env(env).get(var, "").strip()
    if value and Path(value).is_absolute():
        return Path(value)
    home = _env(env).get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / default


def is_store_name(name: str) -> bool:
    """Whether a file name is that of an OpenCode or Kilo Code store (not its -wal/-shm)."""
    return _STORE_NAME_RE.fullmatch(name) is not None


def data_home(env: Mapping[str, str] | None = None, app: str = "opencode") -> Path:
    """``$XDG_DATA_HOME/<app>`` (default ``~/.local/share/<app>``)."""
    return _xdg(env, "XDG_DATA_HOME", ".local/share") / app


def default_db(env: Mapping[str, str] | None = None) -> Path:
    """OpenCode's store: ``$OPENCODE_DB`` if set, else ``<data>/opencode.db``."""
    configured = _env(env).get("OPENCODE_DB", "").strip()
    return Path(configured).expanduser() if configured else data_home(env) / "opencode.db"


def stores(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every store file to read: OpenCode's (:func:`default_db`), then Kilo Code's
    (``$KILO_DB``, else ``<data>/kilo/kilo.db``), then any channel's store beside them."""
    kilo = _env(env).get("KILO_DB", "").strip()
    named = [
        default_db(env),
        Path(kilo).expanduser() if kilo else data_home(env, "kilo") / "kilo.db",
    ]
    channels = [
        p
        for app in ("opencode", "kilo")
        for p in sorted(data_home(env, app).glob(f"{app}-*.db"))
        if is_store_name(p.name)
    ]
    return list(dict.fromkeys([*named, *channels]))


def legacy_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """The ``storage/`` folders of the JSON layout (OpenCode, then Kilo Code)."""
    return [data_home(env) / LEGACY_DIR, data_home(env, "kilo") / LEGACY_DIR]


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/opencode`` (default ``~/.config/opencode``)."""
    return _xdg(env, "XDG_CONFIG_HOME", ".config") / "opencode"


def settings_path(env: Mapping[str, str] | None = None) -> Path:
    """``opencode.json`` in the config folder, or ``opencode.jsonc`` when only that exists."""
    folder = config_dir(env)
    jsonc = folder / "opencode.jsonc"
    plain = folder / "opencode.json"
    return jsonc if jsonc.exists() and not plain.exists() else plain


def plugin_path(env: Mapping[str, str] | None = None) -> Path:
    """``<config>/plugins/memloom.js``: OpenCode 1.x loads every ``*.js`` there."""
    return config_dir(env) / "plugins" / PLUGIN_NAME
