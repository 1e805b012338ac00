"""One import run over several agents, and the project folders the ledger vouches for.

:class:`~memloom.sessions.importer.Importer` imports one agent's sessions; this module
runs it for each agent a caller names (or every agent found), and tells the adapters
that look in project folders which folders memloom knows for sure.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memloom.agents import DEFAULT_AGENT, session_container
from memloom.agents.discovery import inside
from memloom.sessions.importer import ImportEngine, Importer, ImportOptions, ImportReport

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memloom.llm.base import LLM
    from memloom.store.base import LedgerRow

__all__ = ["import_agents", "share_project_roots"]


def import_agents(
    engine: ImportEngine, llm: LLM, options: ImportOptions, agent: str | None = None
) -> ImportReport:
    """One import over several agents: ``agent`` names one (a registry name), or None /
    ``"all"`` for every agent found on this machine. ``options.paths`` given: each file
    goes to the agent that recognises its content (:func:`memloom.agents.agent_for_file`),
    each folder to every agent (each finds its own files there); a file no agent
    recognises goes to the default agent (Claude Code), whose reader counts what it
    cannot parse; a file of another agent than the one named is counted under
    ``not_transcripts``."""
    from memloom.agents import (
        ALIASES,
        agent_for_file,
        agent_names,
        found_agents,
        session_container,
    )

    agent = ALIASES.get(agent, agent) if agent is not None else None
    every = agent is None or agent == "all"
    if not every and agent not in agent_names():
        raise ValueError(f"unknown agent {agent!r} (known: {', '.join(agent_names())}, all)")
    runs: list[tuple[str, list[Path] | None]] = []
    unrecognised = 0
    if options.paths:
        names = list(agent_names()) if every else [agent]
        by_agent: dict[str, list[Path]] = {n: [] for n in names}
        for path in (Path(p) for p in options.paths):
            if path.is_dir():
                for name in names:
                    by_agent[name].append(path)
                continue
            owner = agent_for_file(path) if Path(session_container(path)).exists() else None
            if owner is None:
                # Named explicitly, that agent's reader decides; otherwise the default
                # agent's, which skips and counts what it cannot parse (as before agents).
                owner = DEFAULT_AGENT if every else agent
            if owner in by_agent:
                by_agent[owner].append(path)
            else:
                unrecognised += 1  # recognised as another agent's than the one named
        runs = [(name, paths) for name, paths in by_agent.items() if paths]
    else:
        share_project_roots(engine)
        runs = [(name, None) for name in (found_agents() if every else [agent])]
    outer = options.progress

    def progress(event: dict[str, Any]) -> None:
        if outer is not None and event.get("event") != "done":  # one "done", for the total
            outer(event)

    total: ImportReport | None = None
    for name, paths in runs:
        each = replace(options, agent=name, paths=paths, progress=progress)
        report = Importer(engine, llm, each).run()
        if total is None:
            total = report
        else:
            total.absorb(report)
        if report.stopped:
            break
    if total is None:
        total = ImportReport(
            llm=getattr(llm, "description", getattr(llm, "name", "")),
            offline=bool(getattr(llm, "offline", False)),
            dry_run=options.dry_run,
        )
    total.skipped["not_transcripts"] = total.skipped.get("not_transcripts", 0) + unrecognised
    if outer is not None:
        outer({"event": "done", "report": total.model_dump()})
    return total


def share_project_roots(
    engine: ImportEngine, named: Iterable[str | os.PathLike[str]] = ()
) -> list[Path]:
    """Tell the adapters that look for sessions in project folders (Aider's histories
    sit in the repository, not in an agent home) which folders memloom knows for sure,
    those that exist on this machine: ``named`` (the folders ``memloom connect aider``
    named), and from the ledger the folders of Aider histories memloom imported and
    the working directories of sessions it imported from an agent's own folder.

    Never a memory's ``project`` label: any API caller can set one, and the sweep would
    then read (and send to the LLM) whatever history sits in the folder it names."""
    from memloom.agents import agent_names, get_agent

    names = {os.fspath(p) for p in named}
    names.update(r for r in map(_ledger_root, engine.backend.all_ledger()) if r)
    roots = sorted(Path(p) for p in names if p and Path(p).is_absolute() and Path(p).is_dir())
    for name in agent_names():
        get_agent(name).use_project_roots(roots)
    return roots


def _ledger_root(row: LedgerRow) -> str | None:
    """The project folder a ledger row vouches for: an Aider history's folder; the
    project of a session file that lies in its agent's home (a file imported with
    ``--path`` from elsewhere vouches for nothing); the project of an agent whose rows
    are keyed by session id (Codex, Gemini, OpenCode: discovery found it)."""
    from memloom.agents import agent_for_source

    if row.agent == "aider":
        return os.path.dirname(row.path) if os.path.isabs(row.path) else None
    if not os.path.isabs(row.path):
        return row.project
    home = os.path.realpath(agent_for_source(row.agent).home())
    return row.project if inside(os.path.realpath(session_container(row.path)), home) else None
