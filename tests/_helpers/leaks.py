"""Looking for a secret in files, in every encoding, and a service that hands it back.

* ``spellings(secret)``: the secret's bytes in every encoding a file could hold it in: literal,
  UTF-16 (LE/BE), base64 at the three alignments, hex (either case), JSON ``\\u`` escapes
  (either case), percent-encoding (either case).
* ``leaks(root, secrets)``: every file under ``root`` holding one of them, as
  ``{path: [what was found]}``: the file's bytes, and its contents decoded: every cell of a
  Parquet file or an Arrow IPC stream, every text and blob value of a SQLite file (an Arrow
  stream inside a blob too), every member of a zip (a ``.qsbundle``).
* ``EchoingProxy``: a loopback proxy in front of a real service that (a) answers the first
  request of each method and URL with a same-origin 307 to the same URL, and (b) writes the
  API key it was sent back into the answers: into free-text string fields of JSON bodies
  (literal, and JSON-escaped in several mixes of escaped and literal characters, either case
  of hex digits) and into a header.
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import random
import sqlite3
import threading
import zipfile
from collections.abc import Iterable
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["EchoingProxy", "escaped", "leaks", "spellings"]


def escaped(secret: str, rng: random.Random | None = None, *, upper: bool = False) -> str:
    """``secret`` as JSON string text: every character ``\\u``-escaped, or (with ``rng``) a
    random mix of literal and escaped characters in random case."""
    out = []
    for char in secret:
        if rng is not None and rng.random() < 0.4:
            out.append(char)
            continue
        code = f"{ord(char):04x}"
        if upper or (rng is not None and rng.random() < 0.5):
            code = code.upper()
        out.append("\\u" + code)
    return "".join(out)


def _base64_cores(data: bytes) -> list[bytes]:
    """The base64 characters that depend on ``data`` alone, for each of the three alignments
    of ``data`` in an encoded stream (the first and last characters also hold neighbours')."""
    cores = []
    for shift in range(3):
        text = base64.b64encode(b"\0" * shift + data)
        head = (shift * 8 + 5) // 6  # characters holding bits of the bytes before
        cores.append(text[head : (shift + len(data)) * 8 // 6])
    return cores


def spellings(secret: str) -> dict[str, bytes]:
    """The secret in every encoding searched for (name -> bytes)."""
    raw = secret.encode()
    forms = {
        "literal": raw,
        "utf-16-le": secret.encode("utf-16-le"),
        "utf-16-be": secret.encode("utf-16-be"),
        "hex": raw.hex().encode(),
        "HEX": raw.hex().upper().encode(),
        "json-escaped": escaped(secret).encode(),
        "JSON-ESCAPED": escaped(secret, upper=True).encode(),
        "percent": "".join(f"%{b:02x}" for b in raw).encode(),
        "PERCENT": "".join(f"%{b:02X}" for b in raw).encode(),
        "url-quoted": quote(secret, safe="").encode(),
    }
    for shift, core in enumerate(_base64_cores(raw)):
        forms[f"base64+{shift}"] = core
    return forms


def _text_cells(values: Iterable[Any]) -> Iterable[bytes]:
    for value in values:
        if isinstance(value, str):
            yield value.encode()
        elif isinstance(value, bytes):
            yield value
        elif isinstance(value, dict | list):
            yield json.dumps(value, ensure_ascii=False).encode()


def _table_cells(table: pa.Table) -> Iterable[bytes]:
    for column in table.columns:
        yield from _text_cells(column.to_pylist())
    yield json.dumps(
        {k.decode("latin-1"): v.decode("latin-1") for k, v in (table.schema.metadata or {}).items()}
    ).encode()


def _arrow_stream(data: bytes) -> pa.Table | None:
    if not data.startswith(b"\xff\xff\xff\xff"):
        return None
    try:
        return pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    except (pa.ArrowInvalid, OSError):
        return None


def _contents(name: str, data: bytes, where: Path | None) -> Iterable[tuple[str, bytes]]:
    """``(part, bytes)`` of a file: itself, then what it holds, decoded."""
    yield name, data
    if data.startswith(b"PAR1"):
        table = pq.read_table(io.BytesIO(data))
        for cell in _table_cells(table):
            yield f"{name} (a Parquet cell)", cell
    elif (stream := _arrow_stream(data)) is not None:
        for cell in _table_cells(stream):
            yield f"{name} (an Arrow cell)", cell
    elif data.startswith(b"ARROW1"):
        for cell in _table_cells(pa.ipc.open_file(pa.py_buffer(data)).read_all()):
            yield f"{name} (an Arrow cell)", cell
    elif data.startswith(b"PK\x03\x04"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.namelist():
                yield from _contents(f"{name}!{member}", archive.read(member), None)
    elif data.startswith(b"SQLite format 3") and where is not None:
        with closing(sqlite3.connect(f"file:{where}?mode=ro", uri=True)) as db:
            tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            for table in tables:
                for row in db.execute(f'SELECT * FROM "{table}"'):
                    for value in row:
                        if isinstance(value, str | bytes):
                            blob = value.encode() if isinstance(value, str) else bytes(value)
                            yield from _contents(f"{name} (table {table})", blob, None)


def leaks(root: Path, secrets: Iterable[str]) -> dict[str, list[str]]:
    """Every file under ``root`` that holds a secret in any spelling, with what was found."""
    forms = {f"{i}:{n}": b for i, s in enumerate(secrets) for n, b in spellings(s).items()}
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        for part, data in _contents(str(path.relative_to(root)), path.read_bytes(), path):
            hits = [name for name, needle in forms.items() if needle in data]
            if hits:
                found.setdefault(str(path.relative_to(root)), []).append(f"{part}: {hits}")
    return found


# --- the echoing, redirecting proxy -------------------------------------------------------

#: Free-text fields the proxy writes the key into (parsers keep their text as it is).
TEXT_FIELDS = frozenset(
    {
        "aiAnalysis",
        "reasoning",
        "alert",
        "name",
        "token",
        "token_name",
        "tokenName",
        "txHash",
        "message",
        "detail",
    }
)
_MARK = "QSLEAKMARK"


class EchoingProxy:
    """A loopback proxy to ``upstream`` that redirects first requests and echoes the key."""

    def __init__(self, upstream: str, *, seed: int = 20) -> None:
        self.upstream = urlsplit(upstream)
        self.rng = random.Random(seed)
        self.redirected = 0
        self.echoed = 0
        self._seen: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> EchoingProxy:
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _spellings(self, key: str) -> list[bytes]:
        return [
            key.encode(),
            escaped(key).encode(),
            escaped(key, upper=True).encode(),
            escaped(key, self.rng).encode(),
            escaped(key, self.rng).encode(),
        ]

    def _inject(self, body: bytes, key: str) -> bytes:
        try:
            data = json.loads(body)
        except ValueError:
            return body + b" " + key.encode()
        count = 0

        def walk(value: Any) -> Any:
            nonlocal count
            if isinstance(value, dict):
                out = {}
                for k, v in value.items():
                    if k in TEXT_FIELDS and isinstance(v, str):
                        out[k] = f"{v} {_MARK}{count % 5}{_MARK}"
                        count += 1
                    else:
                        out[k] = walk(v)
                return out
            if isinstance(value, list):
                return [walk(v) for v in value]
            return value

        text = json.dumps(walk(data), ensure_ascii=False).encode()
        for i, spelled in enumerate(self._spellings(key)):
            text = text.replace(f"{_MARK}{i}{_MARK}".encode(), spelled)
        with self._lock:
            self.echoed += count
        return text

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                sent = self.rfile.read(length) if length else b""
                first = (self.command, self.path)
                with proxy._lock:
                    redirect = first not in proxy._seen
                    proxy._seen.add(first)
                    proxy.redirected += redirect
                if redirect:
                    self.send_response(307)
                    self.send_header("Location", proxy.url + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                up = http.client.HTTPConnection(
                    proxy.upstream.hostname, proxy.upstream.port, timeout=60
                )
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")
                }
                up.request(self.command, self.path, body=sent or None, headers=headers)
                answer = up.getresponse()
                body = answer.read()
                key = self.headers.get("X-API-Key") or ""
                if key and answer.getheader("Content-Type", "").startswith("application/json"):
                    body = proxy._inject(body, key)
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(name, value)
                if key:
                    self.send_header("X-Debug-Echo", f"key={key}; escaped={escaped(key)}")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                up.close()

            do_GET = do_PUT = do_POST = _serve

        return Handler
