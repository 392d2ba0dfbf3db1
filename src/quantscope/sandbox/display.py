"""Display strings the sandbox serves next to the raw numbers (docs/service-contract.md, Trades).

The service sends many trade fields twice: a number (`pnl_usd_raw`) and a display string
(`pnl_usd`). These pure functions make the display strings, one per row of the contract's table:

==================  =================  =====================================================
function            example            fields
==================  =================  =====================================================
``usd``             ``$1,234.50``      ``buy_cost_usd``, ``sell_revenue_usd``
``signed_usd``      ``+$12.34``        ``pnl_usd``
``signed_pct``      ``+12.50%``        ``roi``, ``price_change`` (argument in percent units)
``native``          ``0.523400 SOL``   ``eth_sol_spent``, ``eth_sol_received``
``price``           ``$0.00001234``    ``price``
``compact_usd``     ``$1.23M``         ``volume24h``, ``marketCap``, ``liquidity``
``plain``           ``125000.5``       ``tokens_bought``, ``tokens_sold``, ``duration``, ...
==================  =================  =====================================================

Decisions, made once here (the toolkit's parser, ``quantscope._parse``, tolerates others):

* **Rounding** is round-half-to-even on the exact binary value of the argument, the rule of
  Python's ``format`` and ``round``. So ``usd(x)`` reads back as exactly ``round(x, 2)``, and
  ``price(x)`` as exactly ``float(f"{x:.3e}")``. Exact ties go to even (``usd(0.125)`` is
  ``$0.12``, ``usd(0.375)`` is ``$0.38``); a decimal that is not exactly representable rounds by
  its binary value (``usd(2.675)`` is ``$2.67`` because 2.675 is stored as 2.67499999...). Half-up
  on the decimal repr was rejected: it would break the ``round(x, 2)`` identity that lets a
  researcher compare a display string with its ``_raw`` twin.
* **Signs.** ``signed_usd`` and ``signed_pct`` always carry ``+`` or ``-``; a value that rounds to
  zero (``-0.004``, ``-0.0``) is ``+$0.00`` / ``+0.00%``, never ``-$0.00``. The unsigned formats
  show ``-`` only for a negative value that does not round to zero, before the currency symbol
  (``-$3.40``).
* **Thousands separators** (``,``) in every dollar amount: ``usd``, ``signed_usd``
  (``+$1,234.50``), ``price`` from 1,000 up (``$1,234``, ``$12,350``) and ``compact_usd`` past
  999.99B (``$1,234.57B``). Never in percentages, native amounts or plain numbers, whose
  magnitudes rarely reach 1,000 and which spreadsheets read more easily without them.
* **price** shows exactly 4 significant digits, trailing zeros kept (``$1.200``, ``$0.5000``,
  ``$0.000``), as a plain decimal: digits past the 4th are zeros (``$12,350`` for 12,345.6),
  never an exponent (``$0.000000001234``).
* **compact_usd** moves to the next suffix when the 2-decimal rounding in the current one would
  reach 1000.00: ``$999.99`` then ``$1.00K`` from 999.995 up, ``$999.99K`` then ``$1.00M`` from
  999,995 up, likewise for ``B``; ``B`` is the last suffix. So no ``$1000.00K`` is ever shown.
  The mantissa is ``x / 10**(3k)`` rounded to 2 decimals (the rounding rule above applied to the
  quotient).
* **plain** is the shortest decimal that reads back as the same float (Python's ``repr``
  digits), written without exponent and without trailing zeros: ``125000.5``, ``3``,
  ``0.0000001``. Integers are written exactly.
* NaN and infinities raise ``ValueError``: the server never sends ``nan`` in a display string.
"""

from __future__ import annotations

import math
from decimal import Decimal

__all__ = [
    "NATIVE_UNITS",
    "compact_usd",
    "native",
    "plain",
    "price",
    "signed_pct",
    "signed_usd",
    "usd",
]

#: Native coin of each chain, the unit of ``eth_sol_spent`` / ``eth_sol_received``.
NATIVE_UNITS: dict[str, str] = {"SOLANA": "SOL", "BASE": "ETH", "BSC": "BNB"}

# (divisor, suffix) from the smallest to the largest; see compact_usd.
_COMPACT_TIERS: tuple[tuple[float, str], ...] = ((1.0, ""), (1e3, "K"), (1e6, "M"), (1e9, "B"))


