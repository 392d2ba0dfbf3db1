"""Send one request with retries, all within the call's deadline, and keep the quota it reports.

``Sender.send`` is what ``Client`` does for every request that reaches the wire (or the HTTP
cache under it): transient failures of a GET (and of a write never sent) are retried with the
``RetryPolicy``'s backoff while the deadline (``timeout_s``, ``_http.transport.deadline``)
leaves time; a burst 429 with a short ``Retry-After`` is waited once; any other failure is one
toolkit error naming the service and what to do. Each answer from the service updates
``quota`` (its rate-limit headers); ``status_error`` turns an error status into the toolkit's
exception with that quota's plan and reset.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import requests
import urllib3
from requests import PreparedRequest, Response
from requests.cookies import RequestsCookieJar
from requests.utils import get_netrc_auth

from quantscope._advice import Said
from quantscope._config import Settings
from quantscope._errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    error_from_response,
)
from quantscope._http.cache import ResponseCache
from quantscope._http.quota import Quota, _retry_after_s, quota_from_headers
from quantscope._http.transport import deadline, time_left
from quantscope._wire import _path_params


class Sender:
    """The send-with-retries part of a ``Client``: its session, origin, settings and cache
    counters, the latest ``quota`` the service reported, and ``sleep`` (a test replaces it).
    """

    def __init__(
        self, session: Any, base_url: str, settings: Settings, cache: ResponseCache
    ) -> None:
        self.session = session
        self.base_url = base_url
        self.settings = settings
        self.cache = cache
        self.quota = Quota()
        self.sleep: Callable[[float], None] = time.sleep

    def send(
        self,
        method: str,
        path: str,
        query: Mapping[str, str],
        json_body: Any,
        endpoint: str,
        miss_key: str | None = None,
    ) -> tuple[Any, int, int]:
        """Send with retries, all within the call's deadline (``timeout_s``); returns
        (response, attempts, answers from the service).

        ``miss_key``: the cache key of a GET the caller looked up and found in no entry. It
        goes to the wire past requests-cache (``_send_miss``) and is not stored: the caller
        stores it once its body is checked (``ResponseCache.store``).
        """
        with deadline(self.settings.timeout_s):
            return self._send_until_deadline(
                method,
                path,
                endpoint,
                lambda: self._request(method, path, query, json_body, miss_key),
            )

    def _request(
        self, method: str, path: str, query: Mapping[str, str], json_body: Any, miss_key: str | None
    ) -> Any:
        """One attempt: through the cached session, or past it for a known miss."""
        if miss_key is not None and method == "GET":
            return self._send_miss(path, query)
        return self.session.request(
            method,
            self.base_url + path,
            params=dict(query),
            json=json_body,
            timeout=self.settings.timeout_s,  # each part capped at the time left
        )

    def _send_miss(self, path: str, query: Mapping[str, str]) -> Response:
        """GET a request the cache holds no entry for, as ``requests.Session.request`` sends
        it (the session's headers, auth, cookies, hooks, environment settings and redirect
        handling), through requests' own ``Session.send``: requests-cache's ``send`` would look
        the key up again, parse the request's and the answer's cache directives and store the
        answer by its URL rule: much of a cold per-id load's client time (benchmarks/README.md,
        coldfetch). Redirect hops still pass through the cached session (``resolve_redirects``).
        """
        session = self.session
        prepared = prepare_get(session, self.base_url + path, query)
        environment = session.merge_environment_settings(prepared.url, {}, None, None, None)
        return requests.Session.send(
            session,
            prepared,
            timeout=self.settings.timeout_s,  # each part capped at the time left
            allow_redirects=True,
            **environment,
        )

    def _send_until_deadline(
        self, method: str, path: str, endpoint: str, attempt: Callable[[], Any]
    ) -> tuple[Any, int, int]:
        """``attempt`` (one send of ``method path``) until an answer to keep or an error."""
        policy = self.settings.retry
        attempts = spent = 0
        rate_retried = False
        while True:
            attempts += 1
            try:
                response = attempt()
            except requests.RequestException as exc:
                self._raise_or_wait(method, path, endpoint, exc, attempts)
                continue
            if not getattr(response, "from_cache", False):
                spent += 1
                if method == "GET":
                    self.cache.count_miss()
                self._note_quota(response.headers)
            else:
                self.cache.count_hit()
            status = response.status_code
            retry_after = _retry_after_s(response.headers)
            if (
                status in policy.retry_statuses
                and method == "GET"
                and attempts <= policy.max_retries
                and (retry_after is None or retry_after <= policy.max_wait_s)
                and _waits_in_time(policy.backoff(attempts - 1, retry_after))
            ):
                self.sleep(policy.backoff(attempts - 1, retry_after))
                continue
            if (
                status == 429
                and not rate_retried
                and retry_after is not None
                and retry_after <= policy.rate_limit_wait_s
                and _waits_in_time(retry_after)
            ):
                rate_retried = True  # a burst limit, not the daily quota: wait once
                self.sleep(retry_after)
                continue
            return response, attempts, spent

    def _raise_or_wait(
        self, method: str, path: str, endpoint: str, exc: requests.RequestException, attempts: int
    ) -> None:
        """After a failed send: sleep before the next attempt, or raise the toolkit error."""
        policy = self.settings.retry
        timeout = isinstance(exc, requests.Timeout)
        transient = timeout or isinstance(
            exc, requests.ConnectionError | requests.exceptions.ChunkedEncodingError
        )
        safe = method == "GET" or _never_sent(exc)
        wait = policy.backoff(attempts - 1)
        if transient and safe and attempts <= policy.max_retries and _waits_in_time(wait):
            self.sleep(wait)
            return
        out_of_time = timeout or time_left() == 0
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        what = "did not answer in time" if out_of_time else "could not be reached"
        budget = (
            f"; timeout_s={self.settings.timeout_s:g} bounds the whole call" if out_of_time else ""
        )
        head = (
            f"{method} {endpoint}: the service at {self.base_url} {what}{tries} "
            f"({type(exc).__name__}{budget})"
        )
        message = (
            Said(
                "{head}; check QUANTSCOPE_URL and the network, or use cached data with {offline}",
                values={"head": head},
            )
            if method == "GET"
            else f"{head}; the write may or may not have been applied: reload before retrying"
        )
        cls = APITimeoutError if out_of_time else APIConnectionError
        raise cls(message, endpoint=endpoint, attempts=attempts) from exc

    def _note_quota(self, headers: Mapping[str, str]) -> None:
        """Keep the quota an answer from the service reports (a cached one reports none)."""
        quota = quota_from_headers(headers)
        if quota is not None:
            self.quota = quota

    def status_error(
        self,
        response: Any,
        method: str,
        endpoint: str,
        path: str,
        query: Mapping[str, str],
        attempts: int,
    ) -> APIStatusError:
        quota = quota_from_headers(response.headers) or self.quota
        retry_after = _retry_after_s(response.headers)
        reset = quota.reset
        if response.status_code == 429 and reset is None and retry_after is not None:
            reset = datetime.now(UTC) + timedelta(seconds=retry_after)
        return error_from_response(
            response.status_code,
            response.content,
            endpoint=endpoint,
            method=method,
            params={**_path_params(endpoint, path), **query},
            plan=quota.plan,
            reset=reset,
            limit=quota.limit,
            retry_after=retry_after,
            attempts=attempts,
            secrets=[self.settings.api_key or ""],
        )


def query_string(query: Mapping[str, str]) -> str:
    """``query`` encoded as requests encodes a dict of parameters (``None`` values left out,
    ``quote_plus``, in order): the same URL, so the same cache key, without requests'
    runtime-Protocol checks of a mapping (``_encode_params``) on every request.
    """
    return urlencode([(k, v) for k, v in query.items() if v is not None], doseq=True)


def prepare_get(session: requests.Session, url: str, query: Mapping[str, str]) -> PreparedRequest:
    """GET ``url`` with ``query`` prepared as ``session.prepare_request`` prepares it (the
    session's headers, auth or else netrc's, a copy of its cookies, its hooks), with the
    query already encoded (``query_string``) and the headers taken as they are instead of
    merged through requests' runtime-Protocol checks (benchmarks/README.md, coldfetch). A
    session with its own ``params`` is prepared by requests.
    """
    if session.params:
        return session.prepare_request(requests.Request("GET", url, params=dict(query)))
    auth = get_netrc_auth(url) if session.trust_env and not session.auth else None
    cookies = RequestsCookieJar()
    cookies.update(session.cookies)
    prepared = PreparedRequest()
    prepared.prepare(
        method="GET",
        url=url,
        headers={k: v for k, v in session.headers.items() if v is not None},
        params=query_string(query),
        auth=auth if auth is not None else session.auth,
        cookies=cookies,
        hooks=session.hooks,
    )
    return prepared


def _never_sent(exc: BaseException) -> bool:
    """Whether a connection failure happened before the request left (safe to resend a write)."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    seen: BaseException | None = exc
    while seen is not None:
        reason = getattr(seen, "reason", None)
        if isinstance(seen, urllib3.exceptions.NewConnectionError) or isinstance(
            reason, urllib3.exceptions.NewConnectionError
        ):
            return True
        nxt = seen.args[0] if seen.args and isinstance(seen.args[0], BaseException) else None
        seen = nxt or seen.__cause__ or seen.__context__
        if seen is exc:
            break
    return False


def _waits_in_time(seconds: float) -> bool:
    """Whether a wait of ``seconds`` still leaves time for an attempt within the deadline."""
    left = time_left()
    return left is None or seconds < left
