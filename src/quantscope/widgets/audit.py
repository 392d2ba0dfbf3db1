"""Deprecated: ``quantscope.widgets.audit`` moved to ``quantscope.audit`` (it has no UI).

Kept for one release: each name still resolves, with a DeprecationWarning naming its new
place. ``apply_recommendation`` is now ``audit.apply_recommendation_verified`` (apart from the
plain API call ``qsc.apply_recommendation``), and ``UndoRefusedError`` is ``qsc.UndoRefusedError``.
"""

from __future__ import annotations

import warnings
from typing import Any

from quantscope import audit as _audit

# Old name -> (new name in quantscope.audit, where users should import it from now).
_MOVED: dict[str, tuple[str, str]] = {
    **{name: (name, f"quantscope.audit.{name}") for name in _audit.__all__},
    "apply_recommendation": (
        "apply_recommendation_verified",
        "quantscope.audit.apply_recommendation_verified",
    ),
    "UndoRefusedError": ("UndoRefusedError", "quantscope.UndoRefusedError"),
}


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    new, where = _MOVED[name]
    warnings.warn(
        f"quantscope.widgets.audit.{name} is deprecated and will be removed in the next "
        f"release: use {where}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(_audit, new)
