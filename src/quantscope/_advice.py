"""Advice in the user's own terms: one table, three renderings of each piece (issue 24, item 2).

An error that says what to do names a way out that depends on where it is read: a Python
caller passes a keyword (``pass confirm=True``), the command line adds an option (``add
--confirm``), a panel has a button (``press Open``). Each piece of advice is written once, in
``ADVICE``, with its three renderings; a message that carries advice is a ``Said``, built where
the error is raised: a template whose ``{advice}`` (or ``{Advice}``, capitalised) is the pieces
of ``advice`` joined, whose other fields are ``values`` or a piece of the table named alone
(``{max_requests}``). The error keeps it (``QuantscopeError.said``, its keys as ``.advice``):
``str(exc)`` is the Python rendering, ``render(exc, "cli")`` the command line's
(``cli.exit.error_line``), ``render(exc, "panel")`` a panel's (``Panel.failed``). A piece with
no rendering for an audience (the command line has no ``--force``, a panel cannot pass
``details=``) is left out there, never replaced by the Python word.

Text that is not an error built here (a warning's, the catalog sync's messages and notes, the
command line's own pre-flight, a message from the service) has no ``Said``: ``render`` rewords
the Python advice in it with the regular expressions of ``IN_TEXT`` (the longer phrases before
their parts). tests/toolkit/test_advice.py lists which messages still go through it.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["ADVICE", "IN_TEXT", "Advice", "Audience", "Said", "render"]

Audience = Literal["python", "cli", "panel"]


@dataclass(frozen=True)
class Advice:
    """One piece of advice: its key and its wording for each audience ("" for none there);
    ``{name}`` fields are filled from the message's values.
    """

    key: str
    python: str
    cli: str
    panel: str

    def words(self, audience: Audience) -> str:
        """The wording for ``audience``."""
        return str(getattr(self, audience))


_TABLE = (
    # Spending past the share of the quota left.
    Advice(
        "confirm",
        "pass confirm=True (or max_requests={cost})",
        "add --confirm (or --max-requests {cost})",
        "press Open",
    ),
    Advice(
        "confirm_report",
        "pass confirm=True (quantscope report --confirm)",
        "add --confirm",
        "press Open",
    ),
    Advice(
        "confirm_details",
        "pass confirm=True (a panel's Open button does)",
        "add --confirm",
        "press Open",
    ),
    Advice("details", "details= already loaded", "", ""),
    Advice(
        "narrow",
        "narrow the load; qsc.estimate(...) tells the cost first",
        "narrow the scope (fewer ids, --quant, --start/--end)",
        "narrow the selection",
    ),
    # A ceiling the caller set.
    Advice("max_requests", "max_requests={ceiling}", "--max-requests {ceiling}", "{ceiling}"),
    Advice("raise_max_requests", "raise max_requests", "raise --max-requests to {cost}", ""),
    Advice(
        "partial_allowed",
        "pass partial=True to fetch what it allows",
        "add --partial to fetch what it allows",
        "press Open what fits",
    ),
    # A load that does not fit in the quota left.
    Advice(
        "wait_for_reset",
        "run the same load after the reset at {reset}",
        "run the same command after the reset at {reset}",
        "open the panel again after the reset at {reset}",
    ),
    Advice("partial", "pass partial=True", "add --partial", "press Open what fits"),
    Advice(
        "partial_confirm",
        "pass partial=True, confirm=True",
        "add --partial --confirm",
        "press Open what fits",
    ),
    Advice("again", "the same load", "the same command", "opening the panel again"),
    # Writes.
    Advice(
        "reload",
        "reload and change it directly",
        "reload and change it directly",
        "press Reload and change it directly",
    ),
    Advice(
        "force",
        "pass force=True to restore anyway",
        "",
        "",
    ),
    Advice("reload_write", "reload before writing", "reload before writing", "press Reload"),
    Advice("force_write", "pass force=True to overwrite", "", ""),
    # Settings.
    Advice("env_key", "set {env_key}", "set {env_key}", "set {env_key} before starting"),
    Advice("api_key", "pass api_key= to qsc.connect()", "", ""),
    Advice("api_key_passed", " (or the api_key passed to qsc.connect())", "", ""),
    Advice("url", " (or pass url=)", " (or --url)", ""),
    Advice("offline", "qsc.connect(offline=True)", "--offline", "a client connected offline"),
    Advice(
        "online",
        " (qsc.connect() without offline=True)",
        " (without --offline)",
        " (a client connected online)",
    ),
    Advice("without_offline", " without offline=True", " without --offline", " online"),
    Advice("cache_dir", "pass cache_dir= to", "use --cache-dir with", "point it at"),
)

ADVICE: Mapping[str, Advice] = {a.key: a for a in _TABLE}


@dataclass(frozen=True)
class Said:
    """A message with advice: ``template`` filled with ``values``, the pieces ``advice`` joined
    by ``joiner`` as ``{advice}``/``{Advice}``, and any piece named alone as ``{key}``.
    """

    template: str
    advice: tuple[str, ...] = ()
    values: Mapping[str, Any] = field(default_factory=dict)
    joiner: str = ", or "

    @property
    def keys(self) -> tuple[str, ...]:
        """Every piece of advice the message gives: ``advice``, then those named alone."""
        parsed = string.Formatter().parse(self.template)
        named = [f for _, f, _, _ in parsed if f is not None and f in ADVICE]
        return tuple(dict.fromkeys([*self.advice, *named]))

    def render(self, audience: Audience) -> str:
        """The message as ``audience`` reads it."""
        pieces = [self._piece(k, audience) for k in self.advice]
        joined = self.joiner.join(p for p in pieces if p)
        fields = _Fields(self, audience, joined)
        return self.template.format_map(fields)

    def _piece(self, key: str, audience: Audience) -> str:
        return ADVICE[key].words(audience).format_map(self.values)


class _Fields(dict[str, Any]):
    """The fields of a template: the values, the joined advice, pieces of the table by key."""

    def __init__(self, said: Said, audience: Audience, joined: str) -> None:
        super().__init__(said.values)
        self.update(advice=joined, Advice=joined[:1].upper() + joined[1:])
        self._said, self._audience = said, audience

    def __missing__(self, key: str) -> str:
        return self._said._piece(key, self._audience)


# Python advice in text no error here builds (see the module docstring): a regular expression
# over the Python wording, the command line's and a panel's replacement (``re.sub``).
IN_TEXT: tuple[tuple[str, str, str], ...] = (
    (r"\(url= or api_key=\)", "($QUANTSCOPE_URL or $QUANTSCOPE_API_KEY)", r"\g<0>"),
    (r"with qsc\.connect\(offline=True\)", "with --offline", "with a client connected offline"),
    (r"qsc\.connect\(offline=True\)", "add --offline", "a client connected offline"),
    (r"pass partial=True, confirm=True", "use --partial --confirm", "press Open what fits"),
    (
        r"pass confirm=True \(or max_requests=(\d+)\)",
        r"use --confirm (or --max-requests \1)",
        "press Open",
    ),
    (
        r"pass confirm=True \(or max_requests=\)",
        "use --confirm (or --max-requests N)",
        "press Open",
    ),
    (r"pass confirm=True", "use --confirm", "press Open"),
    (r"pass partial=True", "use --partial", "press Open what fits"),
    (r"partial=True", "--partial", "Open what fits"),
    (r"confirm=True", "--confirm", "Open"),
    (r"raise max_requests", "raise --max-requests", "open the panel again after the reset"),
    (r"max_requests=(\d+)", r"--max-requests \1", "Open"),
    (r";?\s*qsc\.estimate\(\.\.\.\) tells the cost first", "", ""),
    (r";\s*attrs\['quantscope'\]\['\w+'\]", "", ""),
    (r"\s*\(attrs\['quantscope'\]\['\w+'\]\)", "", ""),
    (r"qsc\.sync: ", "sync ", r"\g<0>"),
    (r"the same sync call", "the same command", r"\g<0>"),
    (r"\bqsc\.sync\(([^)]*)\)", r"quantscope sync \1", r"\g<0>"),
)

_IN_TEXT = tuple((re.compile(python), cli, panel) for python, cli, panel in IN_TEXT)


def render(what: BaseException | str, audience: Audience) -> str:
    """The message of ``what`` for ``audience``, on one line: an error's ``Said`` rendered;
    any other text with its Python advice reworded by ``IN_TEXT`` (``"python"``: as it is).
    """
    said = getattr(what, "said", None)
    if isinstance(said, Said):
        text = said.render(audience)
    else:
        text = str(what)
        if audience != "python":
            for pattern, cli, panel in _IN_TEXT:
                text = pattern.sub(cli if audience == "cli" else panel, text)
    return " ".join(text.split())
