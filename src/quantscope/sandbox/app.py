"""The sandbox's FastAPI application: the key/quota gate, the error bodies, the routers.

``create_app(info)`` serves one built world. Everything under ``/api`` passes the gate
(``ApiGate``): a missing or unknown key is refused before routing, otherwise the request is
counted against the key's daily quota and every answer (errors and unknown paths included)
carries the ``X-RateLimit-*`` headers. ``/health``, ``/openapi.json`` and ``/docs`` are open.
Every non-2xx answer has the contract's error body (errors.py), whatever raised it.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.datastructures import Default
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quantscope.sandbox import auth, bodylimit, httpguard, routers
from quantscope.sandbox.datadir import WorldInfo
from quantscope.sandbox.deps import CALLER_STATE, Caller, OrjsonResponse
from quantscope.sandbox.errors import API_ERROR_RESPONSES, ApiError, invalid_body
from quantscope.sandbox.params import MAX_ID
from quantscope.sandbox.store import SCHEMA_VERSION, Store, is_busy

logger = logging.getLogger("quantscope.sandbox")

Clock = Callable[[], datetime]

_DESCRIPTION = (
    "Local sandbox of the Quant Trading Data Service: a deterministic simulated world. "
    "Send the key in `X-API-Key` (`quantscope sandbox keys` prints them). Where the service "
    "specification says 'not shown', the sandbox's decisions are in docs/service-contract.md."
)


def utc_now() -> datetime:
    """The real clock, in UTC: it decides quota days."""
    return datetime.now(UTC)


def create_app(info: WorldInfo, *, clock: Clock | None = None, metered: bool = True) -> FastAPI:
    """The application serving the world in ``info``.

    Args:
        info: a built world (datadir.ensure_world or copy_world).
        clock: the real-time clock of quota days; tests inject one to cross midnight.
        metered: ``False`` is a test-only switch (the reliability fuzz): keys are still checked
            and plans still enforced, but no request is counted, so none is ever 429 and no
            rate headers are sent. Only Python code can pass it: neither the CLI nor any
            environment variable reaches it.

    Raises:
        FileNotFoundError: when the world database does not exist.
    """
    if not info.db_path.is_file():
        raise FileNotFoundError(
            f"no world database at {info.db_path}; build one with datadir.ensure_world()"
        )
    app = FastAPI(
        title="quantscope sandbox",
        version=f"schema {SCHEMA_VERSION}",
        description=_DESCRIPTION,
        default_response_class=Default(OrjsonResponse),
        redirect_slashes=False,
        redoc_url=None,
    )
    app.state.store = Store(info.db_path)
    app.state.world = info
    app.state.fast_solve = True  # deps.JSONRoute: arguments without FastAPI's look-ups
    app.add_middleware(
        ApiGate,
        store=app.state.store,
        records=_key_records(info),
        clock=clock or utc_now,
        metered=metered,
    )
    _add_exception_handlers(app)
    _add_health(app)
    _include_routers(app)
    app.openapi = lambda: _openapi_schema(app)  # type: ignore[method-assign]  # FastAPI's documented way to customise the schema
    return app


def error_response(error: ApiError) -> Response:
    """The contract's error body as a response, with the error's headers."""
    return OrjsonResponse(error.body(), status_code=error.status, headers=error.headers)


def is_api_path(path: str) -> bool:
    """Whether ``path`` is under ``/api``."""
    return path == "/api" or path.startswith("/api/")


def _key_records(info: WorldInfo) -> dict[str, auth.KeyRecord]:
    with contextlib.closing(sqlite3.connect(info.db_path)) as conn:
        return auth.load_key_records(conn)


def framing_refusal(scope: Scope) -> ApiError | None:
    """400 for ambiguous framing, 414 for an over-long URL; both close the connection.

    A request with both ``Content-Length`` and ``Transfer-Encoding`` may be framed differently
    by a proxy in front of the server (request smuggling): it is refused before anything runs,
    and ``Connection: close`` makes the server drop whatever follows it on the connection.
    """
    close = {"Connection": "close"}
    names = {name for name, _ in scope.get("headers", ())}
    if b"content-length" in names and b"transfer-encoding" in names:
        return ApiError(
            400,
            "bad_request",
            "a request may carry Content-Length or Transfer-Encoding, not both",
            headers=close,
        )
    url_bytes = len(scope.get("raw_path") or b"") + 1 + len(scope.get("query_string") or b"")
    if url_bytes > httpguard.MAX_URL:
        return ApiError(
            414, "uri_too_long", f"the URL is longer than {httpguard.MAX_URL} bytes", headers=close
        )
    return None


_INTERNAL_ERROR = ApiError(
    500, "internal_error", "the sandbox failed on this request (a bug; see its log)"
)


class ApiGate:
    """ASGI middleware: authenticate and count /api requests; never let a traceback out.

    A refusal (401, 429) is answered here, before routing. An exception no handler turned into
    a response is logged and answered with a 500 ``internal_error`` body.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        store: Store,
        records: dict[str, auth.KeyRecord],
        clock: Clock,
        metered: bool = True,
    ) -> None:
        self.app = app
        self.store = store
        self.records = records
        self.clock = clock
        self.metered = metered

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        framing = framing_refusal(scope)
        if framing is not None:
            await error_response(framing)(scope, receive, send)
            return
        method, path = scope["method"], scope["path"]
        limit = bodylimit.limit_for(method, path)
        declared = bodylimit.declared_length(scope.get("headers", []))
        if declared is not None and declared > limit:  # refused before any byte is read
            await error_response(bodylimit.too_large(method, path, limit))(scope, receive, send)
            return
        if declared is None:  # chunked (or no body): counted as the application reads it
            receive = bodylimit.LimitedReceive(receive, method, path, limit)
        extra_headers: dict[str, str] = {}
        if is_api_path(scope["path"]):
            try:
                caller, check = await self._admit(scope)
            except ApiError as refusal:
                await error_response(refusal)(scope, receive, send)
                return
            except Exception:  # the quota store failed (e.g. locked past its busy timeout)
                logger.exception("admitting %s %s failed", scope.get("method"), scope["path"])
                await error_response(_INTERNAL_ERROR)(scope, receive, send)
                return
            scope.setdefault("state", {})[CALLER_STATE] = caller
            extra_headers = check.headers() if check is not None else {}
        await self._run(scope, receive, send, extra_headers)

    async def _admit(self, scope: Scope) -> tuple[Caller, auth.QuotaCheck | None]:
        key = Headers(scope=scope).get("x-api-key")
        if not key:
            raise ApiError(
                401,
                "missing_api_key",
                "send your API key in the X-API-Key header "
                "(`quantscope sandbox keys` prints the sandbox's keys)",
            )
        record = auth.authenticate(self.records, key)
        if record is None:
            raise ApiError(
                401,
                "invalid_api_key",
                "the X-API-Key value is not a key of this sandbox "
                "(`quantscope sandbox keys` prints the keys of a world)",
            )
        plan = record.plan
        if not self.metered:
            return Caller(record.key_id, plan, plan.chains), None
        check = await self._spend(record.key_id, plan.daily_limit, self.clock())
        if not check.allowed:
            raise ApiError(
                429,
                "rate_limited",
                f"the {plan.name} plan's daily limit of {plan.daily_limit} requests is spent; "
                f"it resets at {check.reset.strftime('%Y-%m-%dT%H:%M:%SZ')} "
                f"(in {check.retry_after_s} s)",
                headers=check.headers(),
            )
        return Caller(record.key_id, plan, plan.chains), check

    async def _spend(self, key_id: int, limit: int, now: datetime) -> auth.QuotaCheck:
        """Count the request: one SQLite statement, committed before anything is answered.

        It runs here, on the event loop's thread, through a connection that never waits for a
        lock (a few microseconds: no thread hop); only when another writer holds the database
        (a playbook write, another process) is it run again in a worker thread, which waits.
        The statement is atomic either way, and a refused attempt changes nothing.
        """
        try:
            return auth.spend(self.store.connect_nowait(), key_id, limit, now)
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
        return await anyio.to_thread.run_sync(
            lambda: auth.spend(self.store.connect(), key_id, limit, now)
        )

    async def _run(
        self, scope: Scope, receive: Receive, send: Send, extra_headers: dict[str, str]
    ) -> None:
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra_headers.items()]
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if raw:
                    message = {**message, "headers": [*message.get("headers", ()), *raw]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except bodylimit.BodyTooLarge as exc:  # read outside FastAPI's handlers
            if started:
                raise
            await error_response(exc.error)(scope, receive, send_with_headers)
        except Exception:
            logger.exception("unhandled error in %s %s", scope.get("method"), scope["path"])
            if started:  # too late for an error body; let the server close the connection
                raise
            await error_response(_INTERNAL_ERROR)(scope, receive, send_with_headers)


def _add_exception_handlers(app: FastAPI) -> None:
    async def on_api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return error_response(exc)

    async def on_validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return error_response(validation_error(exc))

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        return error_response(http_error(request, exc))

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)


