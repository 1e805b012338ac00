"""memloom as a release: one version (pyproject's) everywhere it is stated,
``memloom --version``, the licence, the changelog, and the file-list half of
``scripts/check_wheel.py`` (CI runs the whole script on the built wheel: .ci/run)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
import json
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import memloom
from memloom import version as version_module

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]


def load_check_wheel() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_wheel", ROOT / "scripts/check_wheel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_wheel = load_check_wheel()


# --------------------------------------------------------------------------- the version


def test_the_version_is_pyproject_s_read_from_the_installed_metadata():
    assert memloom.__version__ == VERSION
    assert importlib.metadata.version("memloom") == VERSION
    assert version_module.metadata_file_version() == version_module.importlib_version() == VERSION


def _dist_info(folder: Path, name: str, headers: str) -> None:
    (folder / name).mkdir(parents=True)
    kind = "PKG-INFO" if name.endswith(".egg-info") else "METADATA"
    (folder / name / kind).write_text(headers)


def test_the_metadata_file_is_found_and_read_as_importlib_metadata_reads_it(tmp_path, monkeypatch):
    """The fast reading (no importlib.metadata on the hook path) and importlib.metadata
    agree: the first sys.path folder with memloom's metadata wins, another package's
    folder whose name starts alike does not count, the headers end at the first blank
    line, setuptools' version-less ``memloom.egg-info`` counts."""
    other, first, second = tmp_path / "other", tmp_path / "first", tmp_path / "second"
    _dist_info(
        other, "memloomx-5.0.dist-info", "Metadata-Version: 2.4\nName: memloomx\nVersion: 5.0\n"
    )
    _dist_info(
        first,
        "memloom-9.8.7.dist-info",
        "Metadata-Version: 2.4\nName: memloom\nVersion: 9.8.7\n\nVersion: 1.0 (the body)\n",
    )
    _dist_info(second, "memloom.egg-info", "Metadata-Version: 2.1\nName: memloom\nVersion: 1.2.3\n")
    monkeypatch.setattr(
        sys, "path", [str(tmp_path / "absent"), str(other), str(first), str(second)]
    )
    assert version_module.metadata_file_version() == "9.8.7"
    assert importlib.metadata.version("memloom") == "9.8.7"

    monkeypatch.setattr(sys, "path", [str(other), str(second)])
    assert version_module.metadata_file_version() == "1.2.3"
    assert importlib.metadata.version("memloom") == "1.2.3"

    monkeypatch.setattr(sys, "path", [str(other)])
    assert version_module.metadata_file_version() is None


