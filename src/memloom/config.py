"""Settings: where memloom keeps its data and which parts it uses.

Precedence, highest first: explicit arguments, environment variables,
``$MEMLOOM_HOME/config.toml``, built-in defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memloom.errors import ConfigError
from memloom.location import is_postgres_url, locate, sqlite_file
from memloom.location import resolve_home as resolve_home  # re-exported


@dataclass(frozen=True)
class DecaySettings:
    """Ages (hours since last reference) at which a memory moves one decay level."""

    summary_after_hours: float = 24.0
    keywords_after_hours: float = 24.0 * 7
    evict_after_hours: float = 24.0 * 30
    #: A memory recalled at least this many times ages at half speed per extra multiple.
    resist_access_count: int = 5


@dataclass(frozen=True)
class EmbedderSettings:
    kind: str = "local"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    dimensions: int | None = None


@dataclass(frozen=True)
class Settings:
    home: Path
    database_url: str
    embedder: EmbedderSettings = field(default_factory=EmbedderSettings)
    decay: DecaySettings = field(default_factory=DecaySettings)
    redact: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    #: Who this process acts for on a shared (PostgreSQL) store: ``MEMLOOM_OWNER`` or
    #: ``owner`` in config.toml. None: the whole store, writing as ``local``.
    owner: str | None = None
    #: Team scopes it may read as well (``MEMLOOM_SHARED``, comma-separated, or ``shared``).
    shared: tuple[str, ...] = ()

    @property
    def is_postgres(self) -> bool:
        return is_postgres_url(self.database_url)

    @property
    def config_path(self) -> Path:
        return self.home / "config.toml"

    @property
    def sqlite_path(self) -> Path | None:
        """The SQLite file, or None when the store is not SQLite."""
        return sqlite_file(self.database_url)


def redact_url(url: str) -> str:
    """A database URL fit to show: any password replaced by ``***``."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is not None:
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    if "password=" in parts.query:  # libpq also takes it as a parameter
        query = "&".join(
            "password=***" if p.startswith("password=") else p for p in parts.query.split("&")
        )
        parts = parts._replace(query=query)
    return urlunsplit(parts)


def allowed_hosts(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """The names besides loopback ones the daemon and MCP over HTTP answer to:
    ``MEMLOOM_ALLOWED_HOSTS`` (comma-separated), else ``[server] allowed_hosts`` in
    config.toml. ``.example.com`` allows a domain and its subdomains. A Host not
    allowed gets 421 (a DNS-rebinding page can only use a name: docs/security.md)."""
    env = os.environ.get("MEMLOOM_ALLOWED_HOSTS")
    if env is not None:
        names: Any = [n.strip() for n in env.split(",") if n.strip()]
    else:
        server = raw.get("server", {})
        names = server.get("allowed_hosts", []) if isinstance(server, dict) else []
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ConfigError(f"[server] allowed_hosts must be a list of host names, not {names!r}")
    bad = [n for n in names if any(c in n for c in "*/ ") or (":" in n and n[0] != "[")]
    if bad:
        raise ConfigError(
            f"allowed hosts are names without ports or wildcards (.example.com for a "
            f"domain): {bad!r}"
        )
    return tuple(names)


def detector_for(settings: Settings) -> Any:
    """The secret/PII detector with ``[redact]`` from config.toml applied."""
    from memloom.detect import DetectConfig, Detector, default_detector

    if not settings.redact:
        return default_detector()
    try:
        return Detector(DetectConfig.from_toml_section(settings.redact))
    except ValueError as exc:
        raise ConfigError(f"[redact] in {settings.config_path}: {exc}") from exc


def _decay_settings(section: dict[str, Any]) -> DecaySettings:
    defaults = DecaySettings()
    values: dict[str, Any] = {}
    for key in ("summary_after_hours", "keywords_after_hours", "evict_after_hours"):
        if key in section:
            value = section[key]
            if not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"[decay] {key} must be a positive number of hours")
            values[key] = float(value)
    if "resist_access_count" in section:
        value = section["resist_access_count"]
        if not isinstance(value, int) or value < 1:
            raise ConfigError("[decay] resist_access_count must be a positive integer")
        values["resist_access_count"] = value
    merged = DecaySettings(**{**defaults.__dict__, **values})
    if not (merged.summary_after_hours <= merged.keywords_after_hours <= merged.evict_after_hours):
        raise ConfigError("[decay] ages must grow: summary <= keywords <= evict")
    return merged


