"""Who may call memloom's daemon: its API token, where it comes from, and the daemon's proof.

Loopback is not a trust boundary: web pages in the user's browser and other users
of the machine reach 127.0.0.1 too. So the daemon serves only whoever holds its
token, the way Jupyter Server does:

* ``MEMLOOM_API_TOKEN`` (the environment: never argv, which ``ps`` shows), else
* a token file named by ``MEMLOOM_API_TOKEN_FILE`` or ``[server] token_file`` in
  ``config.toml``, else
* ``<data folder>/api-token``, created on the daemon's first start with 32 random
  bytes, readable by its user only.

The hooks, the CLI and ``memloom ui`` read the same token. Before a hook sends a
prompt (and the token) it checks the process on the daemon's port knows the token
(:func:`proof`: an HMAC of a fresh challenge), so a process that took the port
after a crash learns nothing.

Standard library only, and light: the hooks import it on every prompt.
"""

from __future__ import annotations

import os
import stat

from memloom.errors import ConfigError

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = [
    "CHALLENGE_HEADER",
    "PROOF_HEADER",
    "TOKEN_FILE",
    "TokenSource",
    "configured_token_file",
    "ensure_token",
    "find_token",
    "new_challenge",
    "proof",
    "proof_matches",
]

#: The token file's name inside the data folder.
TOKEN_FILE = "api-token"
#: ``GET /health`` with this header answers with :data:`PROOF_HEADER`.
CHALLENGE_HEADER = "x-memloom-challenge"
PROOF_HEADER = "x-memloom-proof"
#: Tokens are printable ASCII without spaces (they travel in a header), at most this long.
MAX_TOKEN_CHARS = 512


class TokenSource:
    """The token a daemon serves with, and where it came from: ``"env"``
    (``MEMLOOM_API_TOKEN``), ``"file"`` (a configured token file) or ``"home"``
    (``<home>/api-token``); ``path`` is the file, None for ``"env"``."""

    __slots__ = ("origin", "path", "token")

    def __init__(self, token: str, origin: str, path: Path | None) -> None:
        self.token = token
        self.origin = origin
        self.path = path

    def __repr__(self) -> str:  # never the secret
        return f"TokenSource(origin={self.origin!r}, path={self.path!r})"


def configured_token_file(home: Path, raw: dict[str, Any] | None) -> Path | None:
    """``MEMLOOM_API_TOKEN_FILE``, else ``[server] token_file`` (relative: to ``home``)."""
    from pathlib import Path

    named = os.environ.get("MEMLOOM_API_TOKEN_FILE")
    if not named:
        server = (raw or {}).get("server", {})
        named = server.get("token_file") if isinstance(server, dict) else None
        if named is not None and not isinstance(named, str):
            raise ConfigError(f"[server] token_file must be a path, not {named!r}")
    if not named:
        return None
    path = Path(named).expanduser()
    return path if path.is_absolute() else home / path


def _check_token(token: str, where: str) -> str:
    token = token.strip()
    if not 0 < len(token) <= MAX_TOKEN_CHARS or not all(0x21 <= ord(c) <= 0x7E for c in token):
        raise ConfigError(
            f"the API token in {where} must be 1-{MAX_TOKEN_CHARS} printable ASCII characters "
            "without spaces"
        )
    return token


def read_token_file(path: Path) -> str:
    """The token in ``path``. Like OpenSSH with a private key, a file another user owns
    or that group or others can read is refused: anyone who can read it is the owner."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ConfigError(f"cannot read the API token file {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"the API token file {path} is not a regular file")
        if st.st_uid != os.geteuid():
            raise ConfigError(f"the API token file {path} belongs to another user")
        if st.st_mode & 0o077:
            raise ConfigError(
                f"the API token file {path} can be read by others (mode "
                f"{stat.S_IMODE(st.st_mode):04o}); make it private: chmod 600 {path}"
            )
        data = os.read(fd, MAX_TOKEN_CHARS + 2)
    finally:
        os.close(fd)
    return _check_token(data.decode("ascii", "replace"), str(path))


def find_token(home: Path, raw: dict[str, Any] | None = None) -> TokenSource | None:
    """The daemon's token as a client (a hook, the CLI) finds it; None when there is none
    yet (no daemon ever started here). Never creates one."""
    env = os.environ.get("MEMLOOM_API_TOKEN")
    if env:
        return TokenSource(_check_token(env, "MEMLOOM_API_TOKEN"), "env", None)
    configured = configured_token_file(home, raw)
    if configured is not None:
        return TokenSource(read_token_file(configured), "file", configured)
    path = home / TOKEN_FILE
    if not os.path.lexists(path):
        return None
    return TokenSource(read_token_file(path), "home", path)


def ensure_token(home: Path, raw: dict[str, Any] | None = None) -> TokenSource:
    """The daemon's token: :func:`find_token`'s, else a new random one written to
    ``<home>/api-token`` (mode 0600, created exclusively: two daemons starting at
    once agree on one)."""
    found = find_token(home, raw)
    if found is not None:
        return found
    import secrets

    path = home / TOKEN_FILE
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:  # another process made it first: use that one
        return TokenSource(read_token_file(path), "home", path)
    except OSError as exc:
        raise ConfigError(f"cannot create the API token file {path}: {exc.strerror}") from None
    try:
        os.write(fd, (token + "\n").encode("ascii"))
    finally:
        os.close(fd)
    return TokenSource(token, "home", path)


def new_challenge() -> str:
    """A fresh random challenge for :func:`proof` (hex)."""
    return os.urandom(16).hex()


def proof(token: str, challenge: str) -> str:
    """What only a holder of ``token`` can answer to ``challenge``: an HMAC-SHA256 (hex)."""
    import hashlib
    import hmac

    return hmac.new(
        token.encode(), b"memloom-daemon-proof:" + challenge.encode(), hashlib.sha256
    ).hexdigest()


def proof_matches(token: str, challenge: str, answer: str) -> bool:
    import hmac

    return hmac.compare_digest(proof(token, challenge), answer)
