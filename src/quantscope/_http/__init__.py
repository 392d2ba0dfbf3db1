"""The HTTP floor: everything that talks to a service, below the loaders.

``client`` (``Client``, the façade) composes ``sender`` (retries within the deadline),
``cache``/``cachestore``/``cacheformat`` (the HTTP cache), ``framecache`` (typed frames beside
their answers), ``quota``, ``results``, ``pagecheck``, ``plan``/``estimate`` (pricing) over
``transport`` (the wire; ``inprocess`` for tests); ``writelock`` and ``embedded`` (the one door
into the sandbox) sit beside them. Nothing here imports a loader, a face or the command line.
"""
