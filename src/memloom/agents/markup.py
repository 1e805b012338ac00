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


#: memloom's own distillation calls through an agent's CLI (``memloom.llm``'s CLI
#: providers): the child's environment variable, the prefix of the empty folder
#: each call runs in, and the first line of its prompt. memloom's hooks stand down
#: in such a child, and a session file the call leaves behind is never imported.
LLM_CHILD_ENV = "MEMLOOM_LLM_CHILD"
LLM_WORKDIR_PREFIX = "memloom-llm-"
LLM_CALL_MARKER = "[memloom distiller call: not a user session]"


def is_llm_call(cwd: str | None = None, text: str | None = None) -> bool:
    """Whether a session is one of memloom's own distillation calls: it ran in a
    folder memloom made for one, or its first prompt opens with the marker."""
    if cwd:
        # memloom-llm-<agent>-<8 characters of tempfile's>: a user's own folder that
        # merely starts so ("memloom-llm-notes") is theirs.
        base = cwd.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        rest = base[len(LLM_WORKDIR_PREFIX) :]
        agent, _, tail = rest.rpartition("-")
        if (
            base.startswith(LLM_WORKDIR_PREFIX)
            and agent
            and len(tail) == 8
            and all(c.islower() or c.isdigit() or c == "_" for c in tail)
        ):
            return True
    return bool(text) and LLM_CALL_MARKER in (text or "")[:2000]
