"""What the installed agents' hooks run. Fast, silent on failure, never blocking.

Both commands exit 0 whatever happens: a memory system must never break the
user's session. Failures are recorded in ``capture.db``'s event log instead
(``memloom status`` shows the last one).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from memloom.daemon_record import read_daemon
from memloom.location import resolve_home

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

RECALL_TIMEOUT_S = 2.0
#: The per-session mark a compaction leaves for an agent whose compaction hook cannot add
#: context (Gemini CLI's PreCompress): the next prompt hook gives the digest again.
DIGEST_DUE_ID = "memloom:digest-due"


def _post(
    daemon: dict[str, Any], location: Any, path: str, body: dict[str, Any], timeout: float
) -> Any:
    """``body`` to the running daemon (its record's address), the JSON it answered; the
    daemon first proves it holds this data folder's token (``location``: where the
    store and its config are), so nothing reaches a process that took its port."""
    from urllib.parse import urlsplit

    from memloom.access import find_token
    from memloom.capture.local_http import LocalHTTPError, post_json

    where = urlsplit(daemon["url"])
    if where.scheme != "http" or where.hostname is None or where.port is None:
        raise ValueError(f"the daemon record's URL is not http://host:port: {daemon['url']!r}")
    source = find_token(location.home, location.raw)
    if source is None:
        raise LocalHTTPError("no API token to reach the daemon with (it writes api-token)")
    return post_json(where.hostname, where.port, path, body, timeout=timeout, token=source.token)


def _read_stdin(data: str | None = None) -> dict[str, Any]:
    """The hook's JSON payload: ``data`` if it was read already, else stdin."""
    data = sys.stdin.read() if data is None else data
    payload = json.loads(data) if data.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError("hook input is not a JSON object")
    return payload


def notify(home: Path, agent: str, data: str | None = None) -> None:
    """Queue the finished session (``data``: the payload, if read already; the hook's
    own process read it and forked first, :mod:`memloom.capture.background`)."""
    payload = _read_stdin(data)
    from memloom.capture.notify import NotificationRefused, accept_notification

    try:
        # Validates, queues, logs. A running daemon sees the job within its poll
        # interval (Services.POLL_SECONDS): no request to it, so no round trip here.
        accept_notification(home, payload, agent=agent)
    except NotificationRefused:
        return  # already recorded in the event log


def prompt_recall(home: Path, agent: str, note: str = "") -> str:
    """The memories relevant to this prompt that this session was not shown yet, within
    ``[recall] prompt_tokens``; nothing at all when none passes the threshold.

    For an agent whose session-start context does not last (``digest_with_prompt``),
    the session's digest comes first, with the first prompt: its memories are then
    recorded as shown like the others, so the digest is given once. So does it with
    the first prompt after a compaction the agent signalled before it compacted
    (:func:`compacted`). ``note`` (the plugin's upgrade note) leads the first output
    of the session."""
    from memloom.agents import get_agent
    from memloom.capture.prompt import (
        PROMPT_MEMORIES,
        format_block,
        format_digest,
        fresh_within,
        hook_query,
        keyword_recall,
        recall_tokens,
        wants_recall,
    )
    from memloom.capture.scope import load_scope
    from memloom.location import locate
    from memloom.project import project_key

    payload = _read_stdin()
    adapter = get_agent(agent)
    lead = note if note and _claim_note(home, payload) else ""
    prompt = adapter.prompt_text(payload)  # what was typed, without the agent's wrapping
    if not wants_recall(prompt) or not load_scope(home).recall:
        return adapter.format_context("prompt", lead) if lead else ""
    settings = locate(home)
    # The agent's folder names its repository's project (worktrees, clones: one), and is
    # the working tree the memories' anchors are checked in.
    folder = adapter.hook_cwd(payload)
    project = project_key(folder) or None

    def pick(seen: set[str]) -> list[Any]:
        # Ask for as many more as were shown already, so that new ones still fill the slots.
        query = {
            **hook_query(prompt, project, adapter.name, folder=folder),
            "max_results": PROMPT_MEMORIES + len(seen),
        }
        daemon = read_daemon(home)
        memories = None
        if daemon is not None:
            try:
                found = _post(daemon, settings, "/v1/memory/recall", query, RECALL_TIMEOUT_S)
                memories = found["memories"]
            except Exception as exc:
                _log(home, "hook_recall_failed", str(exc))
        if memories is None:
            memories = keyword_recall(
                settings, prompt, project, limit=query["max_results"], agent=adapter.name
            )
            _mark_stale(home, memories, folder)
        budget = recall_tokens(settings.raw, "prompt_tokens")
        return fresh_within(memories, seen, PROMPT_MEMORIES, budget)

    digest: list[Any] = []

    def pick_both(seen: set[str]) -> list[Any]:
        digest[:] = _digest(settings, project, seen, adapter.name, folder)
        return digest + pick(seen | {str(m["id"]) for m in digest})

    if adapter.digest_with_prompt:
        shown = _once_per_session(home, settings, payload, pick_both)
    else:
        shown = _once_per_session(home, settings, payload, pick, after_compaction=pick_both)
    kept = {str(m["id"]) for m in shown}
    first = [m for m in digest if str(m["id"]) in kept]  # what this call claimed
    parts = [lead, format_digest(first), format_block(shown[len(first) :])]
    block = "\n".join(part for part in parts if part)
    return adapter.format_context("prompt", block) if block else ""


