"""The sandbox: a faithful local implementation of the Quant Trading Data Service.

Where each concern lives. The rule: what is derived from the seed alone (the simulated market,
quants, their criteria and the history they produce) is simulation and lives in ``sim/``; what
answers requests, stores state or formats the wire lives at the top level. ``sim/`` imports only
``catalog`` and ``timefmt`` from the top level, plus ``optimizer`` for the build's first run;
request-time code imports ``sim/`` modules, and only ``datadir`` imports ``sim.build``. The
sandbox never imports the toolkit, and no import circle forms in here
(tests/sandbox/test_sandbox_imports.py).

Serving (top level)
    ``app``            the FastAPI application: key/quota gate, error bodies, mounts the routers
    ``routers/<g>``    one module per resource group of the spec (trades, evaluations, market,
                       signals, playbook, optimization)
    ``models/<g>``     the request/response bodies of the same group; ``models/_common`` the
                       formats, strict types and vocabularies they share
    ``deps`` ``params`` ``errors``   what routers share: caller, parameters, the error body
    ``fastsolve``      route arguments without FastAPI's per-request look-ups (valid values)
    ``inline``         read-only pages answered on the event loop's thread when cheap
    ``auth`` ``plans``  API keys, quotas and the plan table
    ``display`` ``timefmt`` ``trade_json``   wire formats: display strings, times, trade rows
    ``evaldetail``     evaluation details and facts recomputed at request time from ``sim/``
    ``optimizer`` ``optimizer_math``   the optimisation runs the service performs on request
    ``playbook_store``  reading, validating and writing the live playbook

Storage and running
    ``store``          the SQLite schema, connections and transactions
    ``datadir``        build a world database once and reuse it (``ensure_world``)
    ``serve``          run the app under uvicorn (thread or foreground)
    ``versions``       the dependency versions whose internals ``httpguard``/``fastsolve`` read
    ``catalog``        the fixed vocabulary: chains, criteria, classes, operators, world clock

Simulation (``sim/``)
    ``market``         hourly candles of every token (regenerated on request, never stored)
    ``tokens``         token names, addresses and static traits
    ``criteria``       the criterion model: values a quant's criteria read at a scan hour
    ``quants``         the simulated quants and their build-time playbooks
    ``rules``          pass/fail decisions of a playbook over criterion values
    ``pair``           the evaluations and trades of one quant on one token
    ``stage``          tokens simulated in worker processes into staging files (from scale 8)
    ``build``          the one-off world build that writes every table
    ``narrative``      the texts of alerts and AI analyses
"""
