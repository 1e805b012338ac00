"""Migration statements that are the same text in SQLite and PostgreSQL.

Both schemas' migration lists (:mod:`.sqlite_migrations`, :mod:`.postgres_migrations`)
take these as they are; like every migration, they never change once released.
"""

from __future__ import annotations

__all__ = ["LEDGER_AGENT", "LEDGER_NAMED_ROOT", "MEMORY_ANCHORS"]

#: Which coding agent a ledger row's session belongs to (``memloom status`` per agent);
#: rows written before are named by their key's shape.
LEDGER_AGENT = """
    ALTER TABLE ledger ADD COLUMN agent TEXT;
    UPDATE ledger SET agent = CASE
        WHEN path LIKE 'codex:%' THEN 'codex'
        WHEN path LIKE 'gemini:%' THEN 'gemini-cli'
        WHEN path LIKE 'copilot:%' OR path LIKE 'copilot-legacy:%' THEN 'copilot-cli'
        WHEN path LIKE '%.aider.chat.history.md' THEN 'aider'
        ELSE 'claude-code' END;
    """

#: The folder the owner named with ``import sessions --path`` (``LedgerRow.named_root``):
#: ``/context`` serves lines of such a session from there. Rows written before have none.
LEDGER_NAMED_ROOT = """
    ALTER TABLE ledger ADD COLUMN named_root TEXT;
    """

#: The code a memory is about (``MemoryRow.anchors``, :mod:`memloom.anchors`): a JSON
#: list of ``{"path", "symbols", "commit", "root", "via"}``. Rows written before have none.
MEMORY_ANCHORS = """
    ALTER TABLE memories ADD COLUMN anchors {json} NOT NULL DEFAULT '[]';
    """