def read_recall(home: Path, agent: str) -> str:
    """The memories anchored to the file the agent's read tool just opened
    (:mod:`memloom.capture.reads`), within ``[recall] read_tokens``: each file once per
    session, and no memory the session was shown already; nothing at all when none."""
    from memloom.agents import get_agent
    from memloom.capture.prompt import format_block, fresh_within, recall_tokens
    from memloom.capture.queues import open_queue
    from memloom.capture.reads import READ_MEMORIES, anchored_memories, opened_file, read_mark
    from memloom.capture.scope import load_scope
    from memloom.location import locate
    from memloom.project import project_key

    payload = _read_stdin()
    adapter = get_agent(agent)
    path = adapter.read_path(payload)
    if path is None or not load_scope(home).recall:
        return ""
    cwd = adapter.hook_cwd(payload)
    opened = opened_file(cwd, path)
    project = project_key(cwd) if opened else None
    if opened is None or not project:
        return ""
    mark = read_mark(project, opened[1])
    settings = locate(home)
    session = _session_id(payload)
    queue = open_queue(home, settings)
    try:
        seen = queue.injected(session) if session else set()
        if mark in seen:
            return ""  # this file was given this session already
        budget = recall_tokens(settings.raw, "read_tokens")
        found = anchored_memories(settings, project, opened[1], agent=adapter.name)
        _mark_stale(home, found, cwd)  # a memory whose code changed says so (point 2)
        shown = fresh_within(found, seen, READ_MEMORIES, budget)
        if session and shown:  # a file that gave nothing may give a memory saved later
            # Recording is the claim (as for a prompt): a read of the same file at the
            # same time, or a prompt hook, that claimed a memory first shows it alone.
            claimed = queue.record_injected(session, [mark, *(str(m["id"]) for m in shown)])
            if mark not in claimed:
                return ""
            shown = [m for m in shown if str(m["id"]) in claimed]
    finally:
        queue.close()
    block = format_block(shown)
    return adapter.format_context("read", block) if block else ""


def _once_per_session(
    home: Path,
    settings: Any,
    payload: dict[str, Any],
    pick: Callable[[set[str]], list[Any]],
    *,
    again: bool = False,
    after_compaction: Callable[[set[str]], list[Any]] | None = None,
) -> list[Any]:
    """``pick(seen)``: the memories to show, given those this agent session was shown
    already; they are recorded as shown. Without a session id nothing is recorded.

    Recording is the claim: of the picked memories only those this call recorded first
    are shown. Copilot CLI runs its sessionStart and userPromptSubmitted hooks at the
    same time, so both read the same ``seen``; without the claim a pinned memory that
    fits the prompt went in twice (digest and prompt context).

    ``again``: the agent dropped what it was shown before (a resumed Qwen Code session
    rebuilds its system prompt): pick as if nothing was shown, and show it all.

    ``after_compaction``: what picks instead when the session holds the mark of a
    compaction (:data:`DIGEST_DUE_ID`, taken by this call alone)."""
    from memloom.capture.queues import open_queue

    session = _session_id(payload)
    queue = open_queue(home, settings)
    try:
        if session and after_compaction and queue.take_injected(session, DIGEST_DUE_ID):
            pick = after_compaction
        shown = pick(queue.injected(session) if session and not again else set())
        if shown and session:
            claimed = queue.record_injected(session, [str(m["id"]) for m in shown])
            shown = shown if again else [m for m in shown if str(m["id"]) in claimed]
    finally:
        queue.close()
    return shown


