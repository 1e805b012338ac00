"""PostgreSQL schema, as an ordered list of migrations.

``memloom_schema.version`` records how many have run. Opening a store takes an
advisory lock first, so several ``memloom serve`` processes starting at once
migrate the database exactly once.
"""

from __future__ import annotations

from memloom.store.migration_sql import LEDGER_AGENT, LEDGER_NAMED_ROOT, MEMORY_ANCHORS

MIGRATIONS: list[str] = [
    # 1: the whole model of SQLite's five migrations, plus owners and API tokens
    """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE memories (
        rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,  -- conversation and page order
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL DEFAULT 'local',
        root_id TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1,
        status TEXT NOT NULL DEFAULT 'active'
            CHECK (status IN ('active', 'stale', 'expired')),
        type TEXT NOT NULL DEFAULT 'fact'
            CHECK (type IN ('fact', 'preference', 'episode', 'procedure')),
        text TEXT NOT NULL,
        original_text TEXT,
        content_hash TEXT NOT NULL,
        embedding vector,  -- typed vector(dim) and HNSW-indexed once the dimension is known
        source TEXT,
        tags TEXT[] NOT NULL DEFAULT '{}',
        metadata JSONB NOT NULL DEFAULT '{}',
        project TEXT,
        sensitivity INTEGER NOT NULL DEFAULT 0 CHECK (sensitivity BETWEEN 0 AND 3),
        session_id TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        asserted_at DOUBLE PRECISION NOT NULL,
        last_referenced DOUBLE PRECISION NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        expires_at DOUBLE PRECISION,
        expired_at DOUBLE PRECISION,
        superseded_by TEXT,
        decay_level INTEGER NOT NULL DEFAULT 0,
        pinned BOOLEAN NOT NULL DEFAULT FALSE,
        -- the keyword arm: FTS5-identical stems (GIN), their counts and the length in tokens
        terms TSVECTOR NOT NULL DEFAULT ''::tsvector,
        term_counts JSONB NOT NULL DEFAULT '{}',
        doc_len INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX memories_root ON memories (root_id, version);
    CREATE INDEX memories_hash ON memories (content_hash, owner);
    CREATE INDEX memories_status_created ON memories (status, created_at);
    CREATE INDEX memories_owner_status ON memories (owner, status);
    CREATE INDEX memories_project ON memories (project);
    CREATE INDEX memories_tags ON memories USING GIN (tags);
    CREATE INDEX memories_terms ON memories USING GIN (terms);
    CREATE INDEX memories_ttl ON memories (expires_at)
        WHERE status = 'active' AND expires_at IS NOT NULL;
    CREATE INDEX memories_session ON memories (session_id, rowid)
        WHERE session_id IS NOT NULL;
    CREATE INDEX memories_decay ON memories (decay_level, last_referenced)
        WHERE status = 'active' AND NOT pinned;
    -- documents per stem, for BM25's IDF (FTS5 keeps the same in its index)
    CREATE TABLE term_stats (term TEXT PRIMARY KEY, docs BIGINT NOT NULL);
    INSERT INTO meta (key, value) VALUES ('kw_docs', '0'), ('kw_tokens', '0');
    CREATE TABLE conflicts (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL DEFAULT 'local',
        new_id TEXT NOT NULL,
        existing_id TEXT NOT NULL,
        distance DOUBLE PRECISION,
        reason TEXT,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'resolved')),
        resolution TEXT,
        detail JSONB NOT NULL DEFAULT '{}',
        created_at DOUBLE PRECISION NOT NULL,
        resolved_at DOUBLE PRECISION
    );
    CREATE INDEX conflicts_status ON conflicts (status, created_at);
    CREATE INDEX conflicts_new ON conflicts (new_id);
    CREATE INDEX conflicts_existing ON conflicts (existing_id);
    CREATE TABLE provenance (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        owner TEXT NOT NULL DEFAULT 'local',
        memory_id TEXT NOT NULL,
        session_id TEXT,
        path TEXT,
        project TEXT,
        start_line INTEGER,
        end_line INTEGER,
        excerpt TEXT,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX provenance_memory ON provenance (memory_id);
    CREATE UNIQUE INDEX provenance_unique
        ON provenance (memory_id, path, start_line, end_line) NULLS NOT DISTINCT;
    CREATE TABLE ledger (
        owner TEXT NOT NULL DEFAULT 'local',
        path TEXT NOT NULL,
        session_id TEXT,
        project TEXT,
        size BIGINT NOT NULL,
        mtime DOUBLE PRECISION NOT NULL,
        "offset" BIGINT NOT NULL,
        lines BIGINT NOT NULL,
        hash TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('complete', 'partial')),
        memories INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (owner, path)
    );
    CREATE TABLE transcript_records (
        owner TEXT NOT NULL DEFAULT 'local',
        uuid TEXT NOT NULL,
        path TEXT NOT NULL,
        PRIMARY KEY (owner, uuid)
    );
    CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY,
        name TEXT,
        owner TEXT NOT NULL,
        shared TEXT[] NOT NULL DEFAULT '{}',
        token_hash TEXT NOT NULL UNIQUE,
        created_at DOUBLE PRECISION NOT NULL,
        last_used_at DOUBLE PRECISION,
        revoked_at DOUBLE PRECISION
    );
    -- continuous capture: finished sessions waiting for import. Transcripts are files
    -- on one machine, so a job belongs to the host that queued it; the servers of that
    -- host share its queue and claim jobs with SELECT ... FOR UPDATE SKIP LOCKED.
    CREATE TABLE capture_jobs (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        owner TEXT NOT NULL DEFAULT 'local',
        host TEXT NOT NULL,
        transcript_path TEXT NOT NULL,
        session_id TEXT,
        cwd TEXT,
        reason TEXT,
        status TEXT NOT NULL DEFAULT 'queued'
            CHECK (status IN ('queued', 'running', 'done', 'skipped', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        detail TEXT,
        enqueued_at DOUBLE PRECISION NOT NULL,
        started_at DOUBLE PRECISION,
        finished_at DOUBLE PRECISION
    );
    CREATE INDEX capture_jobs_status ON capture_jobs (host, status, id);
    CREATE UNIQUE INDEX capture_jobs_waiting ON capture_jobs (owner, host, transcript_path)
        WHERE status = 'queued';
    CREATE TABLE capture_budget (
        owner TEXT NOT NULL DEFAULT 'local',
        day TEXT NOT NULL,
        calls INTEGER NOT NULL,
        PRIMARY KEY (owner, day)
    );
    CREATE TABLE capture_events (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        owner TEXT NOT NULL DEFAULT 'local',
        host TEXT NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT,
        at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX capture_events_kind ON capture_events (owner, host, kind, id);
    """,
    # 2: recall's touch as a HOT update (no index holds last_referenced, pages keep
    # room), and memory counts kept per owner (COUNT(*) reads every row)
    """
    ALTER TABLE memories SET (fillfactor = 85);
    DROP INDEX IF EXISTS memories_decay;
    CREATE INDEX memories_decay ON memories (decay_level) WHERE status = 'active' AND NOT pinned;
    CREATE TABLE owner_counts (owner TEXT PRIMARY KEY, memories BIGINT NOT NULL);
    INSERT INTO owner_counts (owner, memories) SELECT owner, COUNT(*) FROM memories GROUP BY owner;
    """,
    # 3: which coding agent a provenance row's session belongs to
    """
    ALTER TABLE provenance ADD COLUMN agent TEXT;
    """,
    # 4: which coding agent a ledger row's session belongs to (``memloom status``
    # per agent); rows written before are named by their key's shape
    LEDGER_AGENT,
    # 5: what the prompt hooks showed each agent session (never shown twice)
    """
    CREATE TABLE capture_injected (
        owner TEXT NOT NULL,
        session_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (owner, session_id, memory_id)
    );
    CREATE INDEX capture_injected_at ON capture_injected (at);
    """,
    # 6: keyword statistics per owner, so a principal's BM25 counts only the rows it
    # may read (global ones let an owner watch another's words come and go); the
    # global term_stats and kw_* stay for the unscoped store
    """
    CREATE TABLE owner_term_stats (
        owner TEXT NOT NULL,
        term TEXT NOT NULL,
        docs BIGINT NOT NULL,
        PRIMARY KEY (owner, term)
    );
    INSERT INTO owner_term_stats (owner, term, docs)
        SELECT m.owner, t.term, COUNT(*) FROM memories m
        CROSS JOIN LATERAL jsonb_object_keys(m.term_counts) AS t(term)
        GROUP BY m.owner, t.term;
    ALTER TABLE owner_counts ADD COLUMN tokens BIGINT NOT NULL DEFAULT 0;
    INSERT INTO owner_counts (owner, memories, tokens)
        SELECT owner, COUNT(*), COALESCE(SUM(doc_len), 0) FROM memories GROUP BY owner
        ON CONFLICT (owner) DO UPDATE SET memories = excluded.memories,
            tokens = excluded.tokens;
    """,
    # 7: the agents' own memory files memloom reads (memloom.sessions.native): per
    # note, the memory it wrote; per file (note_key ''), its size and mtime
    """
    CREATE TABLE native_notes (
        owner TEXT NOT NULL DEFAULT 'local',
        path TEXT NOT NULL,
        note_key TEXT NOT NULL,
        agent TEXT NOT NULL,
        folder TEXT NOT NULL,
        project TEXT,
        memory_id TEXT,
        text_hash TEXT,
        start_line INTEGER,
        end_line INTEGER,
        size BIGINT,
        mtime DOUBLE PRECISION,
        owned BOOLEAN NOT NULL DEFAULT FALSE,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (owner, path, note_key)
    );
    CREATE INDEX native_notes_folder ON native_notes (owner, folder);
    CREATE INDEX native_notes_memory ON native_notes (memory_id);
    """,
    # 8: the folder the owner named with ``import sessions --path`` (``/context`` serves
    # lines of such a session from there)
    LEDGER_NAMED_ROOT,
    # 9: the code each memory is about (files, identifiers, commit: memloom.anchors)
    MEMORY_ANCHORS.format(json="JSONB"),
    # 10: the memories anchored to a file, looked up when an agent opens it
    # (memloom.capture.reads: ``anchors @> [{"path": …}]``)
    """
    CREATE INDEX memories_anchors ON memories USING GIN (anchors jsonb_path_ops);
    """,
]
