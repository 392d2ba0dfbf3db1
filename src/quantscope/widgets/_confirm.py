"""The confirmation box of a write: what is about to be sent, with Confirm and Cancel
(``qs-confirmation``, ``qs-confirm``, ``qs-cancel``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as W


class Confirmation:
    """A hidden box that shows what is about to be sent, with Confirm and Cancel."""

    def __init__(self, on_confirm: Callable[[], Any], on_cancel: Callable[[], Any]) -> None:
        self.text = W.HTML()
        self.confirm_button = W.Button(description="Confirm", button_style="danger", icon="check")
        self.cancel_button = W.Button(description="Cancel", icon="times")
        self.confirm_button.on_click(lambda _: on_confirm())
        self.cancel_button.on_click(lambda _: on_cancel())
        self.box = W.VBox(
            [self.text, W.HBox([self.confirm_button, self.cancel_button])],
            layout=W.Layout(display="none", border="1px solid #b71c1c", padding="4px"),
        )
        self.box.add_class("qs-confirmation")
        self.confirm_button.add_class("qs-confirm")
        self.cancel_button.add_class("qs-cancel")

    def show(self, text_html: str) -> None:
        self.text.value = text_html
        self.box.layout.display = "flex"

    def hide(self) -> None:
        self.text.value = ""
        self.box.layout.display = "none"

    @property
    def visible(self) -> bool:
        shown: bool = self.box.layout.display != "none"
        return shown
