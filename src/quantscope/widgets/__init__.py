"""ipywidgets panels: study a threshold, edit the playbook, review the optimizer, safely.

::

    from quantscope.widgets import ThresholdPanel, PlaybookEditor, RecommendationsPanel
    ThresholdPanel(quant_id=1)            # a cell's last value displays the panel

* ``ThresholdPanel``: one criterion's threshold on a slider; both questions of the selected
  threshold side by side (its effect, replayed: what applying does; its signal, the
  criterion as a hard filter), each decision number with its interval from
  ``backtest.uncertainty``; the what-if before/after table and the winning/losing value
  distributions, live; Apply shows the exact change and asks for confirmation; Undo
  restores the old value.
* ``PlaybookEditor``: the playbook as an editable table; edits are checked against ranges and
  options before anything is sent, shown as a diff, and applied in one PUT.
* ``RecommendationsPanel``: the optimizer's recommendations, each claim beside its replayed
  effect with intervals, the out-of-sample screen's verdict on its criterion and the
  client-side cross-check; Analyze (without auto-apply) and Apply one.

Every write is one request that the service applies whole or not at all, is read back to verify,
and is logged to ``<cache dir>/audit.jsonl`` by ``quantscope.audit`` (which has no UI and is
re-exported here), from which ``undo`` restores the old values. A plan without playbook or
optimizer access gets a message in the panel, and its buttons are disabled, instead of a failing
call.

Panels on one page share one view of the playbook per (client, quant) (``PlaybookView``): a
write through one panel redraws the others, and each has a Reload button. Every write is
compare-and-swap: refused (``StaleWriteError``, nothing sent) when an entry no longer holds the
value the panel showed; an Undo is refused (``UndoRefusedError``) over a change it did not
make. A panel whose opening would spend more than the client's quota share shows the cost and
an Open button instead.

Each panel exposes small methods that the buttons call (``select``, ``set_threshold``,
``edit``, ``apply``, ``confirm``, ``cancel``, ``undo``...), so notebooks and tests can drive
it without a browser; ``panel.widget`` is the VBox to place in a bigger layout.
"""

from quantscope._errors import StaleWriteError, UndoRefusedError
from quantscope.audit import AuditEntry, AuditLog, Change, Written, undo, write_changes
from quantscope.widgets._view import PlaybookView
from quantscope.widgets.editor import PlaybookEditor
from quantscope.widgets.recommendations import RecommendationsPanel
from quantscope.widgets.threshold import ThresholdPanel

__all__ = [
    "AuditEntry",
    "AuditLog",
    "Change",
    "PlaybookEditor",
    "PlaybookView",
    "RecommendationsPanel",
    "StaleWriteError",
    "ThresholdPanel",
    "UndoRefusedError",
    "Written",
    "undo",
    "write_changes",
]