def _finite(x: float) -> float:
    """``x`` as a float, refusing NaN and infinities (a display string never shows them)."""
    value = float(x)
    if not math.isfinite(value):
        raise ValueError(f"cannot format a non-finite number: {x!r}")
    return value


def _is_zero_text(digits: str) -> bool:
    """True when a formatted magnitude shows only zeros (so it must not carry a minus sign)."""
    return not any(c in "123456789" for c in digits)


def _minus(value: float, magnitude_text: str) -> str:
    """``"-"`` for a negative value whose rounded magnitude is not zero, else ``""``."""
    return "-" if value < 0 and not _is_zero_text(magnitude_text) else ""


def _plus_minus(value: float, magnitude_text: str) -> str:
    """``"-"`` as in ``_minus``, else ``"+"`` (zero and rounds-to-zero are ``+``)."""
    return _minus(value, magnitude_text) or "+"


def usd(x: float) -> str:
    """Dollars with thousands separators and 2 decimals: ``$1,234.50``, ``-$3.40``."""
    value = _finite(x)
    text = format(abs(value), ",.2f")
    return f"{_minus(value, text)}${text}"


def signed_usd(x: float) -> str:
    """Dollars that always carry a sign: ``+$12.34``, ``-$3.40``, ``+$0.00``, ``+$1,234.50``."""
    value = _finite(x)
    text = format(abs(value), ",.2f")
    return f"{_plus_minus(value, text)}${text}"


def signed_pct(x: float) -> str:
    """A percentage with sign and 2 decimals: ``signed_pct(12.5) == "+12.50%"``.

    Args:
        x: the ratio in percent units (12.5 for 12.5 %), as the service's ``roi`` fields are.
    """
    value = _finite(x)
    text = format(abs(value), ".2f")
    return f"{_plus_minus(value, text)}{text}%"


def native(x: float, chain: str) -> str:
    """An amount of the chain's native coin, 6 decimals and the unit: ``0.523400 SOL``.

    Args:
        x: the amount in whole coins.
        chain: ``SOLANA`` (SOL), ``BASE`` (ETH) or ``BSC`` (BNB), exactly as stored.

    Raises:
        ValueError: for another chain name, or a non-finite amount.
    """
    try:
        unit = NATIVE_UNITS[chain]
    except KeyError:
        known = ", ".join(NATIVE_UNITS)
        raise ValueError(f"unknown chain {chain!r}; expected one of {known}") from None
    value = _finite(x)
    text = format(abs(value), ".6f")
    return f"{_minus(value, text)}{text} {unit}"


def price(x: float) -> str:
    """A token price with 4 significant digits as a plain decimal: ``$0.00001234``, ``$1.234``.

    Digits past the 4th significant one are zeros (``$12,350``); trailing zeros inside the 4
    digits are kept (``$1.200``); thousands separators from 1,000 up (``$1,234``).
    """
    value = _finite(x)
    mantissa, exp_text = format(abs(value), ".3e").split("e")
    digits = mantissa.replace(".", "")  # the 4 significant digits
    exponent = int(exp_text)
    if exponent >= 3:
        text = format(int(digits + "0" * (exponent - 3)), ",")
    elif exponent >= 0:
        text = f"{digits[: exponent + 1]}.{digits[exponent + 1 :]}"
    else:
        text = "0." + "0" * (-exponent - 1) + digits
    return f"{_minus(value, digits)}${text}"


def compact_usd(x: float) -> str:
    """Dollars with 2 decimals and a K/M/B suffix from 1,000 up: ``$999.50``, ``$1.23M``.

    The suffix is the smallest one whose 2-decimal mantissa stays below 1000.00, so 999,999
    is ``$1.00M`` (not ``$1000.00K``); past 999.99B the mantissa grows: ``$1,234.57B``.
    """
    value = _finite(x)
    magnitude = abs(value)
    for divisor, suffix in _COMPACT_TIERS:
        text = format(magnitude / divisor, ",.2f")
        if "," not in text or suffix == "B":  # a comma means the mantissa reached 1000.00
            break
    return f"{_minus(value, text)}${text}{suffix}"


def plain(x: float | int) -> str:
    """Decimal text for numeric-text fields: ``125000.5``, ``3``, ``0.0000001``, ``-2.5``.

    Floats use the shortest digits that read back as the same float, written without exponent
    and without trailing zeros; integers are written exactly. Negative zero is ``0``.
    """
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    value = _finite(x)
    if value == 0:
        return "0"
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
