"""Write src/memloom/mcp_handshake.json: the MCP handshake's answers, from the SDK server.

    python scripts/mcp_handshake.py

``memloom mcp`` on stdio answers ``initialize`` and the list requests from them on a
first start in an empty cache folder (the first session after a plugin install), before
it loads the SDK (~1 s). They are keyed by memloom's version, a hash of its MCP tools'
code and the versions of the SDK and pydantic, so answers made from other code are never
used; ``tests/test_mcp_stdio.py`` fails while the file does not match what the SDK answers
now. Run it after changing a tool, its schema, or the pinned SDK.
"""

from __future__ import annotations

from memloom.mcp_stdio import SHIPPED, write_shipped


def main() -> None:
    doc = write_shipped()
    versions = sorted(k.split(" ", 1)[1] for k in doc["answers"] if k.startswith("initialize "))
    print(f"wrote {SHIPPED}: {len(doc['answers'])} answers, protocol versions {versions}")
    print(f"key: {doc['key']}")


if __name__ == "__main__":
    main()