def _session_id(payload: dict[str, Any]) -> str | None:
    """The agent session a hook is for (Copilot CLI and OpenCode's plugin say sessionId)."""
    session = payload.get("session_id") or payload.get("sessionId")
    return session if isinstance(session, str) and session else None


def _forget_shown(home: Path, settings: Any, session: str | None, *, due: bool) -> None:
    """The agent compacted ``session``: what memloom showed it is gone from its context,
    so forget it (the plugin's note stays said). ``due``: leave the mark that has the
    next prompt hook give the digest (:data:`DIGEST_DUE_ID`)."""
    from memloom.capture.plugin import UPGRADE_NOTE_ID
    from memloom.capture.queues import open_queue

    if session is None:
        return  # nothing was recorded for it either
    queue = open_queue(home, settings)
    try:
        queue.forget_injected(session, frozenset({UPGRADE_NOTE_ID}))
        if due:
            queue.record_injected(session, [DIGEST_DUE_ID])
    finally:
        queue.close()


def compacted(home: Path, agent: str) -> str:
    """The agent is about to compact the session's context and its hook for it cannot
    add context (Gemini CLI's PreCompress): forget what the session was shown, so the
    next prompt hook gives the project's digest once more, and a memory that fits a
    later prompt may be shown again. Prints nothing."""
    from memloom.agents import get_agent
    from memloom.location import locate

    payload = _read_stdin()
    get_agent(agent)  # an unknown agent is an error, logged like any other
    if payload.get("hook_event_name") == "PreCompress" and payload.get("trigger") == "auto":
        return ""  # Gemini CLI 0.61.0 fires it before every turn, compressing or not
    _forget_shown(home, locate(home), _session_id(payload), due=True)
    return ""


def session_start(home: Path, agent: str, note: str = "") -> str:
    """The project's digest (pinned memories, then its most-used preferences and
    procedures) within ``[recall] digest_tokens``, each memory once per session: what it
    shows, prompt-time recall will not show again. ``note``: as for :func:`prompt_recall`.

    A session start after a compaction (:meth:`~memloom.agents.adapter.AgentAdapter.compacted`:
    Claude Code's and Qwen Code's ``source: "compact"``) first forgets what the session
    was shown: the digest comes back once, and a memory that fits a later prompt may be
    shown again."""
    from memloom.agents import get_agent
    from memloom.capture.prompt import format_digest
    from memloom.capture.scope import load_scope
    from memloom.location import locate
    from memloom.project import project_key

    payload = _read_stdin()
    adapter = get_agent(agent)
    if adapter.compacted(payload):
        # An agent whose digest goes with the prompt gets it there, unseen again.
        _forget_shown(home, locate(home), _session_id(payload), due=False)
    if adapter.digest_with_prompt:
        return ""  # the prompt hook gives the digest (an older install may still call this)
    lead = note if note and _claim_note(home, payload) else ""
    if not load_scope(home).recall:
        return adapter.format_context("session-start", lead) if lead else ""
    settings = locate(home)
    # The agent's folder names its repository's project (worktrees, clones: one).
    folder = adapter.hook_cwd(payload)
    project = project_key(folder) or None

    def pick(seen: set[str]) -> list[Any]:
        return _digest(settings, project, seen, adapter.name, folder)

    again = adapter.digest_each_start and payload.get("source") not in (None, "startup")
    digest = format_digest(_once_per_session(home, settings, payload, pick, again=again))
    block = "\n".join(part for part in (lead, digest) if part)
    return adapter.format_context("session-start", block) if block else ""


def _claim_note(home: Path, payload: dict[str, Any]) -> bool:
    """Whether this hook is the first of its agent session to give the plugin's note
    (claimed like a shown memory; without a session id, every hook gives it)."""
    from memloom.capture.plugin import UPGRADE_NOTE_ID
    from memloom.capture.queues import open_queue

    session = _session_id(payload)
    if session is None:
        return True
    queue = open_queue(home)
    try:
        return bool(queue.record_injected(session, [UPGRADE_NOTE_ID]))
    finally:
        queue.close()


