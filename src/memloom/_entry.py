"""The ``memloom`` console script.

The coding agents run ``memloom hook … [--agent A]`` on every prompt, after their
read tool opens a file, and at every session end, so those commands are dispatched
here, before the CLI framework (and its imports) load: they must start in tens of
milliseconds.
``memloom mcp`` (stdio) and ``memloom --version`` are dispatched here too.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    home = None
    if len(args) >= 2 and args[0] == "--home":
        home, args = args[1], args[2:]
    plugin = None
    if len(args) >= 2 and args[-2] == "--plugin":  # a hook of memloom's agent plugin
        plugin, args = args[-1], args[:-2]
    fast = len(args) == 2 or (len(args) == 4 and args[2] == "--agent")
    hooks = ("notify", "prompt-recall", "session-start", "compacted", "read")
    if fast and args[0] == "hook" and args[1] in hooks:
        if os.environ.get("MEMLOOM_LLM_CHILD"):
            # memloom's own distillation call runs this agent's CLI (memloom.llm's CLI
            # providers): no capture job, no recall, no digest for it. Read what the
            # agent sent, say nothing, and let the call go on.
            _drain_stdin()
            return
        agent = args[3] if len(args) == 4 else None
        payload = None
        # Only a process of its own (argv from the command line) forks a notify into
        # the background, and before loading anything: the agent waits for the parent.
        # A caller passing argv gets it done before return.
        if args[1] == "notify" and argv is None:
            from memloom.capture.background import detach
            from memloom.location import home_folder

            try:
                payload = sys.stdin.buffer.read().decode("utf-8", "replace")
            except Exception:  # no stdin at all: an empty payload, refused and logged
                payload = ""
            if detach(home_folder(home)):
                os._exit(0)  # the parent: the child queues it (nothing to flush)
        from memloom.capture.hooks_cli import run_hook

        sys.exit(run_hook(args[1], home, agent=agent, plugin=plugin, payload=payload))
    if args in (["--version"], ["-V"]):  # before the CLI loads: a script may ask often
        from memloom.version import banner

        sys.stdout.write(banner() + "\n")
        return
    if args in (["mcp"], ["mcp", "--transport", "stdio"]):  # what agents' MCP configs run
        if os.environ.get("MEMLOOM_LLM_CHILD"):
            # A distillation call offers the model no tools: memloom's own MCP server
            # refuses to start inside one (its CLI's flags should not start it at all).
            sys.stderr.write("memloom mcp: not served inside memloom's own distillation call\n")
            sys.exit(1)
        from memloom.mcp_stdio import serve

        sys.exit(serve(home))
    from memloom.cli import main as cli_main

    cli_main(argv)


def _drain_stdin() -> None:
    """Read the hook's payload to its end (an agent may wait for its pipe to drain)."""
    # Not contextlib.suppress: contextlib imports typing, ~3 ms a hook cannot spend.
    try:  # noqa: SIM105
        sys.stdin.buffer.read()
    except Exception:  # no stdin at all: nothing to drain
        pass


if __name__ == "__main__":
    main()
