"""The report's sections, in order: a registry of (key, title, builder).

Each builder is a function of ``ReportData`` (``build``) to blocks (``blocks``); the HTML
renders each section under its title with the anchor ``#<key>``. ``PLUGS`` (``plugs``) are
appended at the end of the section of their key. To add a section, add a ``Section`` here;
to add a figure to one, register a plug (``plugs`` docstring).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from quantscope.reporting import _research, _returns, _screen, _trading
from quantscope.reporting.blocks import Block
from quantscope.reporting.build import ReportData
from quantscope.reporting.plugs import PLUGS


@dataclass(frozen=True)
class Section:
    """One section: its anchor ``key``, its ``title`` and its ``build`` function."""

    key: str
    title: str
    build: Callable[[ReportData], list[Block]]

    def blocks(self, data: ReportData) -> list[Block]:
        """The section's blocks, then those of the plugs registered under its key."""
        out = self.build(data)
        for plug in PLUGS.get(self.key, []):
            out += plug(data)
        return out


SECTIONS: tuple[Section, ...] = (
    Section("overview", "Overview", _trading.overview),
    Section("headline", "Headline metrics", _trading.headline),
    Section("equity", "Equity and drawdowns", _trading.equity),
    Section("returns", "Returns: the tear-sheet figures", _returns.returns),
    Section("breakdowns", "Breakdowns: chain, decision, token, week", _trading.breakdowns),
    Section("hypothetical", "Hypothetical trades (never executed)", _trading.hypothetical),
    Section("playbook", "The playbook", _research.playbook),
    Section("recommendations", "The optimizer's recommendations", _research.recommendations),
    Section("screen", "Which criteria predict outcomes: the out-of-sample screen", _screen.screen),
    Section("thresholds", "Thresholds you named", _research.thresholds),
    Section("examples", "Two trades on the chart", _research.examples),
    Section("definitions", "Definitions", _trading.definitions),
)
