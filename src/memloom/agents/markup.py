"""memloom's own block in a prompt (the prompt-recall hook prints it). Every
adapter's reader removes it, so recalled memories are never imported again.

A module of its own, standard library free: the prompt hook needs these two
strings and none of :mod:`memloom.agents.base` (its dataclasses cost a hook
process ~15 ms to define).
"""

MEMLOOM_CONTEXT_OPEN = "<memloom-context>"
MEMLOOM_CONTEXT_CLOSE = "</memloom-context>"

#: The tag of a memory read from a coding agent's own memory files
#: (:mod:`memloom.sessions.native`): ``native:<agent source>``. That agent already
#: shows its own memory, so its prompt hooks leave these out (no echo).
NATIVE_TAG_PREFIX = "native:"


def native_tag(source: str) -> str:
    """The tag of memories read from agent ``source``'s own memory (``native:claude-code``)."""
    return NATIVE_TAG_PREFIX + source
