"""The web viewer: static files (HTML, CSS, JS) that talk to the same HTTP API as everyone."""

from pathlib import Path

STATIC = Path(__file__).parent / "static"
