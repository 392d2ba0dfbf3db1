"""Exit statuses by cause, and errors and warnings as one line with the command line's advice.

The statuses follow ``sysexits.h`` (BSD, also used by mail tools, ``fetchmail``, ``rsync``'s
peers) where a code there names the cause, plus the two every Python command line has: 2 for
bad usage (argparse exits 2 itself, as git's option parser and ``grep`` do) and 130 for an
interrupt (128 + SIGINT, the shell's convention). sysexits' codes are stable, documented in
``man sysexits`` and distinct from what a shell or Python itself returns, so a script can
tell "wait for the reset" (75) from "fix the key" (67) from "pay for a bigger plan" (77)
without reading the message. ``EXIT_CODES`` is the table (``quantscope --help`` and
docs/cli.md print it; a test keeps them equal).

``exit_status(exc)`` picks the status of an exception from ``_BY_CLASS`` (first match wins,
so a 429, which is both an API status error and a quota error, is a quota stop).
``error_line(exc)`` is the one line printed for it: the quota's refusals are worded again
from their fields with the flags that lift them (``--confirm``, ``--max-requests``,
``--partial``) and the reset time; an error that carries advice (``exc.said``, built from
``_advice.ADVICE``) is rendered in the command line's words (``add --confirm``, ``--offline``);
text not built that way (warnings, notes, the sync's messages) has its Python advice replaced
by the command line's (``with_cli_advice``: ``_advice.IN_TEXT``).
"""

from __future__ import annotations

from dataclasses import dataclass

from quantscope._advice import render
from quantscope._errors import (
    APIConnectionError,
    AuthenticationError,
    CatalogIntegrityError,
    CatalogWriteError,
    ConfigurationError,
    InvalidChoiceError,
    InvalidParameterError,
    InvalidResponseError,
    NotFoundError,
    OfflineCacheMissError,
    PermissionDeniedError,
    QuotaError,
    QuotaShareExceededError,
    QuotaWouldBeExceededError,
    RedirectRefusedError,
    ServerError,
    UnknownCriterionError,
    format_reset,
)

__all__ = [
    "EXIT_CODES",
    "CannotWriteError",
    "ExitCode",
    "InputNotFoundError",
    "PlanTooSmallError",
    "UsageError",
    "error_line",
    "exit_codes_help",
    "exit_status",
    "with_cli_advice",
]


class UsageError(Exception):
    """Bad input found after parsing (a file suffix, a date): exit status 2."""


class CannotWriteError(Exception):
    """An output path that cannot be written (no such directory, not writable): 73."""


class InputNotFoundError(Exception):
    """An input file or catalog that does not exist: 66."""


class PlanTooSmallError(Exception):
    """A load the last reported plan cannot make, refused before sending it: 77."""


@dataclass(frozen=True)
class ExitCode:
    """One exit status: its number, a short name and the causes it stands for."""

    code: int
    name: str
    cause: str


OK = ExitCode(0, "ok", "done (also: a filter that matched nothing, said on stderr)")
ERROR = ExitCode(1, "error", "any other failure (a 409 conflict, a busy catalog lock, ...)")
USAGE = ExitCode(2, "usage", "bad arguments or options, or a value the service refused (422)")
INTEGRITY = ExitCode(65, "integrity", "a damaged or tampered catalog or bundle (EX_DATAERR)")
NOT_FOUND = ExitCode(66, "not found", "404, an unknown id, a missing file (EX_NOINPUT)")
AUTH = ExitCode(67, "auth", "401: the service does not know the key (EX_NOUSER)")
NETWORK = ExitCode(
    69, "network", "service unreachable, timed out, 5xx, or offline without a copy (EX_UNAVAILABLE)"
)
CANT_WRITE = ExitCode(
    73, "cannot write", "an output or catalog file cannot be written (EX_CANTCREAT)"
)
QUOTA = ExitCode(
    75, "quota", "429, or a load that does not fit or needs --confirm: sent nothing (EX_TEMPFAIL)"
)
PROTOCOL = ExitCode(
    76, "protocol", "an answer that is not the API's, a foreign redirect (EX_PROTOCOL)"
)
PLAN = ExitCode(
    77, "plan", "403, or a plan last reported without the endpoint: sent nothing (EX_NOPERM)"
)
CONFIG = ExitCode(78, "config", "bad settings: $QUANTSCOPE_* values, the cache dir (EX_CONFIG)")
INTERRUPTED = ExitCode(130, "interrupted", "Ctrl-C (128 + SIGINT)")

EXIT_CODES: tuple[ExitCode, ...] = (
    OK,
    ERROR,
    USAGE,
    INTEGRITY,
    NOT_FOUND,
    AUTH,
    NETWORK,
    CANT_WRITE,
    QUOTA,
    PROTOCOL,
    PLAN,
    CONFIG,
    INTERRUPTED,
)

