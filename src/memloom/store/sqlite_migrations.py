"""SQLite schema, as an ordered list of migrations.

``PRAGMA user_version`` records how many have run; opening a store runs the rest
in one transaction each, so an older database is upgraded in place.
"""

from __future__ import annotations

from memloom.store.migration_sql import LEDGER_AGENT, LEDGER_NAMED_ROOT, MEMORY_ANCHORS

#: ``(path, rowid)`` of each anchor of ``{row}`` whose ``path`` is text (read from the
#: whole list by each item's key: an item that is not an object has no path, no error).
_ANCHOR_PATHS = (
    "SELECT json_extract({row}.anchors, a.fullkey || '.path'), {row}.rowid "
    "FROM json_each({row}.anchors) a "
    "WHERE json_type({row}.anchors, a.fullkey || '.path') = 'text'"
)

MIGRATIONS: list[str] = [
    # 1: memories, tags, meta
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE memories (
        rowid INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: caches key on it
        id TEXT NOT NULL UNIQUE,
        root_id TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1,
        status TEXT NOT NULL DEFAULT 'active'
            CHECK (status IN ('active', 'stale', 'expired')),
        type TEXT NOT NULL DEFAULT 'fact'
            CHECK (type IN ('fact', 'preference', 'episode', 'procedure')),
        text TEXT NOT NULL,
        original_text TEXT,
        content_hash TEXT NOT NULL,
        embedding BLOB,
        source TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        metadata TEXT NOT NULL DEFAULT '{}',
        project TEXT,
        sensitivity INTEGER NOT NULL DEFAULT 0 CHECK (sensitivity BETWEEN 0 AND 3),
        session_id TEXT,
        created_at REAL NOT NULL,
        asserted_at REAL NOT NULL,
        last_referenced REAL NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        expires_at REAL,
        expired_at REAL,
        superseded_by TEXT,
        decay_level INTEGER NOT NULL DEFAULT 0,
        pinned INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX memories_root ON memories (root_id, version);
    CREATE INDEX memories_hash ON memories (content_hash);
    CREATE INDEX memories_status_created ON memories (status, created_at);
    CREATE INDEX memories_project ON memories (project);
    CREATE TABLE memory_tags (
        tag TEXT NOT NULL,
        memory_rowid INTEGER NOT NULL REFERENCES memories (rowid) ON DELETE CASCADE,
        PRIMARY KEY (tag, memory_rowid)
    ) WITHOUT ROWID;
    CREATE INDEX memory_tags_row ON memory_tags (memory_rowid);
    """,
    # 2: keyword search (FTS5 with Porter stemming), kept in sync by triggers
    """
    CREATE VIRTUAL TABLE memories_fts USING fts5 (
        text, content='memories', content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE VIRTUAL TABLE memories_vocab USING fts5vocab (memories_fts, 'row');
    CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, text) VALUES (new.rowid, new.text);
    END;
    CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    END;
    CREATE TRIGGER memories_fts_au AFTER UPDATE OF text ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
        INSERT INTO memories_fts (rowid, text) VALUES (new.rowid, new.text);
    END;
    INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
    """,
    # 3: change tracking for other processes' caches, TTL index, conflicts, provenance
    """
    ALTER TABLE memories ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX memories_seq ON memories (seq);
    CREATE INDEX memories_ttl ON memories (expires_at)
        WHERE status = 'active' AND expires_at IS NOT NULL;
    CREATE TABLE tombstones (rowid INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
    CREATE INDEX tombstones_seq ON tombstones (seq);
    INSERT OR IGNORE INTO meta (key, value) VALUES ('seq', '0');
    CREATE TABLE conflicts (
        id TEXT PRIMARY KEY,
        new_id TEXT NOT NULL,
        existing_id TEXT NOT NULL,
        distance REAL,
        reason TEXT,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'resolved')),
        resolution TEXT,
        detail TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        resolved_at REAL
    );
    CREATE INDEX conflicts_status ON conflicts (status, created_at);
    CREATE INDEX conflicts_new ON conflicts (new_id);
    CREATE INDEX conflicts_existing ON conflicts (existing_id);
    CREATE TABLE provenance (
        id INTEGER PRIMARY KEY,
        memory_id TEXT NOT NULL,
        session_id TEXT,
        path TEXT,
        project TEXT,
        start_line INTEGER,
        end_line INTEGER,
        excerpt TEXT,
        created_at REAL NOT NULL
    );
    CREATE INDEX provenance_memory ON provenance (memory_id);
    """,
    # 4: session import: per-file ledger (watermark), transcript record ids seen
    # (dedupe across files), one provenance row per memory and line range
    """
    CREATE TABLE ledger (
        path TEXT PRIMARY KEY,
        session_id TEXT,
        project TEXT,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        offset INTEGER NOT NULL,
        lines INTEGER NOT NULL,
        hash TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('complete', 'partial')),
        memories INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        updated_at REAL NOT NULL
    );
    CREATE TABLE transcript_records (
        uuid TEXT PRIMARY KEY,
        path TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE UNIQUE INDEX provenance_unique
        ON provenance (memory_id, path, start_line, end_line);
    """,
    # 5: conversation order within a session (recall lifts a memory's neighbours)
    """
    CREATE INDEX memories_session ON memories (session_id, rowid)
        WHERE session_id IS NOT NULL;
    """,
    # 6: which coding agent a provenance row's session belongs to
    """
    ALTER TABLE provenance ADD COLUMN agent TEXT;
    """,
    # 7: which coding agent a ledger row's session belongs to (``memloom status``
    # per agent); rows written before are named by their key's shape
    LEDGER_AGENT,
    # 8: the agents' own memory files memloom reads (memloom.sessions.native): per
    # note, the memory it wrote; per file (note_key ''), its size and mtime
    """
    CREATE TABLE native_notes (
        path TEXT NOT NULL,
        note_key TEXT NOT NULL,
        agent TEXT NOT NULL,
        folder TEXT NOT NULL,
        project TEXT,
        memory_id TEXT,
        text_hash TEXT,
        start_line INTEGER,
        end_line INTEGER,
        size INTEGER,
        mtime REAL,
        owned INTEGER NOT NULL DEFAULT 0,
        updated_at REAL NOT NULL,
        PRIMARY KEY (path, note_key)
    );
    CREATE INDEX native_notes_folder ON native_notes (folder);
    CREATE INDEX native_notes_memory ON native_notes (memory_id);
    """,
    # 9: the folder the owner named with ``import sessions --path`` (``/context`` serves
    # lines of such a session from there)
    LEDGER_NAMED_ROOT,
    # 10: the code each memory is about (files, identifiers, commit: memloom.anchors)
    MEMORY_ANCHORS.format(json="TEXT"),
    # 11: the memories anchored to a file, looked up when an agent opens it
    # (memloom.capture.reads): each anchor's path, kept by triggers like the FTS index
    f"""
    CREATE TABLE memory_anchor_paths (
        path TEXT NOT NULL,
        memory_rowid INTEGER NOT NULL,
        PRIMARY KEY (path, memory_rowid)
    ) WITHOUT ROWID;
    CREATE INDEX memory_anchor_paths_row ON memory_anchor_paths (memory_rowid);
    INSERT OR IGNORE INTO memory_anchor_paths (path, memory_rowid)
        {_ANCHOR_PATHS.format(row="m").replace("FROM ", "FROM memories m, ", 1)};
    CREATE TRIGGER memories_anchor_paths_ai AFTER INSERT ON memories BEGIN
        INSERT OR IGNORE INTO memory_anchor_paths (path, memory_rowid)
            {_ANCHOR_PATHS.format(row="new")};
    END;
    CREATE TRIGGER memories_anchor_paths_au AFTER UPDATE OF anchors ON memories BEGIN
        DELETE FROM memory_anchor_paths WHERE memory_rowid = old.rowid;
        INSERT OR IGNORE INTO memory_anchor_paths (path, memory_rowid)
            {_ANCHOR_PATHS.format(row="new")};
    END;
    CREATE TRIGGER memories_anchor_paths_ad AFTER DELETE ON memories BEGIN
        DELETE FROM memory_anchor_paths WHERE memory_rowid = old.rowid;
    END;
    """,
]
