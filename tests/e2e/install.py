"""The pinned agent CLIs, installed reproducibly for the end-to-end suite.

npm agents: ``tests/e2e/package.json`` pins exact versions and
``package-lock.json`` every dependency; ``npm ci`` installs them into
``<repo>/.e2e/npm`` (ignored by git), once per lock file (a stamp holds the lock's
hash). Aider: ``tests/e2e/aider-requirements.txt`` pins ``aider-chat`` into its own
virtual environment, ``<repo>/.e2e/aider``. npm's and pip's own caches make a
re-install in a fresh clone of the same machine cost seconds.

A registry that cannot be reached fails the suite with what failed and how to
retry: the suite is never skipped for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ROOT = Path(os.environ.get("MEMLOOM_E2E_DIR") or REPO / ".e2e")
NPM_FILES = ("package.json", "package-lock.json")
AIDER_REQUIREMENTS = HERE / "aider-requirements.txt"
#: Installs are slow on a busy two-core machine; a registry that answers slower
#: than this is reported, not waited on forever.
INSTALL_TIMEOUT_S = 900


class InstallError(RuntimeError):
    """An agent could not be installed: the message says what failed and how to retry."""


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.read_bytes())
    return h.hexdigest()


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    try:
        proc = subprocess.run(
            cmd,
            cwd=str(cwd),
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
            env={**os.environ, "npm_config_update_notifier": "false"},
        )
    except subprocess.TimeoutExpired as exc:
        raise InstallError(
            f"{what}: no answer within {INSTALL_TIMEOUT_S} s (is the package registry slow "
            f"or unreachable?); run again, or install by hand: {' '.join(cmd)} in {cwd}"
        ) from exc
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout)[-2000:]
        raise InstallError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")


def npm_bin() -> Path:
    """``node_modules/.bin`` of the pinned npm agents, installed if need be."""
    dest = ROOT / "npm"
    stamp = dest / ".installed"
    want = _digest(*(HERE / name for name in NPM_FILES))
    if stamp.exists() and stamp.read_text() == want and (dest / "node_modules").is_dir():
        return dest / "node_modules" / ".bin"
    if shutil.which("npm") is None:
        raise InstallError("npm is not on PATH: the end-to-end suite needs Node.js and npm")
    dest.mkdir(parents=True, exist_ok=True)
    for name in NPM_FILES:
        shutil.copyfile(HERE / name, dest / name)
    # ``npm install`` from the lock, not ``npm ci``: Qwen Code names optional
    # per-platform packages that were never published (@teddyzhu/clipboard-darwin-*),
    # which npm cannot write into a lock and ``npm ci`` then rejects as "out of sync".
    # Every package the lock holds is installed at its locked version and integrity;
    # ``--no-save`` keeps the lock as committed, and the pins are checked below.
    _run(
        ["npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefer-offline"],
        dest,
        "installing the pinned agent CLIs from the npm registry",
    )
    _check_pins(dest)
    stamp.write_text(want)
    return dest / "node_modules" / ".bin"


def _check_pins(dest: Path) -> None:
    """Every agent in package.json is installed at exactly its pinned version."""
    pins = json.loads((HERE / "package.json").read_text())["dependencies"]
    for name, version in pins.items():
        manifest = dest / "node_modules" / name / "package.json"
        try:
            got = json.loads(manifest.read_text())["version"]
        except (OSError, ValueError, KeyError) as exc:
            raise InstallError(f"{name} is not installed in {dest}: {exc}") from exc
        if got != version:
            raise InstallError(f"{name} {got} installed, {version} pinned (tests/e2e/package.json)")


def aider_bin() -> Path:
    """The pinned Aider's executable, in a virtual environment of its own."""
    dest = ROOT / "aider"
    stamp = dest / ".installed"
    want = _digest(AIDER_REQUIREMENTS)
    exe = dest / "bin" / "aider"
    if stamp.exists() and stamp.read_text() == want and exe.exists():
        return exe
    if dest.exists():
        shutil.rmtree(dest)
    venv.EnvBuilder(with_pip=True).create(dest)
    _run(
        [
            str(dest / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            # Compiling every module of ~100 packages costs 16 s of a 44 s install;
            # Aider's first run compiles the ones it imports.
            "--no-compile",
            "-r",
            str(AIDER_REQUIREMENTS),
        ],
        dest,
        "installing the pinned Aider from PyPI",
    )
    stamp.write_text(want)
    return exe


if __name__ == "__main__":  # python -m tests.e2e.install: install everything now
    print(npm_bin())
    if "--aider" in sys.argv:
        print(aider_bin())
