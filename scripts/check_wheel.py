"""Check a built memloom wheel on its own, as a user gets it (CI: .ci/run).

    python -m build --outdir DIST .
    python scripts/check_wheel.py DIST/memloom-*.whl --sdist DIST/memloom-*.tar.gz
    python scripts/check_wheel.py WHEEL --contents-only    # the file lists only (seconds)

An editable install reads the package's files from the checkout, so a data file the
wheel leaves out (the MCP handshake's answers, the tokenizer, the viewer's files, the
OpenCode plugin) fails nobody's tests. This script:

1. compares the wheel's (and the sdist's) file list with the checkout: every file of
   ``src/memloom`` (tracked by git) must be in it, LICENSE in the wheel's
   ``.dist-info/licenses/``, and its METADATA's version must be pyproject.toml's;
2. installs the wheel alone (no extras, not editable) in a fresh virtual environment;
3. from a folder outside the checkout, with HOME, MEMLOOM_HOME and XDG_CACHE_HOME in new
   empty folders and no PYTHONPATH, runs what a user runs first:
   - ``memloom --version``;
   - the README's quickstart: the example session (copied out of the checkout) imported
     with the offline extractor, then recalled from (the tokenizer and the model);
   - ``memloom mcp``'s first start in an empty cache folder: ``initialize`` and
     ``tools/list`` over stdin, answered from the shipped answers
     (``memloom/mcp_handshake.json``) with the MCP SDK never imported;
   - ``memloom serve`` on a free port of 127.0.0.1: ``/health``, the viewer's page and
     every file it loads (its scripts' imports followed), ``/v1`` with the token file
     it made (and refused without), then ``memloom stop``;
   - ``memloom connect opencode --all``: the OpenCode plugin written from the package's
     ``plugin.js``.

Every failure is one line naming the file or the command; the exit status is 1 when
there is any. Standard library only: the script needs nothing installed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import tomllib
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "memloom"
EXAMPLE = ROOT / "examples" / "claude-code-session"
QUESTION = "how do I run the app locally?"
#: The protocol version the MCP check asks for (one the shipped answers hold).
MCP_PROTOCOL = "2025-06-18"
#: Modules whose import means the MCP SDK answered, not the shipped answers.
SDK_MODULES = ("mcp", "mcp_types")
#: How long a command may take (a first recall loads the model).
TIMEOUT = 300


class Report:
    """The failures, one line each; what passed is printed as it passes."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def ok(self, what: str) -> None:
        print(f"ok    {what}", flush=True)

    def fail(self, what: str) -> None:
        self.failures.append(what)
        print(f"FAIL  {what}", flush=True)

    def check(self, passed: bool, what: str, why: str = "") -> bool:
        if passed:
            self.ok(what)
        else:
            self.fail(f"{what}: {why}" if why else what)
        return passed


# ------------------------------------------------------------------ the file lists


