"""Continuous capture: the hooks Claude Code runs, the queue they feed, the worker."""
