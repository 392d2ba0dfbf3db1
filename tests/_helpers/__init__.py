"""Helpers the test modules share, in one place (fixtures are in ``tests/conftest.py``).

Test modules never import each other: what two of them need lives here, one concern a module,
and is imported from this package (``tests/`` is on pytest's ``pythonpath``):

* ``http``: ``ApiSession``, the keyed HTTP session on one server (the ``api`` fixture's, and the
  base of the HTTP test modules' endpoint sessions), and ``assert_error``.
* ``fake_service``: a scripted loopback service for faults the sandbox cannot produce
  (``FakeService``, ``Seen``, ``ok``, ``fake_client``; the ``serve`` fixture starts them), and
  ``script_client``, a client answered in-process by a ``quantscope.testing`` handler.
* ``clustered``: ``clustered_features``, research frames whose trades cluster by token.
* ``frames``: hand-made frames with the loaders' dtypes (``HAND``, ``EVALS``, ``details_frame``).
* ``quota``: ``reset_quota(server)``, for module and session fixtures that spend much quota;
  ``spend_quota`` and ``quota_left`` spend and read a plan's quota server-side;
  ``share_refusal`` is a load's refusal over the quota share (what a panel's offer is made of).
* ``cli``: ``run_cli``, the installed ``quantscope`` script run as a user runs it, and
  ``one_error``, its one error line; ``use``, the same service for in-process commands
  (imported as ``_helpers.cli``).
* ``widgets``: the widget tests' quant and frames (``QUANT``, ``WidgetData``, ...).
"""

from _helpers.clustered import clustered_features
from _helpers.fake_service import (
    CUT,
    DROP,
    FAST,
    HANG,
    KEY,
    FakeService,
    Seen,
    fake_client,
    ok,
    script_client,
    start_fake,
)
from _helpers.frames import DTYPES, EVALS, HAND, at, details_frame, trades_frame
from _helpers.http import ApiSession, assert_error
from _helpers.quota import quota_left, reset_quota, share_refusal, spend_quota
from _helpers.widgets import (
    QUANT,
    WidgetData,
    other_client,
    service_playbook,
    smart_money,
    value_of,
)

__all__ = [
    "CUT",
    "DROP",
    "DTYPES",
    "EVALS",
    "FAST",
    "HAND",
    "HANG",
    "KEY",
    "QUANT",
    "ApiSession",
    "FakeService",
    "Seen",
    "WidgetData",
    "assert_error",
    "at",
    "clustered_features",
    "details_frame",
    "fake_client",
    "ok",
    "other_client",
    "quota_left",
    "reset_quota",
    "script_client",
    "service_playbook",
    "share_refusal",
    "smart_money",
    "spend_quota",
    "start_fake",
    "trades_frame",
    "value_of",
]