def project_version(root: Path = ROOT) -> str:
    """``[project] version`` in pyproject.toml: the one place it is written."""
    return str(tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"])


def package_files(root: Path = ROOT) -> list[str]:
    """Every file of the package in the checkout, as its path inside a wheel
    (``memloom/…``): git's tracked files when this is a git checkout, else the folder's
    files less byte code."""
    src = root / "src"
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--", f"src/{PACKAGE}"],
            capture_output=True,
            check=True,
        ).stdout.decode()
        names = [n.removeprefix("src/") for n in listed.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
    if not names:
        names = [
            p.relative_to(src).as_posix()
            for p in (src / PACKAGE).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        ]
    return sorted(names)


def wheel_problems(wheel: Path, root: Path = ROOT) -> list[str]:
    """What the wheel lacks or states wrongly against the checkout: one line each."""
    version = project_version(root)
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = f"{PACKAGE}-{version}.dist-info"
        problems = [
            f"the wheel lacks {name} (src/{name} in the checkout)"
            for name in package_files(root)
            if name not in names
        ]
        license_name = f"{info}/licenses/LICENSE"
        if license_name not in names:
            problems.append(f"the wheel lacks {license_name} (the checkout's LICENSE)")
        elif zf.read(license_name) != (root / "LICENSE").read_bytes():
            problems.append(f"{license_name} differs from the checkout's LICENSE")
        if f"{info}/METADATA" not in names:
            problems.append(f"the wheel lacks {info}/METADATA (pyproject says {version})")
        else:
            metadata = zf.read(f"{info}/METADATA").decode()
            stated = re.search(r"^Version: (\S+)$", metadata, re.M)
            if stated is None or stated.group(1) != version:
                problems.append(
                    f"{info}/METADATA states version "
                    f"{stated.group(1) if stated else 'none'}, pyproject.toml {version}"
                )
        entry = f"{info}/entry_points.txt"
        if entry not in names or "memloom = memloom._entry:main" not in zf.read(entry).decode():
            problems.append(f"{entry} does not name the memloom command (memloom._entry:main)")
    return problems


def sdist_problems(sdist: Path, root: Path = ROOT) -> list[str]:
    """What the sdist (the wheel is built from it) lacks of the checkout."""
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    wanted = ["LICENSE", "README.md", "pyproject.toml"]
    wanted += [f"src/{name}" for name in package_files(root)]
    return [f"the sdist lacks {name}" for name in wanted if name not in names]


# ------------------------------------------------------------------ the fresh install


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a command that must not see the checkout or the user's data:
    no PYTHONPATH, no virtual environment, no memloom or LLM settings."""
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(extra)
    return env


def make_venv(folder: Path, wheel: Path, report: Report) -> Path | None:
    """A fresh virtual environment with the wheel installed alone; its bin folder."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    bin_dir = folder / "bin"
    pip = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}  # index, cache
    pip["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env = clean_env(**pip, HOME=os.environ.get("HOME", "/"))
    res = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    seconds = time.monotonic() - started
    if not report.check(
        res.returncode == 0,
        f"pip install {wheel.name} into a fresh venv ({seconds:.0f} s)",
        tail(res.stderr or res.stdout),
    ):
        return None
    return bin_dir


def tail(text: str, lines: int = 6) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def run(
    bin_dir: Path, args: list[str], env: dict[str, str], cwd: Path, program: str = "memloom"
) -> subprocess.CompletedProcess[str]:
    """``program`` of the venv (its ``memloom`` command, or ``python``) with ``args``."""
    return subprocess.run(
        [str(bin_dir / program), *args],
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def where_installed(bin_dir: Path, env: dict[str, str], cwd: Path) -> Path:
    """The installed package's folder, as the venv's python imports it from ``cwd``."""
    code = "import memloom, os; print(os.path.dirname(memloom.__file__))"
    res = run(bin_dir, ["-c", code], env, cwd, program="python")
    res.check_returncode()
    return Path(res.stdout.strip())


# ------------------------------------------------------------------ the checks


def check_version(bin_dir: Path, env: dict[str, str], cwd: Path, report: Report) -> None:
    want = f"{PACKAGE} {project_version()}"
    for flag in ("--version", "-V"):
        res = run(bin_dir, [flag], env, cwd)
        got = res.stdout.strip()
        report.check(
            res.returncode == 0 and got == want,
            f"memloom {flag} prints {want!r}",
            f"exit {res.returncode}, printed {got!r} {tail(res.stderr)}",
        )


def check_quickstart(bin_dir: Path, env: dict[str, str], work: Path, report: Report) -> None:
    """README's quickstart: import the example session, then recall from it."""
    sessions = work / "claude-code-session"
    shutil.copytree(EXAMPLE, sessions)
    res = run(bin_dir, ["import", "sessions", "--path", str(sessions), "--json"], env, work)
    saved = 0
    if res.returncode == 0:
        saved = json.loads(res.stdout).get("saved", 0)
    if not report.check(
        res.returncode == 0 and saved > 0,
        f"memloom import sessions --path <copy of examples/claude-code-session> ({saved} saved)",
        f"exit {res.returncode} {tail(res.stderr or res.stdout)}",
    ):
        return
    res = run(bin_dir, ["recall", QUESTION, "--json"], env, work)
    found = json.loads(res.stdout).get("memories", []) if res.returncode == 0 else []
    report.check(
        res.returncode == 0 and bool(found) and bool(found[0].get("provenance")),
        f"memloom recall {QUESTION!r} ({len(found)} memories, with their transcript lines)",
        f"exit {res.returncode} {tail(res.stderr or res.stdout)}",
    )


def check_mcp(
    bin_dir: Path, env: dict[str, str], work: Path, installed: Path, report: Report
) -> None:
    """``memloom mcp``'s first start in an empty cache folder answers from the package."""
    cache = work / "mcp-cache"
    cache.mkdir()
    hello = {
        "protocolVersion": MCP_PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "check_wheel", "version": "0"},
    }
    mcp_env = {**env, "XDG_CACHE_HOME": str(cache), "PYTHONPROFILEIMPORTTIME": "1"}
    client = McpClient([str(bin_dir / "memloom"), "mcp"], mcp_env, work)
    try:
        init = client.ask(1, "initialize", hello)
        client.notify("notifications/initialized")
        tools = (client.ask(2, "tools/list") or {}).get("tools") or []
    finally:
        code, stderr = client.close()
    server = (init or {}).get("serverInfo") or {}
    report.check(
        server.get("name") == PACKAGE and server.get("version") == project_version(),
        f"memloom mcp answers initialize (serverInfo {server})",
        f"exit {code} {tail(errors(stderr))}",
    )
    report.check(bool(tools), f"memloom mcp answers tools/list ({len(tools)} tools)")
    loaded = imported(stderr)
    sdk = sorted(m for m in SDK_MODULES if m in loaded)
    what = "memloom mcp's first start answers from memloom/mcp_handshake.json (no MCP SDK loaded)"
    if not sdk and loaded:
        report.ok(what)
        return
    shipped = installed / "mcp_handshake.json"
    why = (
        "memloom/mcp_handshake.json is missing from the install"
        if not shipped.exists()
        else f"its key does not match this install: {shipped_key_mismatch(bin_dir, env, work)}"
    )
    report.fail(f"{what}: the SDK answered ({', '.join(sdk) or 'no import log'}): {why}")


class McpClient:
    """A stdio MCP client as an agent is one: a request, then wait for its answer; the
    server's stdin closed only once everything asked is answered."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        self.readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._drain, daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass  # the server is gone: its answers are missing, which the checks say

    def notify(self, method: str) -> None:
        self.send({"jsonrpc": "2.0", "method": method})

    def ask(self, request_id: int, method: str, params: dict[str, Any] | None = None) -> Any:
        """The result of one request; None when the server never answers it."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if line is None:
                return None
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if isinstance(answer, dict) and answer.get("id") == request_id:
                return answer.get("result")
        return None

    def close(self) -> tuple[int, str]:
        """Close the server's stdin (the client leaves): its exit status and stderr."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        for reader in self.readers:
            reader.join(timeout=10)
        return code, "".join(self.stderr)


def errors(stderr: str) -> str:
    return "\n".join(x for x in stderr.splitlines() if not x.startswith("import time:"))


def imported(stderr: str) -> set[str]:
    """The modules a process imported, from its ``-X importtime`` lines."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def shipped_key_mismatch(bin_dir: Path, env: dict[str, str], cwd: Path) -> str:
    """What differs between the shipped answers' key and the installed code and SDK."""
    probe = (
        "import json\n"
        "from memloom import mcp_stdio as m\n"
        "doc = json.loads(m.SHIPPED.read_text())\n"
        "have = m.shipped_key()\n"
        "print(json.dumps({k: [doc['key'].get(k), have.get(k)]"
        " for k in sorted(set(doc['key']) | set(have)) if doc['key'].get(k) != have.get(k)}))"
    )
    res = run(bin_dir, ["-c", probe], env, cwd, program="python")
    if res.returncode != 0:
        return tail(res.stderr)
    diff = json.loads(res.stdout)
    shown = ", ".join(f"{k} shipped {a} installed {b}" for k, (a, b) in diff.items())
    return shown + " (python scripts/mcp_handshake.py remakes it)" if shown else "no difference"


def http(url: str, token: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, OSError) as exc:  # nothing answers: status 0
        return 0, str(exc).encode()


#: What a page or a module loads: ``src="…"``/``href="…"``, and a script's imports.
PAGE_REFS = re.compile(r"""(?:src|href)=["']([^"'#?]+)["']""")
SCRIPT_REFS = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}/[^"']+)["']""")


def check_serve(bin_dir: Path, env: dict[str, str], work: Path, report: Report) -> None:
    """``memloom serve``: /health, the viewer and every file it loads, /v1 with the token."""
    home = Path(env["MEMLOOM_HOME"])
    log = work / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(bin_dir / "memloom"), "serve", "--host", "127.0.0.1", "--port", "0"],
            env=env,
            cwd=work,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = wait_for_url(home / "daemon.json", proc)
    if url is None:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        said = tail(log.read_text())
        report.fail(f"memloom serve did not start (exit {proc.returncode}): {said}")
        return
    report.ok(f"memloom serve starts ({url}, from daemon.json)")
    try:
        status, body = http(f"{url}/health")
        version = json.loads(body).get("version") if status == 200 else None
        report.check(
            status == 200 and version == project_version(),
            f"GET /health: {status}, version {version}",
        )
        check_viewer(url, report)
        token_file = home / "api-token"
        token = token_file.read_text().strip() if token_file.exists() else ""
        report.check(bool(token), "memloom serve made its token file ($MEMLOOM_HOME/api-token)")
        refused, _ = http(f"{url}/v1/memory/stats")
        allowed, body = http(f"{url}/v1/memory/stats", token)
        report.check(
            refused == 401 and allowed == 200,
            f"GET /v1/memory/stats: {refused} without the token, {allowed} with it",
            tail(body.decode("utf-8", "replace")),
        )
    finally:
        stopped = run(bin_dir, ["stop"], env, work)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        report.check(
            stopped.returncode == 0 and proc.returncode == 0,
            f"memloom stop ends the daemon (its exit status {proc.returncode})",
            tail(stopped.stderr or stopped.stdout) + " " + tail(log.read_text()),
        )


