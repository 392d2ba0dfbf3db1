"""What an error tells the user to do, in the words of where the user is (issue 24, item 2).

The library words its errors for Python callers ("pass confirm=True", "qsc.connect(
offline=True)"): that is right in a notebook, wrong at the command line (where the same thing
is an option, ``--confirm``, ``--offline``) and in a panel (where it is a button, Open, Open
what fits). ``ADVICE`` is the one place that maps each piece of advice to its three
renderings: ``python`` (how a message says it, a regular expression; the Python API shows the
message as it is), ``cli`` (the command line's option) and ``panel`` (the panel's button or
action). ``advice_of(exc)`` names the advice an error carries (``QuantscopeError.advice``);
``render(text, "cli")`` and ``render(text, "panel")`` reword a message for the command line
(``_cli_exit.with_cli_advice``) and for a panel (``Panel.failed``). A test walks every
message literal of the toolkit and holds that none keeps Python advice once rendered.

Patterns are tried in order: the longer phrases ("pass partial=True, confirm=True") before
their parts ("confirm=True").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["ADVICE", "Advice", "Audience", "advice_of", "render"]

Audience = Literal["python", "cli", "panel"]


@dataclass(frozen=True)
class Advice:
    """One piece of advice: its name, how a Python message says it, and its other words."""

    key: str  # what to do: "confirm", "partial", "offline", ... (two: "partial+confirm")
    python: str  # a regular expression over the Python wording
    cli: str  # the command line's wording (``re.sub`` replacement)
    panel: str  # a panel's wording (``re.sub`` replacement)


_KEEP = r"\g<0>"  # a rendering that keeps the Python wording (it is right there too)

ADVICE: tuple[Advice, ...] = (
    # the key and the service: the command line reads them from the environment only
    Advice("api_key", r"\s*\(or the api_key passed to qsc\.connect\(\)\)", "", _KEEP),
    Advice(
        "api_key",
        r"or pass api_key= to qsc\.connect\(\)",
        "(the key is read from the environment only)",
        _KEEP,
    ),
    Advice("url", r"\(or pass url=\)", "(or --url)", _KEEP),
    Advice("url", r"\(url= or api_key=\)", "($QUANTSCOPE_URL or $QUANTSCOPE_API_KEY)", _KEEP),
    Advice("online", r"connect without offline=True", "run without --offline", _KEEP),
    Advice("offline", r"with qsc\.connect\(offline=True\)", "with --offline", _KEEP),
    Advice("offline", r"qsc\.connect\(offline=True\)", "add --offline", _KEEP),
    Advice("online", r"\(qsc\.connect\(\) without offline=True\)", "(without --offline)", _KEEP),
    Advice("cache_dir", r"pass cache_dir= to", "use --cache-dir", _KEEP),
    # spending past the quota share, fetching what fits, a ceiling
    Advice(
        "confirm",
        r"pass confirm=True \(a panel's Open button does\)",
        "use --confirm",
        "press Open",
    ),
    Advice(
        "confirm",
        r"pass confirm=True \(quantscope report --confirm\)",
        "use --confirm",
        "press Open",
    ),
    Advice(
        "partial+confirm",
        r"pass partial=True, confirm=True",
        "use --partial --confirm",
        "press Open what fits",
    ),
    Advice(
        "confirm",
        r"pass confirm=True \(or max_requests=(\d+)\)",
        r"use --confirm (or --max-requests \1)",
        "press Open",
    ),
    Advice(
        "confirm",
        r"pass confirm=True \(or max_requests=\)",
        "use --confirm (or --max-requests N)",
        "press Open",
    ),
    Advice("confirm", r"pass confirm=True", "use --confirm", "press Open"),
    Advice("partial", r"pass partial=True", "use --partial", "press Open what fits"),
    Advice("partial", r"partial=True", "--partial", "Open what fits"),
    Advice("confirm", r"confirm=True", "--confirm", "Open"),
    Advice(
        "max_requests",
        r"raise max_requests",
        "raise --max-requests",
        "open the panel again after the reset",
    ),
    Advice("max_requests", r"max_requests=(\d+)", r"--max-requests \1", "Open"),
    # a write over changes made meanwhile: Python only (no command writes; a panel reloads)
    Advice("force", r",? or pass force=True to [\w ]+", "", ""),
    Advice("force", r"pass force=True", "", ""),
    # Python-only pointers that have no counterpart elsewhere
    Advice("estimate", r";?\s*qsc\.estimate\(\.\.\.\) tells the cost first", "", ""),
    Advice("attrs", r";\s*attrs\['quantscope'\]\['\w+'\]", "", ""),
    Advice("attrs", r"\s*\(attrs\['quantscope'\]\['\w+'\]\)", "", ""),
    Advice("sync", r"qsc\.sync: ", "sync ", _KEEP),
    Advice("sync", r"the same sync call", "the same command", _KEEP),
    Advice("sync", r"\bqsc\.sync\(([^)]*)\)", r"quantscope sync \1", _KEEP),
)

_COMPILED = tuple((a, re.compile(a.python)) for a in ADVICE)


def advice_of(what: BaseException | str) -> tuple[str, ...]:
    """The advice an error (or a message) gives, by name, in the order it first says it."""
    text = str(what)
    found: list[str] = []
    for advice, pattern in _COMPILED:
        if pattern.search(text):
            found += [k for k in advice.key.split("+") if k not in found]
            text = pattern.sub("", text)  # "partial=True, confirm=True" is not also "confirm"
    return tuple(found)


def render(text: str, audience: Audience) -> str:
    """``text`` with its advice in ``audience``'s words (``"python"``: as it is), on one line."""
    if audience != "python":
        for advice, pattern in _COMPILED:
            text = pattern.sub(getattr(advice, audience), text)
    return " ".join(text.split())
