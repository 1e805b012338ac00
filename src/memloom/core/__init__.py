"""The engine's services, one concept each, behind the :class:`memloom.engine.Memloom` facade.

Each service gets what it needs through a :class:`~memloom.core.context.CoreContext`
(store, embedder, settings, the shared lock, the detector and the LLM getter),
never the facade: ``memloom.core`` never imports ``memloom.engine`` or a shell.

* ``context``: the shared dependencies; ``documents``: row -> JSON document;
* ``embedding``: text -> vectors for this store; ``writes``: every memory write
  (with observers inside the write transaction); ``beliefs``: the distance bands
  and the LLM belief pipeline; ``conflicts``: list, resolve, revert, the judge;
* ``recall``; ``lifecycle``: update, supersede, expire, forget, pin, restore;
* ``maintenance``: decay and reembed; ``activity``: reads, stats, activity, export.
"""