def wait_for_url(record: Path, proc: subprocess.Popen[bytes], seconds: float = 120) -> str | None:
    """The daemon's url once it answers: daemon.json names it before uvicorn listens."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            url = json.loads(record.read_text()).get("url")
        except (OSError, ValueError):
            url = None
        if isinstance(url, str) and url.startswith("http://") and http(f"{url}/health")[0]:
            return url
        time.sleep(0.2)
    return None


def check_viewer(url: str, report: Report) -> None:
    """GET / and every file it loads, following the scripts' imports: each path under
    ``/viewer/`` is a file of ``memloom/viewer/static/``."""
    status, body = http(f"{url}/")
    page = body.decode("utf-8", "replace")
    if not report.check(
        status == 200 and "<script" in page,
        f"GET /: {status} (memloom/viewer/static/index.html)",
    ):
        return
    pending = [("/" + ref.lstrip("/"), "index.html") for ref in PAGE_REFS.findall(page)]
    seen: set[str] = set()
    while pending:
        path, named_by = pending.pop(0)
        if path in seen or not path.startswith("/viewer/"):
            continue
        seen.add(path)
        status, body = http(f"{url}{path}")
        name = "memloom/viewer/static/" + path.removeprefix("/viewer/")
        report.check(status == 200, f"GET {path}: {status} ({name}, loaded by {named_by})")
        if status == 200 and path.endswith(".js"):
            folder = path.rsplit("/", 1)[0]
            for ref in SCRIPT_REFS.findall(body.decode("utf-8", "replace")):
                pending.append((os.path.normpath(f"{folder}/{ref}"), path.rsplit("/", 1)[1]))
    report.check(len(seen) > 1, f"the viewer loads {len(seen)} files")


def check_opencode(bin_dir: Path, env: dict[str, str], work: Path, report: Report) -> None:
    """``memloom connect opencode`` writes the plugin from the package's plugin.js."""
    res = run(bin_dir, ["connect", "opencode", "--all"], env, work)
    plugin = Path(env["HOME"]) / ".config" / "opencode" / "plugins" / "memloom.js"
    text = plugin.read_text() if plugin.exists() else ""
    report.check(
        res.returncode == 0 and "__MEMLOOM_COMMAND__" not in text and "memloom" in text,
        "memloom connect opencode --all writes its plugin (memloom/agents/opencode/plugin.js)",
        f"exit {res.returncode} {tail(res.stderr or res.stdout)}",
    )


