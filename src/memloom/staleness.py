"""Staleness: whether the code a memory is about is still there, checked at recall.

A memory records its anchors when it is written (:mod:`memloom.anchors`): files,
identifiers in them, the commit. At recall, in a folder of the project, each anchor is
looked up in *that folder's* working tree (a worktree's own top, not the anchor's stored
``root``: worktrees and clones of one repository share memories):

- a file that is there: each identifier must still occur in it (a dotted name when its
  last part does), else the memory is stale, ``NAME no longer in PATH``;
- a file that is not there: git's rename detection between the anchor's commit and the
  working tree (``git diff -M``, staged renames included; a file moved without telling
  git, by its name among the untracked files) moves the anchor to the new path, not
  stale. A file this branch lacks but the default branch (``origin/HEAD``, else
  ``main``, else ``master``) has is *not on this branch*: not stale, said in a note.
  Otherwise stale, ``file gone: PATH``.

Precision first: a live memory flagged stale is the worse error. When unsure (no git,
the commit unknown to this clone, a rebase or merge in progress, git missing or
failing) the memory is not stale and the anchor carries a ``note`` saying it was not
checked. Nothing is expired or deleted.

Fast, because the prompt hook runs it: a file that exists costs a fenced ``stat`` and a
bounded read cached by ``(path, mtime_ns, size, inode)``; git runs only for missing
files, once per distinct anchor commit (cached per top, commit, ``HEAD`` and index), and
once more each for untracked files and the default branch when a file really is gone.

Nothing leads outside the tree: files go through the anchors' fenced reader (no symlink
out, no FIFO or device, another user's file never, bounded read, binary never searched);
an anchor of another repository (its root's project differs) is not checked here.
Standard library only (the hooks import it).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import time

from memloom import anchors
from memloom.project import project_key, repository

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

__all__ = ["Check", "Tree", "mark", "usable_folder"]

#: Seconds all git calls of one recall may take together (then: unchecked, said so).
GIT_BUDGET = 1.5
#: Distinct anchor commits asked of git in one recall (more: those anchors unchecked).
MAX_COMMITS = 4
#: How long a rename map, an untracked listing or a branch answer is reused.
CACHE_SECONDS = 10.0
#: Files whose head is kept in memory between recalls (a long-lived daemon).
MAX_CACHED_FILES = 512
#: The most of git's answers read.
MAX_GIT_BYTES = 16 << 20
#: Default branches, in the order they are tried.
DEFAULT_BRANCHES = ("origin/HEAD", "main", "master")
#: Untracked files compared with a deleted one (a plain ``mv`` git was not told of).
MAX_CANDIDATES = 200
#: Reasons joined into one ``stale`` string.
MAX_REASONS = 3

#: Folders no project is in (a root-run daemon owns them, so the owner check passes).
SYSTEM_FOLDERS = (
    "/etc",
    "/proc",
    "/sys",
    "/dev",
    "/boot",
    "/bin",
    "/sbin",
    "/lib",
    "/usr",
    "/var/lib",
    "/var/log",
    "/run",
)

#: Answers of :func:`_has` kept between recalls.
MAX_CACHED_ANSWERS = 20_000
_MISS = object()
_answers: dict[tuple[Any, str], bool | None] = {}
_COMMIT = re.compile(r"[0-9a-f]{7,64}")
_trees: dict[tuple[str, str], frozenset[str]] = {}
_texts: dict[tuple[str, int, int, int], str | None] = {}
_git_answers: dict[tuple[Any, ...], tuple[float, Any]] = {}


class Check:
    """One memory's verdict: ``stale`` (None, or why), its anchors as they are now
    (``path`` moved after a rename, ``moved_from``, a ``note`` when one was not checked
    or is not on this branch), and a ``note`` for the memory when something was not
    checked."""

    __slots__ = ("anchors", "note", "stale")

    def __init__(self, stale: str | None, found: list[dict[str, Any]], note: str | None):
        self.stale = stale
        self.anchors = found
        self.note = note

    def __repr__(self) -> str:
        return f"Check({self.stale!r}, {self.anchors!r}, {self.note!r})"


def usable_folder(folder: Any) -> str | None:
    """``folder`` as a real path when a recall may check anchors in it: an absolute path
    to an existing directory owned by this user, neither ``/`` nor the home folder nor
    above it (a symlink counts as where it leads). Else None: nothing is checked."""
    if not isinstance(folder, str) or not folder or "\x00" in folder or not os.path.isabs(folder):
        return None
    real = os.path.realpath(folder)
    try:
        st = os.stat(real)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        return None
    home = os.path.realpath(os.path.expanduser("~"))
    if real == os.path.dirname(real) or real == home or home.startswith(real + os.sep):
        return None
    if any(real == s or real.startswith(s + os.sep) for s in SYSTEM_FOLDERS):
        return None
    return real


class Tree:
    """The working tree a recall runs in (its top, from the folder), and the checks."""

    def __init__(self, folder: str) -> None:
        real = os.path.realpath(folder)
        repo = repository(real)
        self.top = os.path.realpath(repo.root) if repo is not None else real
        self.git = repo is not None
        self.key = project_key(real)
        self.reader = anchors.Reader(self.top)
        self._others: dict[str, bool] = {}
        #: All git calls of one recall share :data:`GIT_BUDGET` (a hook's time is bounded).
        self._deadline = time.monotonic() + GIT_BUDGET
        #: A rebase or merge half done: files hold conflict markers, some are missing for
        #: now; nothing is judged (said in each anchor's note).
        self.busy = self._in_progress() if self.git else None

    # ------------------------------------------------------------ public

    def check(self, found: Sequence[Mapping[str, Any]], project: str | None = None) -> Check:
        """One memory's anchors (``project``: the memory's own)."""
        return self.check_many([(found, project)])[0]

    def check_many(
        self, items: Sequence[tuple[Sequence[Mapping[str, Any]], str | None]]
    ) -> list[Check]:
        """Many memories' anchors at once: git is asked once for all missing files."""
        missing: dict[str | None, set[str]] = {}
        staged: list[list[tuple[dict[str, Any], Any]]] = []
        for found, project in items:
            row = []
            for a in found:
                out = {**a, "symbols": list(a.get("symbols") or [])}
                state = self._look(out, project)
                if state is None:
                    missing.setdefault(out.get("commit"), set()).add(out["path"])
                row.append((out, state))
            staged.append(row)
        where = self._resolve(missing) if missing else {}
        results = []
        for row in staged:
            reasons: list[str] = []
            notes: list[str] = []
            done = []
            for out, state in row:
                if state is None:
                    state = self._after_git(out, where[(out.get("commit"), out["path"])])
                if isinstance(state, str):
                    reasons.append(state)
                if out.get("note"):
                    notes.append(f"{out['path']}: {out['note']}")
                done.append(out)
            stale = "; ".join(reasons[:MAX_REASONS]) if reasons else None
            results.append(Check(stale, done, notes[0] if notes else None))
        return results

    # ------------------------------------------------------------ files that exist

    def _look(self, out: dict[str, Any], project: str | None) -> str | bool | None:
        """An anchor against the tree: a reason (stale), True (fine or unchecked, with a
        ``note``), None (its file is missing: git decides)."""
        rel = str(out.get("path") or "")
        if anchors.escapes(rel):
            out["note"] = "not checked: no path inside a project"
            return True
        if not self._ours(out, project):
            out["note"] = "not checked: another repository"
            return True
        if self.busy is not None:
            out["note"] = f"not checked: {self.busy} in progress"
            return True
        found = self.reader.stat(rel)
        if found is False:
            out["note"] = (
                "not checked: refused (outside the project, not a regular file or not yours)"
            )
            return True
        if found is None:
            return None
        return self._symbols(out, rel, found)

    def _ours(self, a: Mapping[str, Any], project: str | None) -> bool:
        """Whether the anchor is of this tree's repository: its root is this top, or the
        memory's project (or the root's) is this folder's project."""
        root = a.get("root")
        if isinstance(root, str) and os.path.normpath(root) == self.top:
            return True
        if self.key is not None and project == self.key:
            return True
        if not isinstance(root, str) or not os.path.isabs(root):
            return False
        if root not in self._others:
            self._others[root] = os.path.isdir(root) and project_key(root) == self.key
        return self._others[root]

    def _symbols(self, out: dict[str, Any], rel: str, st: os.stat_result) -> str | bool:
        """The first identifier no longer in the file (a reason), else True."""
        names = out["symbols"]
        if not names:
            return True
        full = os.path.join(self.top, rel)
        key = (full, st.st_mtime_ns, st.st_size, st.st_ino)
        for name in names:
            found = _has(key, name)
            if found is None:
                out["note"] = "not checked: binary or unreadable"
                return True
            if not found:
                return f"{name} no longer in {rel}"
        return True

    # ------------------------------------------------------------ files that are missing

    def _after_git(self, out: dict[str, Any], verdict: tuple[str, str]) -> str | bool:
        """Apply git's answer for a missing file: ``("moved", new)``, ``("gone", "")``,
        ``("note", why)`` (not stale)."""
        kind, detail = verdict
        if kind == "gone":
            return f"file gone: {out['path']}"
        if kind == "note":
            out["note"] = detail
            return True
        old = out["path"]
        out["moved_from"], out["path"] = old, detail
        found = self.reader.stat(detail)
        if not isinstance(found, os.stat_result):
            out["note"] = "not checked: the renamed file cannot be read"
            return True
        return self._symbols(out, detail, found)

    def _resolve(self, missing: Mapping[str | None, Iterable[str]]) -> dict[Any, tuple[str, str]]:
        """For each ``(commit, path)`` missing: moved, gone, or a note (unsure)."""
        out: dict[Any, tuple[str, str]] = {}
        why = self._unsure()
        gone: list[tuple[str | None, str]] = []
        for n, (commit, paths) in enumerate(missing.items()):
            if why is None and (commit is None or not _COMMIT.fullmatch(str(commit))):
                # Never handed to git unless it is a commit id: a stored value from a
                # backup could otherwise be read as an option (``--output=…``).
                reason = "not checked: file missing, the memory has no commit to compare with"
            elif why is None and n >= MAX_COMMITS:
                reason = "not checked: too many commits in one recall"
            else:
                reason = why
            renames: dict[str, str] | str = reason or self._renames(str(commit))
            if isinstance(renames, dict) and any(
                renames.get(p) and not os.path.lexists(os.path.join(self.top, renames[p]))
                for p in paths
            ):  # the tree changed since git was asked (an index that did not): ask again
                renames = self._renames(str(commit), fresh=True)
            for path in paths:
                if isinstance(renames, str):
                    out[(commit, path)] = ("note", renames)
                elif path in renames:
                    moved = renames[path]
                    out[(commit, path)] = ("moved", moved) if moved else ("gone", "")
                    if not moved:
                        gone.append((commit, path))
                else:
                    out[(commit, path)] = ("note", "not checked: file missing, not tracked by git")
        if gone:
            self._second_look(gone, out)
        return out

    def _second_look(self, gone: list[tuple[str | None, str]], out: dict[Any, Any]) -> None:
        """Deleted per git: moved without telling git (one untracked file of that name),
        or only missing on this branch (the default branch has it)."""
        untracked = self._untracked()
        left = []
        for key in gone:
            base = "/" + os.path.basename(key[1])
            same = [p for p in untracked if ("/" + p).endswith(base)] if untracked else []
            if same:
                out[key] = ("note", f"not checked: may have moved to {same[0]} (not added to git)")
            else:
                left.append(key)
        if left and untracked:
            similar = self._similar_untracked(left, untracked)
            for key, where in similar.items():
                out[key] = ("note", f"not checked: may have moved to {where} (not added to git)")
            left = [key for key in left if key not in similar]
        if not left:
            return
        branch = self._default_has([p for _, p in left])
        for key in left:
            if isinstance(branch, str):
                out[key] = ("note", branch)
            elif key[1] in branch:
                out[key] = (
                    "note",
                    f"not on this branch (the default branch {branch[key[1]]} has it)",
                )

    def _similar_untracked(
        self, gone: list[tuple[str | None, str]], untracked: list[str]
    ) -> dict[tuple[str | None, str], str]:
        """Deleted files whose content an untracked file of the same extension holds at
        least half of (git's own rename threshold, by lines): moved by a plain ``mv``.
        One ``git cat-file --batch`` for the old contents; candidates read fenced."""
        wanted = [k for k in gone if k[0] and "\n" not in k[1]]
        exts = {os.path.splitext(k[1])[1] for k in wanted}
        candidates = [p for p in untracked if os.path.splitext(p)[1] in exts][:MAX_CANDIDATES]
        if not wanted or not candidates:
            return {}
        raw = self._run(
            "cat-file", "--batch", stdin="".join(f"{c}:{p}\n" for c, p in wanted).encode()
        )
        if isinstance(raw, str):
            return {}
        olds = _batch_contents(raw, len(wanted))
        texts: dict[str, frozenset[str]] = {}
        for rel in candidates:
            found = self.reader.stat(rel)
            text = anchors.read_head(os.path.join(self.top, rel)) if found else None
            if text is not None:
                texts[rel] = _lines(text)
        out = {}
        for key, old in zip(wanted, olds, strict=True):
            if old is None:
                continue
            before = _lines(old)
            for rel in (
                r for r in candidates if r in texts and r.endswith(os.path.splitext(key[1])[1])
            ):
                if before and len(before & texts[rel]) * 2 >= len(before):
                    out[key] = rel
                    break
        return out

    # ------------------------------------------------------------ git

    def _git_dir(self) -> str | None:
        """This worktree's own git dir (a linked worktree's ``.git`` is a ``gitdir:`` file)."""
        dot = os.path.join(self.top, ".git")
        try:
            st = os.lstat(dot)
            if stat.S_ISDIR(st.st_mode):
                return dot
            if not stat.S_ISREG(st.st_mode) or st.st_size > 4096:
                return None
            with open(dot, encoding="utf-8", errors="replace") as fh:
                line = fh.read(4096).strip()
        except OSError:
            return None
        if not line.startswith("gitdir:"):
            return None
        return os.path.normpath(os.path.join(self.top, line[len("gitdir:") :].strip()))

    def _unsure(self) -> str | None:
        """Why missing files cannot be judged here at all (None: they can)."""
        if not self.git:
            return "not checked: file missing, and no git repository to tell a rename"
        if self._git_dir() is None:
            return "not checked: file missing, the git folder cannot be read"
        return None

    def _in_progress(self) -> str | None:
        """A rebase, merge, cherry-pick or revert this worktree is in the middle of."""
        git_dir = self._git_dir()
        for name, what in (
            ("rebase-merge", "a rebase"),
            ("rebase-apply", "a rebase"),
            ("MERGE_HEAD", "a merge"),
            ("CHERRY_PICK_HEAD", "a cherry-pick"),
            ("REVERT_HEAD", "a revert"),
        ):
            if git_dir is not None and os.path.lexists(os.path.join(git_dir, name)):
                return what
        return None

    def _state(self) -> tuple[Any, ...]:
        """What git's answers depend on besides the commit: ``HEAD`` and the index."""
        git_dir = self._git_dir() or ""
        parts: list[Any] = [self.top]
        for name in ("HEAD", "index"):
            try:
                st = os.stat(os.path.join(git_dir, name))
                parts.append((st.st_mtime_ns, st.st_size))
            except OSError:
                parts.append(None)
        try:
            with open(os.path.join(git_dir, "HEAD"), "rb") as fh:
                parts.append(fh.read(200))
        except OSError:
            parts.append(None)
        return tuple(parts)

    def _cached(self, key: tuple[Any, ...], make: Any, *, fresh: bool = False) -> Any:
        now = time.monotonic()
        full = (*key, self._state())
        hit = _git_answers.get(full)
        if hit is not None and now - hit[0] < CACHE_SECONDS and not fresh:
            return hit[1]
        value = make()
        if len(_git_answers) > 256:
            _git_answers.clear()
        _git_answers[full] = (now, value)
        return value

    def _run(self, *args: str, stdin: bytes | None = None) -> bytes | str:
        """git's output, or why not (a note)."""
        left = self._deadline - time.monotonic()
        if left <= 0.05:
            return "not checked: file missing, git took too long in this recall"
        try:
            done = _git(self.top, *args, stdin=stdin, timeout=left)
        except FileNotFoundError:
            return "not checked: file missing, git is not installed"
        except (subprocess.TimeoutExpired, OSError) as exc:
            return f"not checked: file missing, git did not answer ({type(exc).__name__})"
        if done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace")
            if "bad revision" in err or "unknown revision" in err or "bad object" in err:
                return "not checked: file missing, its commit is unknown to this clone"
            first = err.strip().splitlines()[0][:200] if err.strip() else "no reason given"
            return f"not checked: file missing, git failed: {first}"
        return done.stdout[:MAX_GIT_BYTES]

    def _renames(self, commit: str, *, fresh: bool = False) -> dict[str, str] | str:
        """The anchor commit's files as the working tree has them: ``{old: new}`` for
        renames, ``{old: ""}`` for deletions (``git diff -M`` against the working
        tree, the index's renames included), or a note."""

        def make() -> dict[str, str] | str:
            raw = self._run("diff", "-M", "--name-status", "-z", "--no-ext-diff", commit, "--")
            if isinstance(raw, str):
                return raw
            fields = [f.decode("utf-8", "surrogateescape") for f in raw.split(b"\0")]
            out: dict[str, str] = {}
            i = 0
            while i < len(fields) and fields[i]:
                status = fields[i]
                if status[:1] in ("R", "C") and i + 2 < len(fields):
                    if status[0] == "R":
                        out[fields[i + 1]] = fields[i + 2]
                    i += 3
                    continue
                if status[:1] == "D" and i + 1 < len(fields):
                    out.setdefault(fields[i + 1], "")
                i += 2
            return out

        return self._cached(("diff", commit), make, fresh=fresh)

    def _untracked(self) -> list[str]:
        """Files git does not track (nor ignore): where an unannounced ``mv`` went."""

        def make() -> list[str]:
            raw = self._run("ls-files", "-z", "--others", "--exclude-standard")
            if isinstance(raw, str):
                return []
            return [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]

        return self._cached(("untracked",), make)

    def _default_has(self, paths: list[str]) -> dict[str, str] | str:
        """Of ``paths``, those the default branch has (``{path: branch}``), when this
        checkout is not at that branch's commit; ``{}`` when none or no default branch.
        The refs are asked once per ``HEAD`` and index, the branch's file list once per
        commit of it (a later missing file costs no git call)."""
        lines = ["HEAD", *DEFAULT_BRANCHES]

        def refs() -> list[str] | str:
            raw = self._run("cat-file", "--batch-check", stdin="\n".join(lines).encode() + b"\n")
            if isinstance(raw, str):
                return raw
            return raw.decode("utf-8", "replace").splitlines()

        answer = self._cached(("refs",), refs)
        if isinstance(answer, str):
            return answer
        if len(answer) != len(lines):
            return "not checked: file missing, git's answer about branches was unclear"
        ids = {line: answer[i].split(" ", 1)[0] for i, line in enumerate(lines)}
        have = {line: not answer[i].endswith(" missing") for i, line in enumerate(lines)}
        branch = next((b for b in DEFAULT_BRANCHES if have[b]), None)
        if branch is None or ids[branch] == ids["HEAD"]:
            return {}
        key = (self.top, ids[branch])
        if key not in _trees:
            raw = self._run("ls-tree", "-r", "-z", "--name-only", ids[branch])
            if isinstance(raw, str):
                return raw
            if len(_trees) >= 8:
                _trees.clear()
            _trees[key] = frozenset(
                p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p
            )
        return {p: branch for p in paths if p in _trees[key]}