def _embedder_settings(section: dict[str, Any]) -> EmbedderSettings:
    env = os.environ
    kind = env.get("MEMLOOM_EMBEDDER") or section.get("kind") or "local"
    dims_raw = env.get("MEMLOOM_EMBED_DIMENSIONS") or section.get("dimensions")
    try:
        dims = int(dims_raw) if dims_raw else None
    except ValueError as exc:
        raise ConfigError(f"MEMLOOM_EMBED_DIMENSIONS must be an integer, got {dims_raw!r}") from exc
    return EmbedderSettings(
        kind=kind,
        model=env.get("MEMLOOM_EMBED_MODEL") or section.get("model"),
        base_url=env.get("MEMLOOM_EMBED_BASE_URL") or section.get("base_url"),
        api_key=env.get("MEMLOOM_EMBED_API_KEY") or env.get("OPENAI_API_KEY"),
        dimensions=dims,
    )


def load_settings(
    home: str | os.PathLike[str] | None = None, database_url: str | None = None
) -> Settings:
    """Read settings without touching the disk beyond ``config.toml``."""
    where = locate(home, database_url)
    raw = where.raw
    shared_raw = os.environ.get("MEMLOOM_SHARED")
    shared: list[str] = (
        [s.strip() for s in shared_raw.split(",")] if shared_raw else list(raw.get("shared", []))
    )
    return Settings(
        home=where.home,
        database_url=where.database_url,
        embedder=_embedder_settings(raw.get("embedder", {})),
        decay=_decay_settings(raw.get("decay", {})),
        redact=raw.get("redact", {}),
        raw=raw,
        owner=where.owner,
        shared=tuple(str(s) for s in shared if s),
    )


# ------------------------------------------------------------------------- LLM

LLM_PROVIDER_VAR = "MEMLOOM_LLM"
LLM_MODEL_VAR = "MEMLOOM_LLM_MODEL"
LLM_BASE_URL_VAR = "MEMLOOM_LLM_BASE_URL"
LLM_API_KEY_VAR = "MEMLOOM_LLM_API_KEY"
LLM_TIMEOUT_VAR = "MEMLOOM_LLM_TIMEOUT"
OPENAI_API_KEY_VAR = "OPENAI_API_KEY"
ANTHROPIC_API_KEY_VAR = "ANTHROPIC_API_KEY"

#: Environment variables that name an LLM; any of them set means "use an LLM".
LLM_ENVIRONMENT = (LLM_PROVIDER_VAR, LLM_BASE_URL_VAR, OPENAI_API_KEY_VAR, ANTHROPIC_API_KEY_VAR)


@dataclass(frozen=True)
class LLMSettings:
    """What the environment says about the LLM, as given (blank values are None).

    Values are checked when a provider reads them, not here: a variable the
    chosen provider ignores (``MEMLOOM_LLM_TIMEOUT`` for ``offline``, the base
    URL for ``claude-cli``) never causes an error, and errors come in the order
    the provider reads its settings. ``memloom.llm`` maps :attr:`provider` to a
    provider class and auto-detects one from the keys when it is None.
    """

    #: ``MEMLOOM_LLM`` as written (``memloom.llm`` knows the names and aliases), else
    #: ``[llm] provider`` of config.toml (what ``memloom llm use`` writes).
    provider: str | None = None
    model: str | None = None
    #: ``MEMLOOM_LLM_BASE_URL`` unchecked; :attr:`base_url` checks it.
    base_url_raw: str | None = None
    timeout_raw: str | None = None
    #: ``MEMLOOM_LLM_API_KEY``, which wins over the provider's own variable.
    api_key: str | None = None
    openai_api_key: str | None = None
    anthropic_api_key: str | None = None
    #: Where :attr:`provider` came from: ``MEMLOOM_LLM=…`` or ``config.toml [llm] provider``.
    provider_source: str | None = None

    def __repr__(self) -> str:  # never show a key
        keys = [v for v, k in self._keys().items() if k]
        return (
            f"LLMSettings(provider={self.provider!r}, model={self.model!r}, "
            f"base_url={self.base_url_raw!r}, timeout={self.timeout_raw!r}, keys={keys})"
        )

    def _keys(self) -> dict[str, str | None]:
        return {
            LLM_API_KEY_VAR: self.api_key,
            OPENAI_API_KEY_VAR: self.openai_api_key,
            ANTHROPIC_API_KEY_VAR: self.anthropic_api_key,
        }

    def key_for(self, provider_var: str) -> tuple[str | None, str | None]:
        """(key, the variable it came from): ``MEMLOOM_LLM_API_KEY``, then ``provider_var``."""
        keys = self._keys()
        for var in (LLM_API_KEY_VAR, provider_var):
            if keys.get(var):
                return keys[var], var
        return None, None

    @property
    def base_url(self) -> str | None:
        """``MEMLOOM_LLM_BASE_URL`` without its trailing slash; ConfigError if not http(s)."""
        url = self.base_url_raw
        if url is None:
            return None
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"{LLM_BASE_URL_VAR} must be an http(s) URL such as http://localhost:11434/v1, "
                f"not {url!r}"
            )
        return url.rstrip("/")

    def timeout(self, default: float) -> float:
        """``MEMLOOM_LLM_TIMEOUT`` seconds, else ``default``; :class:`ConfigError` if not > 0."""
        raw = self.timeout_raw
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if value <= 0:
            raise ConfigError(
                f"{LLM_TIMEOUT_VAR} must be a positive number of seconds, not {raw!r}"
            )
        return value


