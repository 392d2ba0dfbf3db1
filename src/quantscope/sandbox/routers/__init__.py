"""The sandbox's routers, one module per resource group of the spec.

Each module listed in ``ROUTERS`` exposes ``router: fastapi.APIRouter`` with absolute paths
(``/api/...``); app.create_app mounts them in this order. Use ``deps.JSONRoute`` as the
router's ``route_class`` so big dict results skip FastAPI's slow encoder.
"""

from __future__ import annotations

ROUTERS: tuple[str, ...] = (
    "trades",
    "evaluations",
    "market",
    "signals",
    "playbook",
    "optimization",
)

# TEMPORARY while the world is built out: create_app skips router modules that do not exist
# yet. Set to False (or delete it and its one use in app._include_routers) once all six exist,
# so a missing module is an ImportError instead of silently missing endpoints.
ALLOW_MISSING = True
