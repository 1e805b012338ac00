"""Anchors: the code a memory is about, found when it is written.

A memory about code goes stale when the code changes. To tell (at recall), a memory
records at write time the repository files its text names, the identifiers it names
that occur in those files, and the commit (git's ``HEAD``) it was written at. An
anchor is a plain JSON object on the memory::

    {"path": "svc/net/retry.py", "symbols": ["MAX_RETRIES"], "commit": "0067609…",
     "root": "/home/me/svc", "via": "text"}

``path`` is relative to the repository's top folder (``root``, the folder itself
outside git); ``via`` says where it came from: ``text`` (named by the memory's text),
``given`` (``save``/``update``'s ``anchors``, the CLI's ``--file``), ``tool`` (a file
the agent's tool calls read or edited in the transcript lines an imported memory was
distilled from: :func:`from_tools`).

Nothing here leads outside the root: every file goes through the discovery fence
(:class:`memloom.agents.discovery.Fence`: no symlink out of the root, the owner's
regular files only, no folder others can write on the way), is opened with
:func:`memloom.agents.files.open_regular` (a FIFO or a device is never opened) and
read up to :data:`MAX_FILE_BYTES`; a file with a NUL byte in its head is binary and
not searched. ``..`` and absolute paths outside the root are never resolved.

git is asked with ``rev-parse`` (its own ownership check, ``safe.directory``, stands);
a missing git, a folder outside git, a bare repository or an unborn branch give no
commit and a :attr:`Found.note` that says why. Standard library only.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
import subprocess
import time

from memloom.agents.fence import PRIVATE_FOLDERS, ProjectFence, escapes
from memloom.agents.files import open_regular
from memloom.errors import ValidationError
from memloom.values import FrozenValue, Value

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

__all__ = [
    "MAX_ANCHORS",
    "MAX_FILE_BYTES",
    "MAX_NAMES",
    "PRIVATE_FOLDERS",
    "Found",
    "Reader",
    "Repo",
    "carry",
    "checked",
    "contains",
    "escapes",
    "find",
    "for_write",
    "from_tools",
    "merge",
    "names_in",
    "paths_in",
    "read_head",
    "repo_of",
]

log = logging.getLogger(__name__)

#: How much of a file is searched for identifiers.
MAX_FILE_BYTES = 1 << 20
#: Anchors a memory keeps, and identifiers per anchor.
MAX_ANCHORS = 32
MAX_NAMES = 32
#: The head of a file read for a NUL byte (binary: not searched).
BINARY_PROBE = 8192
#: How long git may take to answer, and how much of ``ls-files`` is read.
GIT_TIMEOUT = 5.0
MAX_LISTING_BYTES = 16 << 20
#: How long a repository's file listing is reused (imports write many memories at once).
LISTING_TTL = 10.0

# A path-like token: characters of file names and ``/``; a candidate when it has a
# ``/`` or ends in an extension. Trailing punctuation and ``:LINE`` are cut after.
_TOKEN = re.compile(r"[\w@+~./-]+(?:/[\w@+~.-]+)*", re.UNICODE)
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")
_LINE_SUFFIX = re.compile(r"(?::\d+){1,2}$")
_BACKTICKED = re.compile(r"`([^`\n]{1,300})`")
# Identifier shapes: snake_case, CamelCase / camelCase, ALL_CAPS (with an underscore),
# dotted.names and func() calls. A bare word is an identifier only backticked.
_SNAKE = r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"
_CAMEL = r"[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+|[a-z][a-z0-9]*(?:[A-Z][A-Za-z0-9]*)+"
_CAPS = r"_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
_IDENT = rf"(?:{_SNAKE}|{_CAMEL}|{_CAPS})"
_WORD = r"[A-Za-z_][A-Za-z0-9_]*"
_SHAPED = re.compile(rf"(?<![\w./-])({_WORD}(?:\.{_WORD})+|{_IDENT}|{_WORD}(?=\(\)))(?![\w/-])")
_PLAIN_WORD = re.compile(rf"^{_WORD}$")
_CALL = re.compile(rf"^({_WORD}(?:\.{_WORD})*)\(.*\)$")


class Repo(FrozenValue):
    """The folder anchors are taken under: the repository's top folder (the folder
    itself outside git), its ``HEAD`` commit, and why there is none (``note``). A plain
    class: the hooks load this module (see :mod:`memloom.values`)."""

    FIELDS = ("top", "commit", "note", "git")

    def __init__(
        self, top: str, commit: str | None, note: str | None = None, git: bool = False
    ) -> None:
        self.top = top
        self.commit = commit
        self.note = note
        self.git = git


class Found(Value):
    """What :func:`find` anchored, and why a commit is missing (None: one was read)."""

    FIELDS = ("anchors", "note")

    def __init__(
        self, anchors: list[dict[str, Any]] | None = None, note: str | None = None
    ) -> None:
        self.anchors = [] if anchors is None else anchors
        self.note = note


# ---------------------------------------------------------------- git


def _git(folder: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``git -C folder ARGS``, the caller's ``GIT_*`` variables left out (a ``GIT_DIR``
    must not point the question at another repository), no lock taken, no prompt."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    return subprocess.run(
        ["git", "-C", folder, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=GIT_TIMEOUT,
        env=env,
        check=False,
    )


def _why_not(stderr: str) -> str:
    """A git failure, said in a few words."""
    if "not a git repository" in stderr:
        return "not a git repository"
    if "must be run in a work tree" in stderr:
        return "a bare repository (no working tree)"
    if "dubious ownership" in stderr:
        return "git refuses the repository (it belongs to another user)"
    first = stderr.strip().splitlines()[0] if stderr.strip() else "no reason given"
    return f"git failed: {first[:200]}"


def repo_of(folder: str) -> Repo:
    """The repository ``folder`` lies in: its top folder and ``HEAD`` (a detached
    ``HEAD``, a rebase or merge in progress and a shallow clone all have one), or the
    folder itself with no commit and the reason."""
    folder = os.path.abspath(folder)
    try:
        done = _git(folder, "rev-parse", "--show-toplevel", "HEAD")
    except FileNotFoundError:
        return Repo(folder, None, "git is not installed")
    except (subprocess.TimeoutExpired, OSError) as exc:
        return Repo(folder, None, f"git did not answer ({type(exc).__name__})")
    lines = done.stdout.decode("utf-8", "surrogateescape").splitlines()
    if done.returncode == 0 and len(lines) == 2:
        return Repo(lines[0], lines[1], git=True)
    if lines and os.path.isabs(lines[0]):  # a work tree whose branch has no commit yet
        return Repo(lines[0], None, "no commit yet", git=True)
    return Repo(folder, None, _why_not(done.stderr.decode("utf-8", "replace")))


_listings: dict[str, tuple[float, list[str]]] = {}


def _tracked(repo: Repo) -> list[str]:
    """The files git tracks in ``repo`` (``ls-files``), reused for :data:`LISTING_TTL`;
    none outside git or when git fails (said in the log)."""
    if not repo.git:
        return []
    now = time.monotonic()
    cached = _listings.get(repo.top)
    if cached is not None and now - cached[0] < LISTING_TTL:
        return cached[1]
    try:
        done = _git(repo.top, "ls-files", "-z", "--cached")
    except (subprocess.TimeoutExpired, OSError) as exc:
        log.info("anchors: could not list the files of %s: %s", repo.top, exc)
        return []
    if done.returncode != 0:
        log.info(
            "anchors: could not list the files of %s: %s",
            repo.top,
            _why_not(done.stderr.decode("utf-8", "replace")),
        )
        return []
    raw = done.stdout[:MAX_LISTING_BYTES]
    files = [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]
    _listings[repo.top] = (now, files)
    return files


# ---------------------------------------------------------------- reading the text


def _clean_path(token: str) -> str | None:
    """A path token without the punctuation and ``:LINE`` around it, or None."""
    token = token.strip("'\"()[]{}<>,;!?").rstrip(".:")
    token = _LINE_SUFFIX.sub("", token)
    if not token or token in (".", "/") or "\x00" in token:
        return None
    return token


def paths_in(text: str) -> list[str]:
    """The tokens of ``text`` that look like paths, in order, each once: backticked
    ones, and words with a ``/`` or a file extension (``retry.py``, ``svc/net/``,
    ``./x``, ``/abs/path``, ``src/app.py:42``)."""
    out: dict[str, None] = {}
    for quoted in _BACKTICKED.findall(text):
        token = _clean_path(quoted.strip())
        if token and " " not in token:
            out.setdefault(token)
    for match in _TOKEN.finditer(text):
        token = _clean_path(match.group(0))
        if token and ("/" in token or _EXTENSION.search(token)):
            out.setdefault(token)
    return list(out)


def names_in(text: str) -> list[str]:
    """The identifiers ``text`` names, in order, each once: backticked names and
    calls, ``snake_case``, ``CamelCase``/``camelCase``, ``ALL_CAPS`` with an
    underscore, ``dotted.names`` and ``func()`` (as ``func``)."""
    out: dict[str, None] = {}
    for quoted in _BACKTICKED.findall(text):
        quoted = quoted.strip()
        call = _CALL.match(quoted)
        if call:
            quoted = call.group(1)
        if _PLAIN_WORD.match(quoted) or re.fullmatch(rf"{_WORD}(?:\.{_WORD})+", quoted):
            out.setdefault(quoted)
    for match in _SHAPED.finditer(text):
        name = match.group(1)
        parts = name.split(".")
        if len(parts) == 1 or (min(map(len, parts)) >= 2 and len(name) >= 5):  # not "e.g"
            out.setdefault(name)
    return list(out)


# ---------------------------------------------------------------- files


class Reader:
    """Files under one root, through the project fence, each read once (bounded).
    Staleness checks (:mod:`memloom.staleness`) read through it too."""

    def __init__(self, root: str) -> None:
        self.fence = ProjectFence(root)
        self._texts: dict[str, str | None] = {}

    def admits(self, rel: str) -> bool:
        """Whether ``rel`` (relative to the root) is a regular file the fence lets us read."""
        return self.fence.refusal(rel) is None

    def stat(self, rel: str) -> os.stat_result | bool | None:
        """``rel``'s stat when it is a regular file the fence lets us read, None when
        it is missing, False when it is refused (outside, a symlink out, a FIFO, a
        device, another user's): a caller can tell a gone file from a refused one."""
        refused = self.fence.refusal(rel)
        if refused == "missing":
            return None
        if refused is not None:
            log.debug("anchors: %s not anchored (%s)", rel, refused)
            return False
        try:
            return os.stat(os.path.join(self.fence.given, rel))
        except OSError:  # gone between the two looks
            return None

    def text(self, rel: str) -> str | None:
        """The head of the file as text (None: binary or unreadable)."""
        if rel not in self._texts:
            self._texts[rel] = self._read(rel)
        return self._texts[rel]

    def _read(self, rel: str) -> str | None:
        return read_head(os.path.join(self.fence.given, rel))


def read_head(path: str) -> str | None:
    """The first :data:`MAX_FILE_BYTES` of a regular file as text; None when it is
    binary (a NUL byte in its head) or cannot be opened as a regular file."""
    try:
        with open_regular(path) as fh:
            data = fh.read(MAX_FILE_BYTES)
    except OSError as exc:
        log.debug("anchors: %s not read: %s", path, exc)
        return None
    if b"\0" in data[:BINARY_PROBE]:
        return None
    return data.decode("utf-8", "replace")


def _relative(token: str, base: str, top: str) -> str | None:
    """``token`` as a path relative to ``top``: relative tokens are read from ``base``
    (the folder the memory was written in), absolute ones must lie under ``top``."""
    if "\x00" in token or token.startswith("~"):
        return None
    if os.path.isabs(token):
        full = os.path.normpath(token)
    else:
        if ".." in token.split("/"):
            return None  # never climbed: ``../../.ssh/id_rsa``
        full = os.path.normpath(os.path.join(base, token))
    rel = os.path.relpath(full, top)
    if rel == "." or escapes(rel):
        return None
    return rel.replace(os.sep, "/")


def _occurs(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) is not None


# ---------------------------------------------------------------- finding anchors


def find(
    text: str,
    folder: str | None,
    *,
    given: Sequence[Mapping[str, Any]] = (),
    touched: Sequence[str] = (),
    repo: Repo | None = None,
) -> Found:
    """The anchors of a memory of ``text`` written in ``folder`` (a project folder:
    the CLI's working folder, a session's ``cwd``), with the anchors ``given`` by the
    caller (paths relative to ``folder``; a given file that is not there, or that the
    fence refuses, is a :class:`~memloom.errors.ValidationError`), and the files its
    session's tool calls ``touched`` (:func:`from_tools`: after the given and
    text-named ones, merged into them, at most :data:`MAX_ANCHORS` in all). Without a
    folder, the given anchors are kept as given (``via: given``), none are found,
    nothing is read."""
    if folder is None:
        return Found([_given_only(a) for a in given][:MAX_ANCHORS], "no project folder")
    repo = repo or repo_of(folder)
    found = _find(text, folder, given, repo)
    if touched and len(found.anchors) < MAX_ANCHORS:
        found.anchors = merge(found.anchors, from_tools(text, folder, touched, repo=repo))
    return found


def _find(text: str, folder: str, given: Sequence[Mapping[str, Any]], repo: Repo) -> Found:
    """:func:`find` of the text and the given anchors."""
    reader = Reader(repo.top)
    base = os.path.abspath(folder)
    files: dict[str, tuple[str, list[str]]] = {}  # path -> (via, names given)
    for item in given:
        rel = _relative(str(item.get("path", "")), base, repo.top)
        if rel is None or not reader.admits(rel):
            raise ValidationError(
                f"anchor {item.get('path')!r} is not a file of the project {repo.top} "
                "(it must exist, inside it, and be yours)"
            )
        files.setdefault(rel, ("given", []))[1].extend(item.get("symbols") or ())
    tokens: set[str] = set()  # what named a file: a path, never an identifier
    tracked: list[str] | None = None
    for token in paths_in(text):
        if len(files) >= MAX_ANCHORS:
            break
        # From the folder written in, then from the top (a session in ``svc/``
        # naming ``svc/net/retry.py``), then the one tracked file ending so.
        tries = dict.fromkeys(
            [_relative(token, base, repo.top), _relative(token, repo.top, repo.top)]
        )
        rel = next((r for r in tries if r is not None and reader.admits(r)), None)
        if rel is None and not os.path.isabs(token) and not escapes(token):
            if tracked is None:
                tracked = _tracked(repo)
            rel = _unique_suffix(posixpath.normpath(token), tracked)
            if rel is not None and not reader.admits(rel):
                rel = None
        if rel is None:
            continue
        tokens.add(token)
        files.setdefault(rel, ("text", []))
    names = [n for n in names_in(text) if n not in tokens]
    return Found(_anchored(files, names, reader, repo), None if repo.commit else repo.note)


def _anchored(
    files: Mapping[str, tuple[str, list[str]]], names: Sequence[str], reader: Reader, repo: Repo
) -> list[dict[str, Any]]:
    """One anchor per file, with the names (its own, then the text's) found in it."""
    anchors = []
    for rel, (via, extra) in files.items():
        wanted = dict.fromkeys([*extra, *names])
        anchors.append(
            {
                "path": rel,
                "symbols": [n for n in wanted if _in_file(reader, rel, n)][:MAX_NAMES],
                "commit": repo.commit,
                "root": repo.top,
                "via": via,
            }
        )
    return anchors[:MAX_ANCHORS]


def from_tools(
    text: str,
    folder: str | None,
    touched: Sequence[str],
    *,
    repo: Repo | None = None,
) -> list[dict[str, Any]]:
    """The anchors (``via: tool``) of the files ``touched`` names: the paths an agent's
    tool calls read or edited, as the tool was given them (absolute, or relative to
    ``folder``, the session's folder), each with the identifiers ``text`` names that
    occur in it. Through the same fence as the text's files, but a path that is not
    there (a file the session deleted later), outside the root (``/etc/passwd``,
    ``../../.ssh/id_rsa``), behind a symlink out, or not a regular file of the owner
    (a FIFO, a device) is simply not anchored, and not read. Without a folder, none."""
    if folder is None or not touched:
        return []
    repo = repo or repo_of(folder)
    reader = Reader(repo.top)
    base = os.path.abspath(folder)
    files: dict[str, tuple[str, list[str]]] = {}
    given: set[str] = set()  # what named a file: its path and file name, never an identifier
    for token in dict.fromkeys(touched):
        if len(files) >= MAX_ANCHORS:
            break
        rel = _relative(token, base, repo.top) if isinstance(token, str) else None
        if rel is None or rel in files or not reader.admits(rel):
            continue
        files[rel] = ("tool", [])
        given.update((token, rel, posixpath.basename(rel)))
    names = [n for n in names_in(text) if n not in given]
    return _anchored(files, names, reader, repo)


def _in_file(reader: Reader, rel: str, name: str) -> bool:
    """Whether ``name`` (or, for a dotted name, its last part) occurs in the file."""
    content = reader.text(rel)
    return content is not None and contains(content, name)


def contains(content: str, name: str) -> bool:
    """Whether ``name`` occurs in ``content`` as a whole word; a dotted name does when
    its last part (three characters or more) does (``anchors.find`` kept it so)."""
    if _occurs(name, content):
        return True
    last = name.rsplit(".", 1)[-1]
    return last != name and len(last) >= 3 and _occurs(last, content)


def _unique_suffix(rel: str, tracked: Sequence[str]) -> str | None:
    """The one tracked file whose path ends in ``/rel`` (``retry.py`` for
    ``svc/net/retry.py``), or None when none or several do."""
    tail = "/" + rel
    hits = [p for p in tracked if p.endswith(tail)]
    return hits[0] if len(hits) == 1 else None


def _given_only(item: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "path": str(item["path"]),
        "symbols": list(item.get("symbols") or [])[:MAX_NAMES],
        "commit": item.get("commit"),
        "root": None,
        "via": "given",
    }


# ---------------------------------------------------------------- versions and merges


def merge(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Two anchor lists as one (a duplicate folded into a memory): one anchor per path
    and root, the names of both, the first anchor's commit."""
    out: dict[tuple[str, Any], dict[str, Any]] = {}
    for a in (*old, *new):
        key = (a["path"], a.get("root"))
        if key in out:
            names = [*out[key]["symbols"], *a.get("symbols", [])]
            out[key]["symbols"] = list(dict.fromkeys(names))[:MAX_NAMES]
        else:
            out[key] = {**a, "symbols": list(a.get("symbols", []))}
    return list(out.values())[:MAX_ANCHORS]


def carry(old: Sequence[Mapping[str, Any]], text: str) -> list[dict[str, Any]]:
    """What a new version of a memory keeps of its predecessor's anchors when nothing
    could be found again (no folder): ``given`` ones as they are, ``text`` ones whose
    file the new text still names, each with the names it still names."""
    named = " ".join(paths_in(text))
    words = set(names_in(text))
    out = []
    for a in old:
        if a.get("via") == "text":
            path = str(a["path"])
            if path not in named and posixpath.basename(path) not in named:
                continue
            out.append({**a, "symbols": [n for n in a.get("symbols", []) if n in words]})
        else:
            out.append(dict(a))
    return out


def for_write(
    text: str, folder: str | None, given: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]] | None:
    """A new memory's anchors: :func:`find`'s, or None when there is neither a folder
    nor a given anchor (nothing was looked for: a new version carries its
    predecessor's, :func:`carry`). A missing commit is logged with its reason."""
    if folder is None and not given:
        return None
    found = find(text, folder, given=given)
    if found.note and found.anchors:
        log.info("anchors of a memory written in %s have no commit: %s", folder, found.note)
    return found.anchors


def checked(value: Any) -> list[dict[str, Any]]:
    """Anchors read from outside memloom (a backup file) as stored, or ``ValueError``:
    a list of at most :data:`MAX_ANCHORS` objects whose ``path`` is relative and never
    climbs (``..``), ``symbols`` a list of strings, ``commit`` and ``root`` strings or
    null, ``via`` one of ``text``, ``given``, ``tool``."""
    if not isinstance(value, list) or len(value) > MAX_ANCHORS:
        raise ValueError(f"anchors must be a list of at most {MAX_ANCHORS} objects")
    out = []
    for a in value:
        if not isinstance(a, dict) or not isinstance(a.get("path"), str) or escapes(a["path"]):
            raise ValueError(f"anchor {str(a)[:200]!r} is no path inside a project")
        names = a.get("symbols", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"anchor {a['path']!r}: symbols must be a list of strings")
        if any(a.get(k) is not None and not isinstance(a[k], str) for k in ("commit", "root")):
            raise ValueError(f"anchor {a['path']!r}: commit and root must be strings or null")
        if a.get("via", "text") not in ("text", "given", "tool"):
            raise ValueError(f"anchor {a['path']!r}: via must be text, given or tool")
        out.append(
            {
                "path": a["path"],
                "symbols": names[:MAX_NAMES],
                "commit": a.get("commit"),
                "root": a.get("root"),
                "via": a.get("via", "text"),
            }
        )
    return out
