"""One view of a quant's playbook per client, shared by every panel that shows it.

::

    view = PlaybookView.of(client, quant_id)    # the same object for the same pair
    view.get()                                  # the playbook frame (loaded on first use)
    view.reload()                               # read again from the service; panels redraw

Panels on one page must not go stale against each other: a threshold written by one panel
has to show in the editor beside it, or the editor's confirm box and log would name an old
value and its Undo would silently revert the other panel's change. So panels do not keep
playbooks of their own: each subscribes to the view of its (client, quant), and the view
calls ``panel._view_changed(playbook)`` after every change it learns of: a ``reload()`` (a
panel's Reload button), and every write made through ``quantscope.audit`` with that client
(panels write through it; ``audit.on_write`` tells this module, so ``audit`` knows nothing of
panels). A change made elsewhere (another client, process or person) is caught by the
compare-and-swap check of the next write, which refuses it: the panel says to reload.

Views and panels are held weakly: a closed panel (``Panel.close()``) is dropped from its view,
and the views of a client go with the client.
"""

from __future__ import annotations

import weakref
from typing import ClassVar, Protocol

import pandas as pd

from quantscope import audit
from quantscope import loaders as L
from quantscope._http.client import Client

__all__ = ["PlaybookView", "Subscriber"]


class Subscriber(Protocol):
    """What a view calls: a panel (``widgets._panel.Panel``)."""

    def _view_changed(self, playbook: pd.DataFrame) -> None: ...


class PlaybookView:
    """The playbook of one quant as one client reads it, shared by the panels showing it."""

    _views: ClassVar[weakref.WeakKeyDictionary[Client, dict[int, PlaybookView]]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, client: Client, quant_id: int) -> None:
        self._client = weakref.ref(client)
        self.quant_id = int(quant_id)
        self.playbook: pd.DataFrame | None = None
        self._panels: weakref.WeakSet[Subscriber] = weakref.WeakSet()

    @classmethod
    def of(cls, client: Client, quant_id: int) -> PlaybookView:
        """The view of ``quant_id``'s playbook for ``client`` (made on first use; nothing is
        loaded until ``get``).
        """
        views = cls._views.setdefault(client, {})
        view = views.get(int(quant_id))
        if view is None:
            view = views[int(quant_id)] = cls(client, quant_id)
        return view

    @property
    def client(self) -> Client:
        client = self._client()
        if client is None:  # pragma: no cover - a view lives in its client's entry only
            raise RuntimeError("the client of this playbook view is gone")
        return client

    @property
    def panels(self) -> list[Subscriber]:
        """The panels subscribed now (closed ones are gone)."""
        return list(self._panels)

    def subscribe(self, panel: Subscriber) -> None:
        """Call ``panel._view_changed(playbook)`` on every change (held weakly)."""
        self._panels.add(panel)

    def unsubscribe(self, panel: Subscriber) -> None:
        self._panels.discard(panel)

    def get(self) -> pd.DataFrame:
        """The playbook as this view holds it; loaded (``load_playbook``, cache first) on first
        use. Raises what the load raises (a plan without the playbook: 403).
        """
        if self.playbook is None:
            self.playbook = L.load_playbook(self.quant_id, client=self.client)
        return self.playbook

    def reload(self) -> pd.DataFrame:
        """Read the playbook from the service (one request, never the cache) and tell every
        subscribed panel.
        """
        playbook = L.load_playbook(self.quant_id, fresh=True, client=self.client)
        self.update(playbook)
        return playbook

    def update(self, playbook: pd.DataFrame) -> None:
        """Hold ``playbook`` (as the service holds it now) and tell every subscribed panel."""
        self.playbook = playbook
        for panel in list(self._panels):
            panel._view_changed(playbook)

    def __repr__(self) -> str:
        state = "not loaded" if self.playbook is None else f"{len(self.playbook)} entries"
        return f"PlaybookView(quant {self.quant_id}, {state}, {len(self._panels)} panel(s))"


def _written(client: Client, quant_id: int, playbook: pd.DataFrame | None) -> None:
    """``audit.on_write``: a write with ``client`` reached the service; update its view."""
    view = PlaybookView._views.get(client, {}).get(int(quant_id))
    if view is not None and playbook is not None:
        view.update(playbook)


audit.on_write(_written)
