r"""The API key is a secret: every form of it a service could hand back, replaced by ``***``.

A service may echo the key (an error page quoting the request, a debug field, a hostile
server). A byte search for the key misses it written the way JSON allows any string to be
written: each character literal or escaped (``\u0071`` in either case of hex digits, ``\/``,
``\"``, ``\\``, ``\n`` ...), in any mix. A JSON decoder turns every such form back into the
key, which would then reach frames, the frame cache, a catalog's Parquet files, bundles,
reports and CLI output. ``Scrubber`` replaces every one of them:

* ``scrub_bytes`` on an answer's raw body, before anything decodes or stores it
  (``_http.cache.WholeBodyAdapter``): after it, no JSON decoder can produce the key from the body,
  since a decoded string holds the key only where its source text spells it, character by
  character, literally or escaped, and the pattern allows exactly those spellings;
* ``scrub_text`` on header values and messages; ``scrub_value`` on parsed values (strings in
  dicts and lists, keys too), for error bodies parsed elsewhere.

Cost: the literal key is one ``bytes.replace`` (one linear pass over the body); the pattern of
escaped forms runs only when the body holds a backslash at all (a JSON escape needs one), and
scans for the characters that can start the key (its first character or a backslash):
figures in docs/reliability.md ("The key as a secret"). Percent-encoding and base64 are not
JSON spellings: no decoder in quantscope turns them into the key, so a body holding them holds
text, not the key.

This is the one module that knows how to find the key; ``_errors.redact``, the HTTP adapter,
``_http.cacheformat`` (request headers on disk) and the client all call it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["KEY_HEADERS", "REDACTED", "Scrubber", "scrub_value", "scrubber"]

REDACTED = "***"

#: Request headers that carry a credential: never stored, never sent to another origin.
KEY_HEADERS = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie"})

_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "/": "\\/",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _hex_unit(unit: int) -> str:
    r"""``\uXXXX`` of one UTF-16 code unit as a pattern: hex letters in either case."""
    digits = "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{unit:04x}")
    return r"\\u" + digits


def _escapes(char: str) -> list[str]:
    r"""Patterns of the ways JSON text may escape ``char`` (``\u`` form, short form)."""
    point = ord(char)
    if point > 0xFFFF:  # JSON escapes a character beyond the BMP as a surrogate pair
        point -= 0x10000
        forms = [_hex_unit(0xD800 + (point >> 10)) + _hex_unit(0xDC00 + (point & 0x3FF))]
    else:
        forms = [_hex_unit(point)]
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        forms.append(re.escape(short))
    return forms


def _char_forms(char: str) -> str:
    """A pattern matching ``char`` as JSON text may spell it: literal, or escaped."""
    return "(?:" + "|".join([re.escape(char), *_escapes(char)]) + ")"


class Scrubber:
    """Replaces every JSON spelling of one secret (see the module docstring)."""

    def __init__(self, secret: str) -> None:
        if not secret:
            raise ValueError("nothing to scrub: the secret is empty")
        self._literal_text = secret
        self._literal = secret.encode()
        text_pattern = "".join(_char_forms(c) for c in secret)
        self._text = re.compile(text_pattern)
        self._bytes = re.compile(text_pattern.encode())
        # Any escape of any of the secret's characters: an escaped spelling holds one. Found
        # in one scan (a literal prefix, a backslash); the full pattern then runs from a
        # little before it: a spelling starts at most len - 1 characters earlier.
        escape = "|".join(dict.fromkeys(f for c in secret for f in _escapes(c)))
        self._escape_text = re.compile(escape)
        self._escape_bytes = re.compile(escape.encode())
        self._reach_text = len(secret) - 1
        self._reach_bytes = 4 * (len(secret) - 1)  # a UTF-8 character is at most 4 bytes

    def __repr__(self) -> str:
        return "<Scrubber ***>"  # never the secret

    def scrub_bytes(self, data: bytes) -> bytes:
        """``data`` with every literal or JSON-escaped occurrence of the secret replaced."""
        if self._literal in data:
            data = data.replace(self._literal, REDACTED.encode())
        if b"\\" not in data:  # no escape at all (one memchr): nothing else spells it
            return data
        first = self._escape_bytes.search(data)
        if first is None:  # no escape of any of its characters either
            return data
        cut = max(0, first.start() - self._reach_bytes)
        rest = data[cut:]
        while True:  # a replacement never forms a new occurrence, unless the secret holds "*"
            rest, replaced = self._bytes.subn(REDACTED.encode(), rest)
            if not replaced:
                return data[:cut] + rest

    def scrub_text(self, text: str) -> str:
        """``text`` with every literal or JSON-escaped occurrence of the secret replaced."""
        if self._literal_text in text:
            text = text.replace(self._literal_text, REDACTED)
        if "\\" not in text:
            return text
        first = self._escape_text.search(text)
        if first is None:
            return text
        cut = max(0, first.start() - self._reach_text)
        rest = text[cut:]
        while True:
            rest, replaced = self._text.subn(REDACTED, rest)
            if not replaced:
                return text[:cut] + rest

    def holds(self, data: bytes | str) -> bool:
        """Whether ``data`` spells the secret in any of the forms ``scrub_*`` replaces."""
        if isinstance(data, str):
            return self._text.search(data) is not None
        return self._bytes.search(data) is not None


@functools.lru_cache(maxsize=16)
def scrubber(secret: str) -> Scrubber:
    """The (compiled once) ``Scrubber`` of ``secret``."""
    return Scrubber(secret)


def scrub_value(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with each secret scrubbed from every string in it (dict keys and values,
    lists and tuples, recursively); other values as they are.
    """
    active = [scrubber(s) for s in secrets if s]
    if not active:
        return value
    return _scrub(value, active)


def _scrub(value: Any, active: list[Scrubber]) -> Any:
    if isinstance(value, str):
        for one in active:
            value = one.scrub_text(value)
        return value
    if isinstance(value, bytes):
        for one in active:
            value = one.scrub_bytes(value)
        return value
    if isinstance(value, Mapping):
        return {_scrub(k, active): _scrub(v, active) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_scrub(v, active) for v in value)
    return value
