"""The markup Gemini CLI wraps around hook output, and taking it out again.

A hook's ``additionalContext`` reaches the model inside
``<hook_context>…</hook_context>``. In headless mode the SessionStart context is
put *in front of the prompt*, so that block is part of the user message in the
session file and of BeforeAgent's and AfterAgent's ``prompt`` (reference §2.4):
neither the importer nor the prompt hook may take it for what the user typed.

Standard library only: the prompt hook (``memloom hook prompt-recall --agent
gemini``) loads it.
"""

from __future__ import annotations

__all__ = ["HOOK_CONTEXT_CLOSE", "HOOK_CONTEXT_OPEN", "remove_blocks", "without_hook_context"]

HOOK_CONTEXT_OPEN = "<hook_context>"
HOOK_CONTEXT_CLOSE = "</hook_context>"


def remove_blocks(text: str, open_tag: str, close_tag: str, *, to_end: bool) -> str:
    """Remove ``open_tag … close_tag`` blocks in linear time.

    ``to_end``: an unclosed block runs to the end of the text; otherwise an
    unclosed opening tag is left as it is.
    """
    out: list[str] = []
    pos = 0
    while True:
        start = text.find(open_tag, pos)
        if start < 0:
            break
        close = text.find(close_tag, start + len(open_tag))
        if close < 0:
            if to_end:
                out.append(text[pos:start])
                pos = len(text)
            break
        out.append(text[pos:start])
        pos = close + len(close_tag)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def without_hook_context(text: str) -> str:
    """``text`` less every complete ``<hook_context>`` block (an unclosed tag stays)."""
    if HOOK_CONTEXT_OPEN not in text:
        return text
    return remove_blocks(text, HOOK_CONTEXT_OPEN, HOOK_CONTEXT_CLOSE, to_end=False)