# First match wins: subclasses before their bases, and RateLimitError (an APIStatusError and
# a QuotaError) among the quota stops.
_BY_CLASS: tuple[tuple[type[BaseException], ExitCode], ...] = (
    (UsageError, USAGE),
    (InvalidParameterError, USAGE),
    (InvalidChoiceError, USAGE),  # a loader's value outside the spec's set, refused unsent
    (UnknownCriterionError, USAGE),  # a criterion key the playbook lacks (report --criteria)
    (AuthenticationError, AUTH),
    (PermissionDeniedError, PLAN),
    (PlanTooSmallError, PLAN),
    (QuotaError, QUOTA),
    (NotFoundError, NOT_FOUND),
    (InputNotFoundError, NOT_FOUND),
    (FileNotFoundError, NOT_FOUND),
    (OfflineCacheMissError, NETWORK),
    (APIConnectionError, NETWORK),
    (ServerError, NETWORK),
    (InvalidResponseError, PROTOCOL),
    (RedirectRefusedError, PROTOCOL),
    (CatalogIntegrityError, INTEGRITY),
    (CatalogWriteError, CANT_WRITE),
    (CannotWriteError, CANT_WRITE),
    (ConfigurationError, CONFIG),
)


def _integrity_classes() -> tuple[type[BaseException], ...]:
    from quantscope.catalog.bundle_format import BundleError

    return (BundleError,)


def exit_status(exc: BaseException) -> int:
    """The exit status for ``exc`` (module docstring); 1 for anything not in the table."""
    for cls, code in _BY_CLASS:
        if isinstance(exc, cls):
            return code.code
    if isinstance(exc, _integrity_classes()):
        return INTEGRITY.code
    return ERROR.code


def exit_codes_help() -> str:
    """The table as ``--help`` shows it: one status a line."""
    lines = ["exit status:"]
    lines += [f"  {c.code:>3}  {c.name:<12} {c.cause}" for c in EXIT_CODES]
    return "\n".join(lines)


def with_cli_advice(text: str) -> str:
    """``text`` (not an error built with a ``Said``: a warning, a note) on one line, its Python
    advice replaced by the command line's (``_advice.IN_TEXT``).
    """
    return render(text, "cli")


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _quota_line(exc: QuotaError) -> str | None:
    """A client's refusal worded for the command line from its fields (None: not one)."""
    if not isinstance(exc, QuotaShareExceededError | QuotaWouldBeExceededError):
        return None
    where = exc.endpoint
    needed, remaining, fetched = exc.needed, exc.remaining, exc.fetched
    of = f" of {exc.limit}" if exc.limit is not None else ""
    reset = format_reset(exc.reset)
    sent = (
        f"sent {_count(fetched, 'request')} (kept in the cache), nothing more"
        if fetched
        else "sent nothing"
    )
    if isinstance(exc, QuotaWouldBeExceededError):
        fits = max(0, remaining - exc.reserve)
        return (
            f"{where} needs {_count(needed, 'more request')}, {remaining}{of} are left: {sent}. "
            f"--partial fetches the {fits} that fit now (the same command after the reset "
            f"fetches the rest from the cache), or wait for the reset at {reset}, or narrow "
            "the scope (fewer ids, --quant, --start/--end)"
        )
    total = needed + fetched
    if exc.ceiling is not None:
        return (
            f"{where} needs {_count(total, 'request')}, more than --max-requests "
            f"{exc.ceiling}: {sent}. Raise --max-requests to {total}, or add --partial to "
            f"fetch the {max(0, exc.ceiling - fetched)} it allows (the same command later "
            "fetches the rest)"
        )
    share = f"{exc.share:.0%}"
    return (
        f"{where} needs {_count(needed, 'more request')} ({total} in all), more than {share} "
        f"of the {remaining + fetched}{of} left: {sent}. --confirm spends them (or "
        f"--max-requests {total}), --partial fetches what fits, or narrow the scope (fewer "
        f"ids, --quant, --start/--end); the quota resets at {reset}"
    )


def error_line(exc: BaseException) -> str:
    """The one line (without the ``quantscope: error:`` prefix) shown for ``exc``, its notes
    (``add_note``: "the same command resumes the sync") after it.
    """
    worded = _quota_line(exc) if isinstance(exc, QuotaError) else None
    if worded is None:
        worded = render(exc, "cli").strip() or type(exc).__name__
        if isinstance(exc, OSError) and exc.strerror and getattr(exc, "filename", None):
            worded = f"{exc.filename}: {exc.strerror}"
    notes = [with_cli_advice(str(n)).rstrip(".") for n in getattr(exc, "__notes__", ())]
    return " ".join("; ".join([worded.rstrip(". "), *notes]).split())