def _run_entry(*args: str) -> dict[str, Any]:
    """``memloom._entry.main(args)`` in a fresh interpreter: what it printed, and which
    of the modules a version flag must not need it loaded."""
    probe = (
        "import contextlib, io, json, sys\n"
        "from memloom import _entry\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        f"        _entry.main({list(args)!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('typer', 'click', 'importlib.metadata', 'email', 'pydantic', 'numpy')\n"
        "print(json.dumps({'out': out.getvalue(),"
        " 'loaded': [m for m in heavy if m in sys.modules]}))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_memloom_version_prints_it_before_the_cli_loads(flag, tmp_path):
    for args in ([flag], ["--home", str(tmp_path), flag]):
        run = _run_entry(*args)
        assert run["out"] == f"memloom {VERSION}\n"
        assert run["loaded"] == []  # neither the CLI framework nor importlib.metadata


def test_the_cli_takes_the_version_flag_anywhere_and_lists_it(tmp_path):
    cli = [sys.executable, "-m", "memloom.cli"]
    for args in (["-V", "--home", str(tmp_path)], ["--version"]):
        res = subprocess.run([*cli, *args], capture_output=True, text=True, timeout=60)
        assert (res.returncode, res.stdout) == (0, f"memloom {VERSION}\n")
    helped = subprocess.run([*cli, "--help"], capture_output=True, text=True, timeout=60)
    assert re.search(
        r"^\s+-V, --version\s+Print memloom's version and exit\.$", helped.stdout, re.M
    )


# --------------------------------------------------------------------------- manifests

#: Where a version of memloom is never stated: tests and their fixtures, examples (other
#: projects' sessions), benchmarks and their results, docs, the sources' own data.
NOT_MANIFESTS = ("tests/", "examples/", "bench/", "docs/", "src/memloom/embed/data/")
#: What states memloom's version (found with grep across the repository): the plugin
#: manifests, the marketplace entries, the hook wrappers and the shipped MCP answers.
KNOWN = {
    ".claude-plugin/plugin.json",
    ".claude-plugin/marketplace.json",
    ".codex-plugin/plugin.json",
    ".cursor-plugin/plugin.json",
    "plugins/claude-code/.claude-plugin/plugin.json",
    "gemini-extension.json",
    "qwen-extension.json",
    "hooks/memloom-hook",
    "plugins/claude-code/hooks/memloom-hook",
    "src/memloom/mcp_handshake.json",
}
#: A version string in a script or a config: ``version: "1.2"``, ``VERSION = '1.2'``.
SCRIPT_VERSION = re.compile(r"""\bversion\b["']?\s*[:=]\s*["'](\d+\.\d+[^"']*)["']""", re.I)
WRAPPER_VERSION = re.compile(r"^PLUGIN_VERSION=(\S+)$", re.M)


def _tracked() -> list[str]:
    res = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=False
    )
    names = [n for n in res.stdout.decode().split("\0") if n]
    assert names, "not a git checkout: the manifests cannot be listed"
    return [n for n in names if not n.startswith(NOT_MANIFESTS) and n != "pyproject.toml"]


def _json_versions(doc: Any, top: bool = True) -> list[str]:
    """Every version a JSON document states of memloom: its own top-level ``version``
    when a string (a manifest; Cursor's ``hooks.json`` ``"version": 1`` is its file
    format's), an object named memloom's (a marketplace entry, the MCP serverInfo), and
    the shipped MCP answers' key."""
    found: list[str] = []
    if isinstance(doc, dict):
        named = doc.get("name") == "memloom"
        if isinstance(doc.get("version"), str) and (top or named):
            found.append(doc["version"])
        if isinstance(doc.get("key"), dict) and isinstance(doc["key"].get("memloom"), str):
            found.append(doc["key"]["memloom"])
        for value in doc.values():
            found += _json_versions(value, top=False)
    elif isinstance(doc, list):
        for value in doc:
            found += _json_versions(value, top=False)
    return found


def stated_versions() -> dict[str, list[str]]:
    """Each tracked file (outside tests, examples, bench, docs) that states a version of
    memloom, with the versions it states."""
    out: dict[str, list[str]] = {}
    for rel in _tracked():
        path = ROOT / rel
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if "version" not in text.lower():
            continue
        if rel.endswith(".json"):
            found = _json_versions(json.loads(text))
        else:
            found = WRAPPER_VERSION.findall(text) + SCRIPT_VERSION.findall(text)
        if found:
            out[rel] = found
    return out


def test_every_manifest_states_the_package_s_version():
    """Agents update a plugin when its version changes: every manifest, marketplace
    entry, hook wrapper (and the OpenCode plugin module, were it to state one) carries
    pyproject's version, and so do the MCP answers shipped with the package."""
    stated = stated_versions()
    assert set(stated) >= KNOWN, f"not found: {sorted(KNOWN - set(stated))}"
    wrong = {rel: found for rel, found in stated.items() if set(found) != {VERSION}}
    assert wrong == {}, f"pyproject.toml says {VERSION}"


def test_the_manifest_search_sees_what_it_looks_for():
    """The search's rules on documents shaped as the real ones, so that a manifest it
    stopped recognising would show here and not pass unseen above."""
    assert _json_versions({"name": "memloom", "version": "1.0"}) == ["1.0"]
    assert _json_versions({"plugins": [{"name": "memloom", "version": "1.1"}]}) == ["1.1"]
    assert _json_versions({"plugins": [{"name": "other", "version": "9"}]}) == []
    assert _json_versions({"version": 1, "hooks": {}}) == []
    handshake = {
        "key": {"memloom": "1.2"},
        "answers": {"initialize x": {"serverInfo": {"name": "memloom", "version": "1.3"}}},
    }
    assert _json_versions(handshake) == ["1.2", "1.3"]
    assert SCRIPT_VERSION.findall('export const VERSION = "2.0.1";\nversion: "2.0"') == [
        "2.0.1",
        "2.0",
    ]
    assert SCRIPT_VERSION.findall("v${v.version}") == []
    assert WRAPPER_VERSION.findall("x\nPLUGIN_VERSION=3.4.5\n") == ["3.4.5"]


# ------------------------------------------------------------------ licence, changelog


def test_the_licence_is_mit_and_ships_in_the_wheel_s_metadata():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]  # .dist-info/licenses/LICENSE
    assert "setuptools>=77" in PYPROJECT["build-system"]["requires"]  # PEP 639
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the memloom authors\n")
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_the_changelog_has_unreleased_on_top_then_the_current_version():
    headings = re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert headings[0] == "[Unreleased]"
    assert re.fullmatch(rf"\[{re.escape(VERSION)}\] - \d{{4}}-\d{{2}}-\d{{2}}", headings[1])


# ----------------------------------------------------------------- check_wheel's file lists


def build_wheel(
    path: Path, *, drop: str = "", version: str = VERSION, licence: bool = True
) -> Path:
    """A wheel of the checkout's package files, as setuptools lays one out (less RECORD),
    leaving out ``drop``."""
    info = f"memloom-{VERSION}.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        for name in check_wheel.package_files():
            if name != drop:
                zf.write(ROOT / "src" / name, name)
        zf.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.4\nName: memloom\nVersion: {version}\n"
        )
        zf.writestr(
            f"{info}/entry_points.txt", "[console_scripts]\nmemloom = memloom._entry:main\n"
        )
        if licence:
            zf.write(ROOT / "LICENSE", f"{info}/licenses/LICENSE")
    return path


