"""Long jobs as NDJSON progress streams (session import, the conflict judge).

The job runs on its own thread and reports events through ``emit``; each event
is one JSON line of the response, so the client sees progress as it happens. A
failure becomes the stream's last line, ``{"event": "error", "error": …}``.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from fastapi.responses import StreamingResponse

__all__ = ["Emit", "ndjson_stream"]

Emit = Callable[[dict[str, Any]], None]


def ndjson_stream(
    job: Callable[[Emit], dict[str, Any] | None],
    *,
    thread_name: str | None = None,
    finally_: Callable[[], None] | None = None,
) -> StreamingResponse:
    """Run ``job(emit)`` on a thread and stream what it emits, then what it returns
    (when not None). ``finally_`` runs when the job ends, before the stream closes."""
    events: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def work() -> None:
        try:
            last = job(events.put)
            if last is not None:
                events.put(last)
        except Exception as exc:  # reported to the client as the stream's last line
            events.put({"event": "error", "error": str(exc)})
        finally:
            if finally_ is not None:
                finally_()
            events.put(None)

    threading.Thread(target=work, name=thread_name, daemon=True).start()

    def stream() -> Iterator[bytes]:
        while (event := events.get()) is not None:
            yield (json.dumps(event, default=str) + "\n").encode()

    return StreamingResponse(stream(), media_type="application/x-ndjson")
