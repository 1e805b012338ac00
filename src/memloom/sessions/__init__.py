"""Session import, agent-independent: the importer, the ledger and the chunker.

Finding and reading an agent's sessions is the agent adapter's part
(:mod:`memloom.agents`); this package talks to adapters only through the
:class:`memloom.agents.base.Agent` protocol.
"""