def _env_value(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _llm_table(raw: Mapping[str, Any] | None) -> dict[str, str]:
    """config.toml's ``[llm]`` values memloom reads (provider, model, timeout), as text."""
    table = (raw or {}).get("llm", {})
    if not isinstance(table, Mapping):
        raise ConfigError('config.toml: [llm] must be a table (provider = "codex-cli")')
    out = {}
    for key in ("provider", "model", "timeout"):
        value = table.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ConfigError(f"config.toml: [llm] {key} must be a string, not {value!r}")
        if str(value).strip():
            out[key] = str(value).strip()
    return out


def llm_settings(
    env: Mapping[str, str] | None = None, config: Mapping[str, Any] | None = None
) -> LLMSettings:
    """The LLM settings from ``env`` (default ``os.environ``), then config.toml's ``[llm]``
    table (``config``: the parsed file) for what the environment leaves unset; blank
    values count as unset."""
    env = os.environ if env is None else env
    table = _llm_table(config)

    def get(name: str) -> str | None:
        return _env_value(env, name)

    provider, source = get(LLM_PROVIDER_VAR), None
    if provider is not None:
        source = f"{LLM_PROVIDER_VAR}={provider}"
    elif "provider" in table:
        provider, source = table["provider"], f"config.toml [llm] provider = {table['provider']}"
    return LLMSettings(
        provider=provider,
        provider_source=source,
        model=get(LLM_MODEL_VAR) or table.get("model"),
        base_url_raw=get(LLM_BASE_URL_VAR),
        timeout_raw=get(LLM_TIMEOUT_VAR) or table.get("timeout"),
        api_key=get(LLM_API_KEY_VAR),
        openai_api_key=get(OPENAI_API_KEY_VAR),
        anthropic_api_key=get(ANTHROPIC_API_KEY_VAR),
    )


def llm_requested(
    env: Mapping[str, str] | None = None, config: Mapping[str, Any] | None = None
) -> bool:
    """True when the environment or config.toml's ``[llm] provider`` names an LLM (never
    probes for an agent's CLI).

    ``save`` consults the belief pipeline only then; imports resolve a provider
    regardless (``memloom.llm.resolve_llm``). Any non-empty value counts, even
    blanks, as it always has.
    """
    env = os.environ if env is None else env
    return any(env.get(k) for k in LLM_ENVIRONMENT) or "provider" in _llm_table(config)


#: Calls through an agent's CLI (a plan, not an API budget) have a daily cap of their
#: own: ``MEMLOOM_CLI_DAILY_CAP``, else ``[llm] cli_daily_cap``, else this.
CLI_DAILY_CAP_VAR = "MEMLOOM_CLI_DAILY_CAP"
DEFAULT_CLI_DAILY_CAP = 25


def cli_daily_cap(raw: Mapping[str, Any] | None = None) -> int:
    """Today's cap on distillation calls through an agent's CLI (0: none today)."""
    value: Any = os.environ.get(CLI_DAILY_CAP_VAR)
    where = CLI_DAILY_CAP_VAR
    if value is None or not str(value).strip():
        table = (raw or {}).get("llm", {})
        value = table.get("cli_daily_cap") if isinstance(table, Mapping) else None
        where = "config.toml [llm] cli_daily_cap"
    if value is None:
        return DEFAULT_CLI_DAILY_CAP
    try:
        cap = int(str(value).strip())
    except ValueError:
        cap = -1
    if cap < 0 or isinstance(value, bool):
        raise ConfigError(f"{where} must be a whole number of calls (0 or more), not {value!r}")
    return cap


def write_llm_provider(home: str | os.PathLike[str], provider: str | None) -> Path:
    """Set (or, with None, remove) ``[llm] provider`` in ``<home>/config.toml``: what
    ``memloom llm use`` does. The rest of the file keeps its bytes (comments, order);
    the file is replaced atomically, private to its owner, and made if missing."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    path = Path(home) / "config.toml"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as e:
        raise ConfigError(f"{path} is not valid TOML ({e}); fix it, then run this again") from e
    table = doc.get("llm")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: llm must be a table ([llm]), not {type(table).__name__}")
    if provider is None:
        if table is not None and "provider" in table:
            del table["provider"]
            if not table:
                del doc["llm"]
    else:
        if table is None:
            table = tomlkit.table()
            doc["llm"] = table
        table["provider"] = provider
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".config.toml.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    out = tomlkit.dumps(doc)
    if provider is None and out != text:  # the table memloom added goes, and its blank line
        out = out.rstrip("\n") + "\n" if out.strip() else ""
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(out)
    os.replace(tmp, path)
    return path
