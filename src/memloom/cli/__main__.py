"""``python -m memloom.cli``: the same as the ``memloom`` command (without the hook
fast path of :mod:`memloom._entry`)."""

from memloom.cli import main

main()