def _has(key: tuple[str, int, int, int], name: str) -> bool | None:
    """Whether the file ``key`` names (path, mtime, size, inode: a changed file is
    another key) holds ``name``; None when it is binary or unreadable. Heads and
    answers are cached (the daemon asks about the same files again and again)."""
    hit = _answers.get((key, name), _MISS)
    if hit is not _MISS:
        return hit  # type: ignore[return-value]
    if key not in _texts:
        if len(_texts) >= MAX_CACHED_FILES:
            _texts.clear()
        _texts[key] = anchors.read_head(key[0])
    text = _texts[key]
    found = None if text is None else anchors.contains(text, name)
    if len(_answers) >= MAX_CACHED_ANSWERS:
        _answers.clear()
    _answers[(key, name)] = found
    return found


def _lines(text: str) -> frozenset[str]:
    """A file's distinct non-blank lines, stripped: what a similarity is counted on."""
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def _batch_contents(raw: bytes, count: int) -> list[str | None]:
    """``git cat-file --batch``'s answers in order: each object's text (None: missing,
    binary, or bigger than :data:`anchors.MAX_FILE_BYTES`)."""
    out: list[str | None] = []
    at = 0
    while len(out) < count and at < len(raw):
        end = raw.find(b"\n", at)
        if end < 0:
            break
        header = raw[at:end].split()
        at = end + 1
        if len(header) != 3 or not header[2].isdigit():
            out.append(None)
            continue
        size = int(header[2])
        body = raw[at : at + size]
        at += size + 1
        if size > anchors.MAX_FILE_BYTES or b"\0" in body[: anchors.BINARY_PROBE]:
            out.append(None)
        else:
            out.append(body.decode("utf-8", "replace"))
    return out + [None] * (count - len(out))


def _git(
    folder: str, *args: str, stdin: bytes | None = None, timeout: float = anchors.GIT_TIMEOUT
) -> subprocess.CompletedProcess[bytes]:
    """``git -C folder ARGS`` as :mod:`memloom.anchors` runs it: the caller's ``GIT_*``
    left out, no optional lock, no prompt, bounded time."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    return subprocess.run(
        ["git", "-C", folder, *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=min(timeout, anchors.GIT_TIMEOUT),
        env=env,
        check=False,
    )


def mark(memories: Sequence[dict[str, Any]], folder: str | None) -> None:
    """Set ``stale`` (and the checked ``anchors``) on memories as plain dicts (the
    hooks' fallback and digest rows) that carry anchors and no verdict yet; nothing
    when the folder is unusable. A failure leaves them unmarked (the hooks fail open)."""
    real = usable_folder(folder)
    todo = [m for m in memories if "stale" not in m and m.get("anchors")]
    if real is None or not todo:
        return
    tree = Tree(real)
    checks = tree.check_many([(m["anchors"], m.get("project")) for m in todo])
    for mem, check in zip(todo, checks, strict=True):
        mem["stale"] = check.stale
        mem["anchors"] = check.anchors
