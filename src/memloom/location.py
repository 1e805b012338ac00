"""Where memloom's data is: the data folder, its ``config.toml`` as read, the store.

What the agents' hooks need of the settings, and what :func:`memloom.config.load_settings`
builds on. Standard library only and without dataclasses: a hook process runs this on
every prompt, and defining the settings' dataclasses (and importing ``dataclasses``)
cost it ~20 ms.
"""

from __future__ import annotations

import os

from memloom.errors import ConfigError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (~4 ms)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = [
    "DEFAULT_HOME",
    "Location",
    "home_folder",
    "locate",
    "read_config",
    "resolve_home",
    "working_folder",
]

DEFAULT_HOME = "~/.memloom"


def home_folder(home: str | os.PathLike[str] | None = None) -> str:
    """The data folder, absolute: ``home``, else ``$MEMLOOM_HOME``, else ``~/.memloom``.
    ``os.path`` only (pathlib is imported where a ``Path`` is made): the session-end
    hook finds its folder with it before it forks, having loaded nothing else
    (``memloom._entry``)."""
    if home is None:
        home = os.environ.get("MEMLOOM_HOME") or DEFAULT_HOME
    return os.path.realpath(os.path.expanduser(home))


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """:func:`home_folder` as a ``Path``."""
    from pathlib import Path

    return Path(home_folder(home))


def read_config(home: Path) -> dict[str, Any]:
    """``<home>/config.toml`` as read (``{}`` without one)."""
    path = home / "config.toml"
    if not path.exists():
        return {}
    import tomllib  # only when there is a file: the hooks mostly run without one

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def sqlite_file(url: str) -> Path | None:
    """The SQLite file a store URL names, or None when the store is not SQLite."""
    from pathlib import Path

    if is_postgres_url(url):
        return None
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///") :])
    return Path(url)


class Location:
    """The data folder, its config as read, the store's URL and the owner this
    process acts for (``MEMLOOM_OWNER`` or ``owner``)."""

    __slots__ = ("database_url", "home", "owner", "raw")

    def __init__(self, home: Path, raw: dict[str, Any], database_url: str, owner: str | None):
        self.home = home
        self.raw = raw
        self.database_url = database_url
        self.owner = owner

    def __repr__(self) -> str:
        return f"Location(home={self.home!r}, postgres={self.is_postgres})"

    @property
    def is_postgres(self) -> bool:
        return is_postgres_url(self.database_url)

    @property
    def sqlite_path(self) -> Path | None:
        return sqlite_file(self.database_url)


def locate(home: str | os.PathLike[str] | None = None, database_url: str | None = None) -> Location:
    """Where the store is: ``database_url``, else ``MEMLOOM_DATABASE_URL``, else
    ``database_url`` in config.toml, else ``<home>/memloom.db``."""
    home_path = resolve_home(home)
    raw = read_config(home_path)
    url = database_url or os.environ.get("MEMLOOM_DATABASE_URL") or raw.get("database_url")
    owner = os.environ.get("MEMLOOM_OWNER") or raw.get("owner") or None
    return Location(
        home_path, raw, str(url or home_path / "memloom.db"), str(owner) if owner else None
    )


def working_folder() -> str | None:
    """The folder this process runs in; None when it was deleted or moved away under
    it (``os.getcwd()`` fails): then nothing there is anchored or checked."""
    try:
        return os.getcwd()
    except OSError:
        return None
