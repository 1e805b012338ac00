"""``memloom serve``: the HTTP API (FastAPI) and the daemon around it."""

from memloom.server.app import create_app

__all__ = ["create_app"]