def check_install(wheel: Path, keep: bool, report: Report) -> None:
    top = Path(tempfile.mkdtemp(prefix="memloom-wheel-"))
    try:
        bin_dir = make_venv(top / "venv", wheel, report)
        if bin_dir is None:
            return
        work = top / "work"  # outside the checkout: nothing there is read
        for folder in ("work", "home", "memloom-home", "cache"):
            (top / folder).mkdir()
        env = clean_env(
            PATH=f"{bin_dir}{os.pathsep}/usr/local/bin{os.pathsep}/usr/bin{os.pathsep}/bin",
            HOME=str(top / "home"),
            MEMLOOM_HOME=str(top / "memloom-home"),
            XDG_CACHE_HOME=str(top / "cache"),
            XDG_CONFIG_HOME=str(top / "home" / ".config"),
            XDG_DATA_HOME=str(top / "home" / ".local" / "share"),
            MEMLOOM_LLM="offline",  # the quickstart's extractor, whatever is on the machine
        )
        installed = where_installed(bin_dir, env, work)
        if not report.check(
            installed.is_relative_to(top / "venv") and not installed.is_relative_to(ROOT),
            f"memloom is imported from the fresh venv ({installed})",
        ):
            return
        check_version(bin_dir, env, work, report)
        check_quickstart(bin_dir, env, work, report)
        check_mcp(bin_dir, env, work, installed, report)
        check_serve(bin_dir, env, work, report)
        check_opencode(bin_dir, env, work, report)
    finally:
        if keep:
            print(f"kept the venv and its folders in {top}")
        else:
            shutil.rmtree(top, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="the built memloom-*.whl")
    parser.add_argument("--sdist", type=Path, help="the built memloom-*.tar.gz, checked too")
    parser.add_argument(
        "--contents-only", action="store_true", help="check the file lists, install nothing"
    )
    parser.add_argument("--keep", action="store_true", help="keep the venv and its folders")
    args = parser.parse_args(argv)
    report = Report()
    started = time.monotonic()
    for problem in wheel_problems(args.wheel):
        report.fail(problem)
    if not report.failures:
        report.ok(f"{args.wheel.name} holds every file of src/{PACKAGE}, LICENSE, the version")
    if args.sdist is not None:
        problems = sdist_problems(args.sdist)
        for problem in problems:
            report.fail(problem)
        if not problems:
            report.ok(f"{args.sdist.name} holds LICENSE, README.md and every file of src/{PACKAGE}")
    if not args.contents_only:
        check_install(args.wheel.resolve(), args.keep, report)
    seconds = time.monotonic() - started
    if report.failures:
        print(f"\n{len(report.failures)} failed ({seconds:.0f} s):", file=sys.stderr)
        for failure in report.failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    print(f"\nthe wheel works on its own ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
