"""memloom's own block in a prompt (the prompt-recall hook prints it). Every
adapter's reader removes it, so recalled memories are never imported again.

A module of its own, standard library free: the prompt hook needs these two
strings and none of :mod:`memloom.agents.base` (its dataclasses cost a hook
process ~15 ms to define).
"""

MEMLOOM_CONTEXT_OPEN = "<memloom-context>"
MEMLOOM_CONTEXT_CLOSE = "</memloom-context>"
