"""Claude Code session transcripts: find them (:mod:`.discover`) and read them (:mod:`.parse`)."""

from memloom.sessions.discover import (
    Discovery,
    SessionFile,
    claude_root,
    discover,
    discover_paths,
    is_main_transcript,
    session_project,
)
from memloom.sessions.parse import (
    MEMLOOM_CONTEXT_CLOSE,
    MEMLOOM_CONTEXT_OPEN,
    ParseResult,
    Unit,
    parse_bytes,
    parse_transcript,
)

__all__ = [
    "MEMLOOM_CONTEXT_CLOSE",
    "MEMLOOM_CONTEXT_OPEN",
    "Discovery",
    "ParseResult",
    "SessionFile",
    "Unit",
    "claude_root",
    "discover",
    "discover_paths",
    "is_main_transcript",
    "parse_bytes",
    "parse_transcript",
    "session_project",
]
