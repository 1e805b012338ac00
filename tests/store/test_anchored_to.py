"""``Store.anchored_to``: the rows anchored to one file (the read hook's lookup), the
same on both backends (SQLite: a scan of the JSON text, then its anchors read
exactly; PostgreSQL: containment, answered by the GIN index of migration 10)."""

from __future__ import annotations

import time

from memloom.store.filters import SearchFilter


def test_only_rows_anchored_to_that_path_pass_the_filter(engine, tmp_path):
    repo = tmp_path / "repo"
    for rel in ("svc/retry.py", "lib/svc/retry.py", "svc/retry.pyc", "docs/a.md"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("x\n")

    def save(text: str, project: str, *paths: str, **extra: object) -> str:
        anchors = [{"path": p} for p in paths]
        request = {"text": text, "project": project, "anchors": anchors, **extra}
        return engine.save(request, folder=str(repo)).id

    hit = save("the retry module keeps three attempts", "p", "docs/a.md", "svc/retry.py")
    pinned = save("pinned: never raise the retry count", "p", "svc/retry.py")
    engine.pin(pinned)
    save("the vendored retry copy is older", "p", "lib/svc/retry.py")
    save("compiled retry bytecode is ignored", "p", "svc/retry.pyc")
    save("another project's retry module", "q", "svc/retry.py")
    secret = save("the retry gateway token is hunter2", "p", "svc/retry.py", sensitivity=3)
    store = engine.backend
    flt = SearchFilter(project="p", project_mode="exact", max_sensitivity=2, alive_at=time.time())
    rows = store.anchored_to("svc/retry.py", flt, 10)
    assert [r.id for r in rows] == [pinned, hit]  # pinned first; nothing else
    # The filter is what left out the secret and the other project's row.
    everyone = {r.id for r in store.anchored_to("svc/retry.py", SearchFilter(), 10)}
    assert secret in everyone and len(everyone) == 4
    assert len(store.anchored_to("svc/retry.py", SearchFilter(), 1)) == 1  # the limit
    assert store.anchored_to("svc", flt, 10) == []
    assert store.anchored_to('svc/retry.py", "x', flt, 10) == []  # quotes stay data