def _digest(
    settings: Any, project: str | None, seen: set[str], agent: str, folder: str | None = None
) -> list[Any]:
    """The digest's memories this session was not shown yet, within ``[recall]
    digest_tokens``; none from ``agent``'s own memory (it shows them itself). Those
    whose code changed in ``folder``'s working tree say so (:func:`_mark_stale`)."""
    from memloom.capture.prompt import digest_memories, fresh_within, recall_tokens

    budget = recall_tokens(settings.raw, "digest_tokens")
    candidates = digest_memories(settings, project, agent)
    _mark_stale(settings.home, candidates, folder)
    return fresh_within(candidates, seen, DIGEST_LIMIT, budget)


def _mark_stale(home: Path, memories: list[Any], folder: str | None) -> None:
    """Memories read here, not by the daemon (the keyword fallback, the digest): their
    anchors checked in the agent's folder (:func:`memloom.staleness.mark`). A failure
    is logged, and the hook goes on (it never fails the agent)."""
    if not folder or not any(m.get("anchors") for m in memories):
        return
    try:
        from memloom.staleness import mark

        mark(memories, folder)
    except Exception as exc:
        _log(home, "hook_stale_check_failed", f"{type(exc).__name__}: {exc}")


#: The most memories a digest lists (its token budget usually stops it first).
DIGEST_LIMIT = 40


def _log(home: Path, kind: str, detail: str) -> None:
    try:
        from memloom.capture.queues import open_queue

        queue = open_queue(home)
        try:
            queue.log(kind, detail[:500])
        finally:
            queue.close()
    except Exception:  # the event log itself failed: nowhere left to record it
        return


#: Made by the first plugin hook that says which distiller memloom uses: said once.
DISTILLER_NOTE_FILE = "distiller-announced"


def distiller_note(home: Path) -> str:
    """Once per data folder, the first session of memloom's agent plugin says which LLM
    will distil the agent's sessions and how to change it ("" every time after)."""
    import os

    try:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(home / DISTILLER_NOTE_FILE, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return ""
    from memloom.distiller import chosen
    from memloom.location import locate

    name, why = chosen(config=locate(home).raw)  # no provider loaded: a hook's budget
    description = f"{name} ({why})"
    with os.fdopen(fd, "w") as fh:
        fh.write(description + "\n")
    return (
        f"memloom (tell the user once): finished sessions are distilled into memories by "
        f"{description}. To change it: memloom llm use <claude|codex|gemini|qwen|copilot|"
        "opencode|offline>; `memloom llm` lists the choices."
    )


def run_hook(
    name: str,
    home: str | None,
    agent: str | None = None,
    *,
    plugin: str | None = None,
    payload: str | None = None,
) -> int:
    """Run hook ``name`` for ``agent`` (default Claude Code); always exit status 0.
    ``payload``: the hook's stdin, when it was read already (a notify's own process
    reads it and forks before it loads this module: ``memloom._entry``). ``plugin``:
    the version of the agent plugin whose hook this is
    (:mod:`memloom.capture.plugin`): it stands down where ``memloom connect``'s hook of
    the same kind is installed, and says once a session when memloom is older."""
    from memloom.agents import DEFAULT_AGENT

    where = resolve_home(home)
    agent = agent or DEFAULT_AGENT
    try:
        note = ""
        if plugin is not None:
            import memloom
            from memloom.agents import get_agent
            from memloom.capture.plugin import adopt_scope, defers, older_than, upgrade_note

            if defers(get_agent(agent), name):
                return 0  # connect's hook of this kind runs: one hook fires once
            if name == "notify":
                adopt_scope(where)
            if older_than(memloom.__version__, plugin):
                note = upgrade_note(memloom.__version__, plugin)
            # compacted prints nothing; a read's context is about the file alone
            if name not in ("notify", "compacted", "read"):
                note = "\n".join(part for part in (note, distiller_note(where)) if part)
        if name == "notify":
            notify(where, agent, payload)
        elif name == "compacted":
            compacted(where, agent)
        elif name == "read":
            block = read_recall(where, agent)
            if block:
                sys.stdout.write(block)
                sys.stdout.flush()
        else:
            make = session_start if name == "session-start" else prompt_recall
            block = make(where, agent, note)
            if block:
                sys.stdout.write(block)
                sys.stdout.flush()
    except Exception as exc:  # never fail the user's session; record why
        _log(where, f"hook_{name.replace('-', '_')}_error", f"{type(exc).__name__}: {exc}")
    return 0
