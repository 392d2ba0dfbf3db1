"""The sandbox's routers, one module per resource group of the spec.

Each module exposes ``router: fastapi.APIRouter`` with absolute paths (``/api/...``) and takes
its bodies from ``models/<group>.py`` of the same name. ``ROUTERS`` lists them in the order
app.create_app mounts them: plain imports, so a missing module is an ImportError, never silently
missing endpoints. Use ``deps.JSONRoute`` as a router's ``route_class`` so big dict results skip
FastAPI's slow encoder.
"""

from __future__ import annotations

from fastapi import APIRouter

from quantscope.sandbox.routers import evaluations, market, optimization, playbook, signals, trades

ROUTERS: tuple[APIRouter, ...] = (
    trades.router,
    evaluations.router,
    market.router,
    signals.router,
    playbook.router,
    optimization.router,
)