def test_the_package_files_are_the_checkout_s_tracked_files():
    files = check_wheel.package_files()
    assert "memloom/__init__.py" in files
    for data in (
        "memloom/mcp_handshake.json",
        "memloom/embed/data/tokenizer.json",
        "memloom/agents/opencode/plugin.js",
        "memloom/viewer/static/index.html",
    ):
        assert data in files
    assert not [f for f in files if "__pycache__" in f or f.endswith(".pyc")]


def test_a_wheel_of_every_package_file_passes(tmp_path):
    assert check_wheel.wheel_problems(build_wheel(tmp_path / "w.whl")) == []


def test_a_wheel_without_a_data_file_fails_naming_it(tmp_path):
    wheel = build_wheel(tmp_path / "w.whl", drop="memloom/viewer/static/app.js")
    assert check_wheel.wheel_problems(wheel) == [
        "the wheel lacks memloom/viewer/static/app.js "
        "(src/memloom/viewer/static/app.js in the checkout)"
    ]
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts/check_wheel.py"), str(wheel), "--contents-only"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 1
    assert "the wheel lacks memloom/viewer/static/app.js" in res.stderr


def test_a_wheel_without_the_licence_or_with_another_version_fails(tmp_path):
    problems = check_wheel.wheel_problems(
        build_wheel(tmp_path / "w.whl", version="9.9.9", licence=False)
    )
    info = f"memloom-{VERSION}.dist-info"
    assert problems == [
        f"the wheel lacks {info}/licenses/LICENSE (the checkout's LICENSE)",
        f"{info}/METADATA states version 9.9.9, pyproject.toml {VERSION}",
    ]


def test_an_sdist_without_a_package_file_fails_naming_it(tmp_path):
    sdist = tmp_path / f"memloom-{VERSION}.tar.gz"
    top = f"memloom-{VERSION}"
    with tarfile.open(sdist, "w:gz") as tf:
        for name in ("LICENSE", "README.md", "pyproject.toml"):
            tf.add(ROOT / name, f"{top}/{name}")
        for name in check_wheel.package_files():
            if name != "memloom/mcp_handshake.json":
                tf.add(ROOT / "src" / name, f"{top}/src/{name}")
        tf.addfile(tarfile.TarInfo(f"{top}/PKG-INFO"), io.BytesIO(b""))
    assert check_wheel.sdist_problems(sdist) == ["the sdist lacks src/memloom/mcp_handshake.json"]


def test_the_viewer_check_follows_the_page_to_every_viewer_file():
    """What check_wheel fetches from memloom serve, read off the checkout's files: the
    page's links and the scripts' imports reach every file of the viewer."""
    static = ROOT / "src/memloom/viewer/static"
    page = (static / "index.html").read_text()
    pending = [ref.removeprefix("viewer/") for ref in check_wheel.PAGE_REFS.findall(page)]
    reached = {"index.html"}
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached.add(name)
        if name.endswith(".js"):
            pending += [
                ref.removeprefix("./")
                for ref in check_wheel.SCRIPT_REFS.findall((static / name).read_text())
            ]
    assert reached == {p.name for p in static.iterdir() if p.is_file()}
