"""The one exception tree of quantscope, and the function that maps an HTTP answer onto it.

::

    QuantscopeError
    ├── ConfigurationError              bad settings: no key for a URL, bad env value, no client
    │   └── SandboxUnavailableError     no URL, and the sandbox extra is missing: pip install ...
    ├── OfflineCacheMissError           offline, and the cache lacks this request (endpoint, params)
    ├── CatalogBusyError                another sync holds the catalog: .catalog .pid .host .since
    ├── CatalogIntegrityError           catalog files damaged, missing, outside it: .catalog .files
    ├── CatalogWriteError               a catalog file could not be written (a full disk): .path
    ├── QuotaError                      the daily quota: .endpoint .needed .remaining .limit .reset
    │   ├── QuotaWouldBeExceededError   a load does not fit in the quota left: nothing was sent
    │   ├── QuotaShareExceededError     a load would spend more than its share: confirm=True
    │   └── RateLimitError              429 (also an APIStatusError, below)
    ├── InvalidChoiceError (ValueError) a value outside the spec's set (trading_status="bogus"),
    │                                   refused before anything was sent: .param .value .allowed
    ├── UnknownCriterionError (ValueError) criterion keys the quant's playbook lacks, refused
    │                                   before the loads they would study: .unknown .known
    ├── InvalidResponseError            a 2xx answer that is not JSON, or not the documented shape,
    │                                   or pages that repeat (the service ignores paging)
    ├── RedirectRefusedError            a redirect to another origin, not followed: .origin .target
    ├── MissingColumnsError (KeyError)  df.quant / plot method on a frame without its columns
    ├── WriteRefusedError               a write refused before anything was sent: nothing written
    │   ├── StaleWriteError             an entry no longer holds the value the caller saw: .stale
    │   ├── UndoRefusedError            audit.undo would not restore what the entry changed
    │   └── PlaybookBusyError           another write held the playbook's lock too long: .pid
    ├── APIConnectionError              no answer: refused, reset, DNS (after the retries)
    │   └── APITimeoutError             no answer in time
    └── APIStatusError                  a non-2xx answer: .status_code .body .code .param .endpoint
        ├── AuthenticationError         401  missing or unknown key
        ├── PermissionDeniedError       403
        │   ├── PlanNotAllowedError     403  code plan_not_allowed: the plan lacks the endpoint
        │   └── ChainNotAllowedError    403  code chain_not_allowed: the chain is outside the plan
        ├── NotFoundError               404
        ├── ConflictError               409  applied twice, or the config changed meanwhile
        ├── InvalidParameterError       422 (and 400)  `param` names the value
        ├── RateLimitError              429  .reset .limit .retry_after (also a QuotaError)
        └── ServerError                 5xx  (after the retries)

    QuantscopeWarning (UserWarning)
    ├── StaleDataWarning                the service failed; an expired cached copy was used
    ├── DataQualityWarning              values of a loaded frame could not be parsed: now missing
    ├── IncompleteDataWarning           a frame holds less than the request matched: see attrs
    │                                   (a capped list, a plan's chains, a partial=True load)
    ├── EmptyResultWarning              a list load's filters matched nothing: .endpoint .filters
    │                                   .plan (load_trades(quant_id=99): 0 rows)
    ├── InconsistentAnswerWarning       pages that disagree: items seen twice, a total they did not
    │                                   reach or passed, totals that changed (attrs checks)
    ├── CacheRecoveredWarning           a corrupt cache file was set aside; a new cache started
    ├── CacheWriteWarning               a cache could not be written (full disk): loads go uncached
    ├── ShadowOutcomesWarning           research on trades that were never executed (REJECT,
    │                                   RECOMMEND): their outcomes are shadows; see attrs shadow
    └── StaleLockWarning                a catalog's sync lock left by a dead sync was taken over

Every class lives here, whichever module raises it (``MissingColumnsError`` from ``_kinds``,
``UndoRefusedError`` from ``audit``, ``StaleWriteError`` from ``loaders.playbook``,
``loaders.optimization`` and ``audit``, ``DataQualityWarning`` from ``_typed.frames``), so one
``except QuantscopeError`` catches whatever quantscope raises on purpose.

``QuotaError`` is the one family for "not within the quota": the client's own refusals
(raised before anything is sent) and the service's 429 share it, so ``except qsc.QuotaError``
catches both.

``error_from_response`` is the only place that turns a status and a body into an exception. It
reads the error body tolerantly (the sandbox's ``{"error": {...}}``, flat ``{"code",
"message"}``, FastAPI's ``{"detail": ...}``, plain text, nothing), because the real service's
shape is not documented. Every message says what to do next (the plan an endpoint needs comes
from the spec's plan table, ``_plans``); the API key is scrubbed from messages and bodies (a
service may echo it), so an exception can be shown, logged or pickled.

In IPython, ``QuantscopeError._render_traceback_`` shows the message alone instead of a raw
traceback: a researcher needs "your plan (basic) does not include ...", not fifteen frames of
requests internals. Set ``QuantscopeError.compact_traceback = False`` to see the frames.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from quantscope._advice import Said
from quantscope._plans import PLANS, first_plan_for
from quantscope._secret import scrub_value

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AuthenticationError",
    "CacheRecoveredWarning",
    "CacheWriteWarning",
    "CatalogBusyError",
    "CatalogIntegrityError",
    "CatalogWriteError",
    "ChainNotAllowedError",
    "ConfigurationError",
    "ConflictError",
    "DataQualityWarning",
    "EmptyResultWarning",
    "IncompleteDataWarning",
    "InconsistentAnswerWarning",
    "InvalidChoiceError",
    "InvalidParameterError",
    "InvalidResponseError",
    "MissingColumnsError",
    "NotFoundError",
    "OfflineCacheMissError",
    "PermissionDeniedError",
    "PlanNotAllowedError",
    "PlaybookBusyError",
    "QuantscopeError",
    "QuantscopeWarning",
    "QuotaError",
    "QuotaShareExceededError",
    "QuotaWouldBeExceededError",
    "RateLimitError",
    "RedirectRefusedError",
    "SandboxUnavailableError",
    "ServerError",
    "ShadowOutcomesWarning",
    "StaleDataWarning",
    "StaleLockWarning",
    "StaleWriteError",
    "UndoRefusedError",
    "UnknownCriterionError",
    "WriteRefusedError",
    "error_from_response",
    "format_reset",
    "redact",
]


class QuantscopeError(Exception):
    """Base of every error quantscope raises on purpose; ``str()`` is the whole message."""

    compact_traceback: ClassVar[bool] = True

    def __init__(self, message: str | Said) -> None:
        said = message if isinstance(message, Said) else None
        text = said.render("python") if said is not None else str(message)
        super().__init__(text)
        self.message = text
        self.said = said

    @property
    def advice(self) -> tuple[str, ...]:
        """What the message tells the user to do, by key of ``_advice.ADVICE`` (``"confirm"``,
        ``"partial"``, ``"offline"``, ...): the command line shows each as its option, a panel
        as its button. () for a message built without a ``Said``.
        """
        return self.said.keys if self.said is not None else ()

    def __str__(self) -> str:
        return self.message

    def _render_traceback_(self) -> list[str]:
        """IPython hook: show ``Class: message`` instead of the frames (see module docstring)."""
        if not type(self).compact_traceback:
            import traceback

            return traceback.format_exception(self)
        return [f"{type(self).__name__}: {self.message}"]


class ConfigurationError(QuantscopeError):
    """The settings cannot work: fix the argument or environment variable the message names."""


class SandboxUnavailableError(ConfigurationError):
    """The embedded sandbox was needed (no service URL) but its extra is not installed."""


class OfflineCacheMissError(QuantscopeError):
    """Offline mode, and the cache holds no copy of the request named by endpoint and params."""

    def __init__(self, message: str | Said, *, endpoint: str, params: Mapping[str, str]) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.params = dict(params)


class CatalogBusyError(QuantscopeError):
    """Another sync holds the catalog's lock (``catalog.lock``): nothing was read or written.
    ``pid``, ``host`` and ``since`` (ISO text) name the holder, when it recorded itself.
    """

    def __init__(
        self,
        message: str,
        *,
        catalog: str,
        pid: int | None = None,
        host: str | None = None,
        since: str | None = None,
    ) -> None:
        super().__init__(message)
        self.catalog = catalog
        self.pid = pid
        self.host = host
        self.since = since


class CatalogIntegrityError(QuantscopeError):
    """Catalog files do not match their manifest records (``catalog.integrity``): missing,
    another size, a damaged footer or page, another SHA-256, or a path outside the catalog.
    ``files`` lists them (relative to the catalog), ``problems`` says what is wrong with each;
    the same ``sync`` re-fetches them (docs/catalog.md, Integrity).
    """

    def __init__(
        self, message: str, *, catalog: str, files: Sequence[str], problems: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.catalog = catalog
        self.files = list(files)
        self.problems = list(problems)


class CatalogWriteError(QuantscopeError):
    """A catalog file could not be written (no space left, a file size limit, read-only):
    nothing was left under a final name; the run is recorded as interrupted when the manifest
    could still be written, else it stays ``running``, and the same ``sync`` resumes either.
    ``path`` is the file, ``errno`` the system's error number.
    """

    def __init__(self, message: str, *, catalog: str, path: str, errno: int | None) -> None:
        super().__init__(message)
        self.catalog = catalog
        self.path = path
        self.errno = errno


class QuotaError(QuantscopeError):
    """Base of the quota errors: a load the client refused, or the service's 429.

    ``reset`` (UTC) is when the daily quota resets and ``limit`` the plan's daily limit, when
    known; the client's refusals also say ``needed`` (requests the load would send) and
    ``remaining`` (requests left).
    """

    endpoint: str
    reset: datetime | None
    limit: int | None


class _Refusal(QuotaError):
    """A load the client refused before sending what it needed (the numbers are the fields)."""

    def __init__(
        self,
        message: str | Said,
        *,
        endpoint: str,
        needed: int,
        fetched: int,
        remaining: int,
        limit: int | None,
        reset: datetime | None,
        reserve: int,
        partial: Any = None,
    ) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.needed = needed
        self.fetched = fetched
        self.remaining = remaining
        self.limit = limit
        self.reset = reset
        self.reserve = reserve
        self.partial = partial


class QuotaWouldBeExceededError(_Refusal):
    """A multi-request load whose requests do not fit in the quota left: nothing more was sent.

    ``needed`` requests were not in the cache, ``remaining`` are left (minus ``reserve``).
    ``fetched`` counts what the load had already sent (the first page, which gives the total,
    or, with ``partial=True``, what fitted). ``partial`` holds what the cache already had (not
    a complete result: it is on the exception, never returned). Pass ``partial=True`` to the
    loader to fetch what fits; run it again after ``reset`` for the rest, from the cache.
    """


class QuotaShareExceededError(_Refusal):
    """A load that would spend more than the client's share of the quota left in one call
    (``Settings.quota_share``), refused with its cost before it was sent. Pass
    ``confirm=True`` (or ``max_requests=`` at least ``needed``) to spend it. ``ceiling`` is
    the ``max_requests`` it exceeded, when that was the rule (None: the share).
    """

    def __init__(
        self, message: str | Said, *, share: float, ceiling: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(message, **kwargs)
        self.share = share
        self.ceiling = ceiling


class InvalidChoiceError(QuantscopeError, ValueError):
    """A parameter's value is none of those the spec allows (any case): refused before anything
    was sent. ``param`` is the Python keyword (or the command line's option), ``value`` the
    text refused, ``allowed`` the spec's values.
    """

    def __init__(self, param: str, value: str, allowed: tuple[str, ...]) -> None:
        super().__init__(
            f"{param} {value!r} is not one of {', '.join(allowed)} (any case): sent nothing"
        )
        self.param, self.value, self.allowed = param, value, allowed

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.param, self.value, self.allowed)


class UnknownCriterionError(QuantscopeError, ValueError):
    """Criterion keys that the quant's playbook does not hold: refused before the loads that
    would study them (the playbook itself was read: 1 request, 0 when cached). ``param`` is
    the keyword (or the command line's option), ``unknown`` the keys refused, ``known`` the
    playbook's, ``quant_id`` the quant.
    """

    def __init__(
        self, param: str, unknown: tuple[str, ...], known: tuple[str, ...], quant_id: int
    ) -> None:
        import difflib

        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
            if close:
                hints.append(f"did you mean {' or '.join(map(repr, close))}?")
        super().__init__(
            f"{param} {','.join(unknown)}: not in the playbook of quant {quant_id}"
            + (f" ({'; '.join(hints)})" if hints else "")
            + f"; its criteria are {', '.join(known) or 'none'}"
        )
        self.param, self.unknown, self.known, self.quant_id = param, unknown, known, quant_id

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.param, self.unknown, self.known, self.quant_id)


class InvalidResponseError(QuantscopeError):
    """The service answered 2xx with a body that is not JSON or not the documented shape, or
    with pages that repeat each other.
    """

    def __init__(self, message: str, *, endpoint: str, status_code: int) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.status_code = status_code


class MissingColumnsError(QuantscopeError, KeyError):
    """A ``df.quant`` (or ``df.quant.plot``) method was called on a frame without the columns
    it needs.

    ``method`` is the method, ``missing`` the absent columns in the order the method names
    them; the message says which loader makes a suitable frame. A ``KeyError`` too, as a
    missing column is in pandas.
    """

    def __init__(self, message: str, *, method: str, missing: Sequence[str]) -> None:
        super().__init__(message)
        self.method = method
        self.missing = tuple(missing)


class WriteRefusedError(QuantscopeError):
    """A playbook write quantscope refused before sending it: nothing was written.

    ``stale`` holds ``(change, current value)`` for each entry that no longer holds the value
    the caller saw (empty when that was not the reason), ``playbook`` the playbook as the
    check read it (None when no check read it): what a panel shows after a refusal.
    """

    def __init__(
        self, message: str | Said, *, stale: Sequence[tuple[Any, Any]] = (), playbook: Any = None
    ) -> None:
        super().__init__(message)
        self.stale = tuple(stale)
        self.playbook = playbook


class StaleWriteError(WriteRefusedError):
    """A write whose entries no longer hold the values the caller saw (someone or something
    changed them since): reload and look again, or pass ``force=True`` to overwrite.
    """


class UndoRefusedError(WriteRefusedError):
    """An undo that would not restore what the entry changed (undone before, or changed since:
    then ``stale`` names the entries and the values they hold now).
    """


class PlaybookBusyError(WriteRefusedError):
    """Another write to the same playbook on this machine held its lock longer than the wait
    (``_http.writelock``): nothing was read or written. ``quant_id``; ``pid``, ``host`` and
    ``since`` (ISO text) name the holder, when it recorded itself.
    """

    def __init__(
        self,
        message: str,
        *,
        quant_id: int,
        pid: int | None = None,
        host: str | None = None,
        since: str | None = None,
    ) -> None:
        super().__init__(message)
        self.quant_id = quant_id
        self.pid = pid
        self.host = host
        self.since = since


class RedirectRefusedError(QuantscopeError):
    """The service redirected to another origin (scheme, host, port) than the configured one.

    Not followed: the API key is sent only to the configured origin. ``origin`` and ``target``
    name both; the message says how to point quantscope at the new one if it is trusted.
    """

    def __init__(self, message: str, *, origin: str, target: str, status_code: int) -> None:
        super().__init__(message)
        self.origin = origin
        self.target = target
        self.status_code = status_code


class APIConnectionError(QuantscopeError):
    """No HTTP answer at all (after the retries): refused, reset, DNS failure."""

    def __init__(self, message: str | Said, *, endpoint: str, attempts: int = 1) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.attempts = attempts


class APITimeoutError(APIConnectionError):
    """No HTTP answer within the timeout (after the retries)."""


class APIStatusError(QuantscopeError):
    """A non-2xx answer. ``body`` is the parsed JSON (or text) with the key scrubbed."""

    def __init__(
        self,
        message: str | Said,
        *,
        status_code: int,
        body: Any = None,
        code: str | None = None,
        param: str | None = None,
        endpoint: str = "",
        service_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.code = code
        self.param = param
        self.endpoint = endpoint
        self.service_message = service_message


class AuthenticationError(APIStatusError):
    """401: the key is missing or unknown to the service."""


class PermissionDeniedError(APIStatusError):
    """403: the key is valid but its plan does not cover this request (see ``.code``)."""


class PlanNotAllowedError(PermissionDeniedError):
    """403 ``plan_not_allowed``: the endpoint needs a bigger plan."""


class ChainNotAllowedError(PermissionDeniedError):
    """403 ``chain_not_allowed``: the request or resource is on a chain outside the plan."""


class NotFoundError(APIStatusError):
    """404: unknown id (``param`` names it) or unknown path."""


class ConflictError(APIStatusError):
    """409: the write conflicts with the current state (applied twice, config changed)."""


class InvalidParameterError(APIStatusError):
    """422 (or 400): a parameter or body value the service refused; ``param`` names it."""


class RateLimitError(APIStatusError, QuotaError):
    """429: the daily quota is spent until ``reset`` (UTC)."""

    def __init__(
        self,
        message: str | Said,
        *,
        reset: datetime | None = None,
        limit: int | None = None,
        retry_after: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.reset = reset
        self.limit = limit
        self.retry_after = retry_after


class ServerError(APIStatusError):
    """5xx: the service failed (after the retries)."""


class QuantscopeWarning(UserWarning):
    """Base of quantscope's warnings."""


class StaleDataWarning(QuantscopeWarning):
    """The service could not answer, so an expired copy from the cache was used."""


class DataQualityWarning(QuantscopeWarning):
    """Some values of a loaded frame could not be parsed, or fields the API spec promises
    were absent or null: they are missing (``attrs["quantscope"]["checks"]``).
    """


class InconsistentAnswerWarning(QuantscopeWarning):
    """The pages of one load disagree with each other: items seen twice (kept once), a total
    the pages did not reach or passed, totals that changed between pages. quantscope went by
    the data, and ``attrs["quantscope"]["checks"]`` says what it found
    (docs/service-contract.md, "How answers are checked").
    """


class CacheRecoveredWarning(QuantscopeWarning):
    """The cache file could not be opened as a database (corrupt, truncated, not SQLite): it
    was set aside under a ``.corrupt-<time>`` name and a new, empty cache started.
    """


class CacheWriteWarning(QuantscopeWarning):
    """A cache (the HTTP cache, its body files, the frame cache) could not be written (a full
    disk, a file size limit): the load goes on uncached; warned once per cache directory.
    """


class ShadowOutcomesWarning(QuantscopeWarning):
    """Threshold research was given trades that were never executed (a frame loaded with
    ``trading_status="all"``: model validation's REJECT and RECOMMEND, a DELAY still waiting):
    their outcomes are the service's shadow of a trade never made, counted as if traded. The
    result's ``attrs["shadow"]`` counts them by decision; ``load_trades``' default (executed
    trades) leaves them out.
    """


class StaleLockWarning(QuantscopeWarning):
    """A catalog's sync lock named a holder that died mid-sync (killed): the lock was free
    (the system drops it with its holder) and this sync took it; the dead run resumes.
    """


class IncompleteDataWarning(QuantscopeWarning):
    """A loaded frame holds less than the request matched: the service capped a list, the
    plan's chain allowance narrowed it, or a ``partial=True`` load stopped at the quota. The
    frame's ``attrs["quantscope"]`` says what is missing (``capped``, ``plan_chains``,
    ``incomplete``).
    """


class EmptyResultWarning(QuantscopeWarning):
    """A list load (trades, evaluations, an evaluation history) whose filters matched no row:
    often a value the service does not know (``quant_id=99``) or a window with nothing in it.
    ``endpoint``, ``filters`` (the parameters as sent, no key) and ``plan`` (from the quota
    headers; None when not known) say which load.
    """

    def __init__(
        self,
        message: str,
        endpoint: str = "",
        filters: Mapping[str, str] | None = None,
        plan: str | None = None,
    ) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.filters = dict(filters or {})
        self.plan = plan


# --- mapping an answer onto the tree -------------------------------------------------------

_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: InvalidParameterError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: InvalidParameterError,
    429: RateLimitError,
}
# A body code refines the status class (only into a subclass of it).
_BY_CODE: dict[str, type[APIStatusError]] = {
    "plan_not_allowed": PlanNotAllowedError,
    "chain_not_allowed": ChainNotAllowedError,
}


def redact(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with every spelling of each secret (literal or JSON-escaped) replaced by
    ``***`` in every string of it, recursively (``_secret.scrub_value``).
    """
    return scrub_value(value, secrets)


def format_reset(reset: datetime | None, now: datetime | None = None) -> str:
    """``2026-11-22T00:00:00Z (in 5 h 3 min)``; ``an unknown time`` when not known."""
    if reset is None:
        return "an unknown time"
    now = now or datetime.now(UTC)
    stamp = reset.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    minutes = max(0, round((reset - now).total_seconds() / 60))
    hours, minutes = divmod(minutes, 60)
    left = f"{hours} h {minutes} min" if hours else f"{minutes} min"
    return f"{stamp} (in {left})"


def _parse_body(body: bytes | str | Any) -> Any:
    """The body as JSON when it is JSON, else as (short) text; None when empty."""
    if isinstance(body, bytes | bytearray):
        body = body.decode("utf-8", errors="replace")
    if isinstance(body, str):
        text = body.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text[:500]
    return body


def _error_fields(body: Any) -> tuple[str | None, str | None, str | None]:
    """(code, message, param) from any of the error-body shapes we know; Nones otherwise."""
    if isinstance(body, str):
        return None, body, None
    if not isinstance(body, Mapping):
        return None, None, None
    inner: Any = body.get("error", body)
    if isinstance(inner, str):  # {"error": "rate_limited", "message": "..."}
        message = body.get("message") or body.get("detail")
        return inner, str(message) if message else inner, None
    if not isinstance(inner, Mapping):
        return None, None, None
    code = inner.get("code") or inner.get("type")
    message = inner.get("message") or inner.get("detail") or inner.get("msg")
    if isinstance(message, list):  # FastAPI validation errors: [{"loc": [...], "msg": ...}]
        message = "; ".join(
            str(m.get("msg", m)) if isinstance(m, Mapping) else str(m) for m in message
        )
    param = inner.get("param")
    return (
        str(code) if code is not None else None,
        str(message) if message is not None else None,
        str(param) if param is not None else None,
    )


def _chain_allowances() -> str:
    """``Growth covers 2 chains, Enterprise all``: the plans above one chain, from the table."""
    return ", ".join(
        f"{p.title} covers {p.chains} chains" if p.chains else f"{p.title} all"
        for p in PLANS
        if p.chains != 1
    )


def _hint(
    cls: type[APIStatusError],
    *,
    method: str,
    endpoint: str,
    params: Mapping[str, str],
    param: str | None,
    plan: str | None,
    reset: datetime | None,
    limit: int | None,
    attempts: int,
    now: datetime | None,
) -> str | Said:
    """What to do next, for each class: the sentence after the service's own message (a
    ``Said`` where it names a keyword, an option or a button: ``_advice``).
    """
    your_plan = f"your plan ({plan})" if plan else "your plan"
    if issubclass(cls, AuthenticationError):
        return Said(
            "the service did not accept the API key: check QUANTSCOPE_API_KEY{api_key_passed}"
        )
    if issubclass(cls, PlanNotAllowedError) or (
        issubclass(cls, PermissionDeniedError) and not issubclass(cls, ChainNotAllowedError)
    ):
        needed = first_plan_for(method, endpoint)
        if needed:
            return f"{your_plan} does not include {endpoint}; {needed.title()} or higher does"
        return f"{your_plan} does not include {method} {endpoint}; a bigger plan may"
    if issubclass(cls, ChainNotAllowedError):
        chain = params.get("chain")
        what = f"chain {chain.upper()}" if chain else "the chain of this resource"
        return (
            f"{your_plan} does not include {what}; ask for a chain your plan covers "
            f"({_chain_allowances()})"
        )
    if issubclass(cls, NotFoundError):
        if param and param in params:
            return f"no {param}={params[param]} at {endpoint}: check the id"
        return f"nothing at {endpoint}: check the id or the endpoint"
    if issubclass(cls, InvalidParameterError):
        if param:
            shown = f"={params[param]!r}" if param in params else ""
            return f"fix the value of {param}{shown}"
        return "fix the parameters of the request"
    if issubclass(cls, ConflictError):
        return "reload the current playbook or recommendations and try again"
    if issubclass(cls, RateLimitError):
        limit_text = f"{limit} requests/day" if limit else "the daily limit"
        return Said(
            "quota spent ({limit}); resets at {reset}. Cached data stays usable: {advice}",
            ("offline",),
            {
                "limit": f"{limit_text}{', ' + plan + ' plan' if plan else ''}",
                "reset": format_reset(reset, now),
            },
        )
    if issubclass(cls, ServerError):
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return f"the service failed{tries}; try again later"
    return "see the service's message"


def _restated(
    cls: type[APIStatusError],
    *,
    method: str,
    endpoint: str,
    params: Mapping[str, str],
    param: str | None,
) -> bool:
    """Whether the hint already says all the service's message would (then the message shows
    the hint alone, once; ``.service_message`` keeps the service's words): the plan an
    endpoint needs, the chain refused, the unknown id, the spent quota.
    """
    if issubclass(cls, ChainNotAllowedError | RateLimitError):
        return True
    if issubclass(cls, PermissionDeniedError):
        return first_plan_for(method, endpoint) is not None
    if issubclass(cls, NotFoundError):
        return bool(param and param in params)
    return False


def error_from_response(
    status_code: int,
    body: bytes | str | Any,
    *,
    endpoint: str,
    method: str = "GET",
    params: Mapping[str, str] | None = None,
    plan: str | None = None,
    reset: datetime | None = None,
    limit: int | None = None,
    retry_after: float | None = None,
    attempts: int = 1,
    secrets: Iterable[str] = (),
    now: datetime | None = None,
) -> APIStatusError:
    """The exception for a non-2xx answer: class by status (refined by the body's code).

    Args:
        status_code: the HTTP status.
        body: the raw body (bytes/text) or already-parsed JSON; any shape is tolerated.
        endpoint: the path as the loader named it (``/api/trades/{id}``), for the message.
        method: the HTTP method, to name the plan a write needs.
        params: the query parameters sent, to name the offending value.
        plan: the caller's plan when known (from the daily limit), for the message.
        reset, limit, retry_after: from the rate-limit headers, for 429.
        attempts: how many times the request was sent (for 5xx).
        secrets: strings to scrub from the body and message (the API key).
        now: the clock for "in 5 h" (tests).
    """
    secrets = tuple(secrets)
    params = dict(params or {})
    parsed = redact(_parse_body(body), secrets)
    code, service_message, param = _error_fields(parsed)
    cls: type[APIStatusError] = _BY_STATUS.get(status_code) or (
        ServerError if status_code >= 500 else APIStatusError
    )
    refined = _BY_CODE.get(code or "")
    if refined is not None and issubclass(refined, cls):
        cls = refined
    hint = _hint(
        cls,
        method=method,
        endpoint=endpoint,
        params=params,
        param=param,
        plan=plan,
        reset=reset,
        limit=limit,
        attempts=attempts,
        now=now,
    )
    head = f"{status_code} from {method} {endpoint}"
    if code:
        head += f" ({code})"
    restated = _restated(cls, method=method, endpoint=endpoint, params=params, param=param)
    said = f": {service_message.rstrip('.')}" if service_message and not restated else ""
    message: str | Said
    if isinstance(hint, Said):
        lead = redact(f"{head}{said}", secrets)
        message = Said(
            "{lead}. " + hint.template[0].upper() + hint.template[1:] + ".",
            hint.advice,
            {**hint.values, "lead": lead},
        )
    else:
        message = redact(f"{head}{said}. {hint[0].upper()}{hint[1:]}.", secrets)
    fields: dict[str, Any] = {
        "status_code": status_code,
        "body": parsed,
        "code": code,
        "param": param,
        "endpoint": endpoint,
        "service_message": service_message,
    }
    if issubclass(cls, RateLimitError):
        return cls(message, reset=reset, limit=limit, retry_after=retry_after, **fields)
    return cls(message, **fields)