_LOCATIONS = ("query", "path", "header", "cookie", "body")


def validation_error(exc: RequestValidationError) -> ApiError:
    """422 for FastAPI's validation errors: ``param`` names the first bad value.

    Query/path parameters are named as declared (``loc[-1]``); body fields by their path
    inside the body (``newConfigs[0].field``).
    """
    errors = list(exc.errors())
    first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request", "type": ""}
    in_body = bool(first["loc"]) and first["loc"][0] == "body"
    message = "; ".join(_describe(error) for error in errors) or "invalid request"
    param = None if first.get("type") == "json_invalid" else _param_name(first["loc"])
    if in_body:
        return invalid_body(param, message)
    return ApiError(422, "invalid_parameter", message, param)


def _param_name(loc: Any) -> str | None:
    parts = list(loc)
    kind = parts.pop(0) if parts and parts[0] in _LOCATIONS else None
    if kind != "body":
        names = [p for p in parts if isinstance(p, str)]
        return names[-1] if names else None
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or None


def _describe(error: Any) -> str:
    name = _param_name(error.get("loc", ())) or "the request body"
    kind = error.get("type", "")
    if kind == "missing":
        return f"{name} is required"
    if kind == "json_invalid":
        reason = error.get("ctx", {}).get("error", "malformed JSON")
        return f"the request body is not valid JSON ({reason})"
    if isinstance(error.get("input"), bytes):  # a body sent without a JSON content type
        return "the request body must be JSON, sent with Content-Type: application/json"
    got = repr(error.get("input"))
    if len(got) > 80:
        got = got[:77] + "..."
    msg = str(error.get("msg", "invalid value"))
    return f"{name}: {msg[:1].lower()}{msg[1:]}, got {got}"


