"""The Gemini CLI adapter: recordings under ``tmp/<project>/chats/``, hooks in ``settings.json``.

Registered as ``gemini``; its memories' ``source`` (:attr:`GeminiCli.name`) is
``gemini-cli``. :mod:`.home` (the one home folder), :mod:`.discover` (which
recordings to import), :mod:`.parse` (legacy ``.json`` and ``.jsonl`` as units),
:mod:`.project` (the project a recording belongs to: the files hold no cwd),
:mod:`.hooks` / :mod:`.jsonc` (the settings.json merge), :mod:`.payload` (the
hooks' stdin). Submodules load when first used; this module and the hook path
are standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from memloom.agents.adapter import AgentAdapter

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

    from memloom.agents.base import ParseResult

__all__ = ["GeminiCli"]


class GeminiCli(AgentAdapter):
    """:class:`memloom.agents.base.Agent` for Google Gemini CLI.

    ``candidate_roots``: project roots known from elsewhere (other agents' cwds,
    ``--path`` folders, hook payloads' ``cwd``), hashed against a recording's
    ``projectHash`` when ``projects.json`` and the ``.project_root`` marker do not
    name its project. The importer fills it before discovering and reading.

    ``rereads_whole``: every read folds the whole file (``$rewindTo``,
    ``$set.messages`` and re-emitted ids need it; legacy ``.json`` files are
    rewritten whole), so the importer's uuid check must include this session's
    own records (see :meth:`read`).

    Ledger identity: ``gemini:<sessionId>``: resume converts ``.json`` to ``.jsonl``
    and Gemini migrates project folders, but the session id stays.

    Context (checked against the real Gemini CLI 0.61.0, tests/e2e): hooks answer with
    JSON only (:meth:`format_context`); the digest goes with the first prompt
    (:attr:`digest_with_prompt`); the recall query is the typed prompt without the
    ``<hook_context>`` blocks Gemini put in it (:meth:`prompt_text`).
    """

    name = "gemini-cli"
    native_memory = True
    registry_name = "gemini"
    rereads_whole = True
    home_at = "home:gemini_home"
    transcripts_at = "home:tmp_dir"
    settings_at = "home:settings_path"
    ledger_prefix = "gemini"
    #: Gemini keeps no ``<hook_context>``-led message in a resumed session's history,
    #: and in headless mode it puts SessionStart's context in front of the typed
    #: prompt (so a resume dropped the user's first prompt along with the digest):
    #: memloom's digest goes out on BeforeAgent, as an extra part after the prompt.
    digest_with_prompt = True

    def __init__(self, candidate_roots: Iterable[str] = ()) -> None:
        self.candidate_roots: list[str] = list(candidate_roots)

    def discover_keywords(self) -> dict[str, Any]:
        return {"candidates": list(self.candidate_roots)}

    def read(self, path: Path, **watermark: Any) -> ParseResult:
        """The whole file folded; units new since the watermark (:mod:`.parse`).

        ``end_offset``/``lines_read`` are for the whole file; ``cwd`` is the project
        root when it can be found, else None with ``dropped["project_unresolved"] = 1``
        (the memories stay global).
        """
        from memloom.agents.gemini.discover import Head, session_project
        from memloom.agents.gemini.parse import parse_file

        res, meta = parse_file(path, **watermark)
        head = Head(True, meta.format, meta.session_id, meta.project_hash, meta.kind)
        match = session_project(Path(path), head, self.candidate_roots)
        res.cwd = match.root
        if match.root is None:
            res.dropped["project_unresolved"] = 1
        return res

    def read_bytes(self, data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
        from memloom.agents.gemini.parse import parse_bytes

        return parse_bytes(data, first_line=first_line, final=final)[0]

    def use_project_roots(self, roots: Sequence[Path]) -> None:
        """Gemini records no working directory: these are the roots whose sha256 may
        be a session's ``projectHash``."""
        self.candidate_roots = [str(r) for r in roots]

    def prompt_text(self, payload: Mapping[str, Any]) -> Any:
        """BeforeAgent's ``prompt`` less the ``<hook_context>`` blocks: in headless mode
        Gemini puts the SessionStart context (memloom's digest) in front of the typed
        prompt, and that would be the recall query (:mod:`.markup`)."""
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            return prompt
        from memloom.agents.gemini.markup import without_hook_context

        return without_hook_context(prompt).strip()

    def read_path(self, payload: Mapping[str, Any]) -> str | None:
        """AfterTool of ``read_file``: its ``file_path`` argument (relative to the
        workspace, the payload's ``cwd``, or absolute); not when it answered an error."""
        return self.tool_file(payload, ("read_file",))

    def format_context(self, event: str, text: str) -> str:
        """``hookSpecificOutput.additionalContext`` on BeforeAgent / SessionStart /
        AfterTool (stdout must be JSON or nothing; AfterTool's is appended to the tool's
        result in ``<hook_context>``)."""
        import json

        if not text:
            return ""
        hook = {"prompt": "BeforeAgent", "session-start": "SessionStart", "read": "AfterTool"}
        hook = hook.get(event, event)
        return json.dumps(
            {"hookSpecificOutput": {"hookEventName": hook, "additionalContext": text}}
        )

    def project_of(self, path: Path) -> str | None:
        return self.project_match(path).root

    def project_match(self, path: Path) -> Any:
        """The :class:`~.project.ProjectMatch` for ``path``: its root and how, or why not."""
        from memloom.agents.gemini.discover import session_project

        return session_project(Path(path), candidates=self.candidate_roots)

    def recognises(self, path: Path) -> bool:
        """Whether ``path`` is a Gemini CLI recording by its content (``--path`` files)."""
        from memloom.agents.gemini.discover import read_head

        return read_head(Path(path)).is_session