def http_error(request: Request, exc: StarletteHTTPException) -> ApiError:
    """Starlette's HTTP errors (routing's 404/405, body parsing) in the contract's terms.

    The contract's codes are a closed list: a client error other than 404/405 can only come
    from reading the request body, so it becomes 422 ``invalid_body``.
    """
    if isinstance(exc, bodylimit.BodyTooLarge):
        return exc.error
    target = f"{request.method} {request.url.path}"
    default = exc.detail in (None, "", "Not Found", "Method Not Allowed")
    if exc.status_code == 404:
        message = f"no endpoint {target}" if default else str(exc.detail)
        return ApiError(404, "not_found", message)
    if exc.status_code == 405:
        allowed = ", ".join(served_methods(request)) or (exc.headers or {}).get("Allow", "")
        message = f"{request.method} is not allowed on {request.url.path}; allowed: {allowed}"
        return ApiError(405, "method_not_allowed", message, headers={"Allow": allowed})
    if exc.status_code >= 500:
        return ApiError(500, "internal_error", str(exc.detail))
    return invalid_body(None, f"{target}: {exc.detail}")


_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def served_methods(request: Request) -> list[str]:
    """Every method some route serves on the request's path, sorted.

    Starlette's 405 names only the methods of the first route whose path matched; a path served
    by two routes (GET and PUT /api/degen/config) must list both in ``Allow``. Each method is
    tried against the routes as routing would (included routers too).
    """
    routes = request.app.router.routes
    return [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL for route in routes
        )
    ]


def _add_health(app: FastAPI) -> None:
    info: WorldInfo = app.state.world

    @app.get(
        "/health",
        tags=["sandbox"],
        responses={status: API_ERROR_RESPONSES[status] for status in (400, 413, 414)},
    )
    async def health() -> dict[str, Any]:
        """Liveness and the world being served; needs no key and spends no quota."""
        return {
            "status": "ok",
            "seed": info.seed,
            "scale": info.scale,
            "schemaVersion": SCHEMA_VERSION,
        }


def _include_routers(app: FastAPI) -> None:
    """Mount every router of routers.ROUTERS, in that order."""
    for router in routers.ROUTERS:
        app.include_router(router, responses=API_ERROR_RESPONSES)


def integer_bounds(node: Any) -> Any:
    """Integer bounds as integers again, in place.

    FastAPI's OpenAPI models hold ``minimum``/``maximum`` as floats, and float(2^63 - 1) is
    2^63: a component's id range would admit an id the server refuses.
    """
    if isinstance(node, dict):
        if node.get("type") == "integer":
            for name in ("minimum", "maximum"):
                value = node.get(name)
                if isinstance(value, float) and value.is_integer():
                    node[name] = MAX_ID if value == float(MAX_ID) else int(value)
        for child in node.values():
            integer_bounds(child)
    elif isinstance(node, list):
        for child in node:
            integer_bounds(child)
    return node


def _openapi_schema(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema plus the X-API-Key security scheme on every /api operation."""
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        components = schema.setdefault("components", {})
        components.setdefault("securitySchemes", {})["ApiKey"] = {
            "type": "apiKey",
            "in": "header",
            "name": "X-API-Key",
        }
        for path, operations in schema.get("paths", {}).items():
            if is_api_path(path):
                for operation in operations.values():
                    operation["security"] = [{"ApiKey": []}]
        app.openapi_schema = integer_bounds(schema)
    return app.openapi_schema
