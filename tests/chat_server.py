"""A scripted chat-completions server on loopback, for testing the LLM judge over real HTTP.

Each request consumes the next step of the test's *script* and is recorded (path, headers,
parsed body) for assertions. Steps:

* ``Reply(content, usage)``: a 200 chat completion whose message content is ``content``;
* ``Raw(body, status, headers)``: any status and body (malformed JSON, 429, 500, ...);
* ``Drop()``: close the connection without sending a response;
* ``Trickle(content, every, headers)``: a 200 chat completion sent one byte every
  ``every`` seconds, its body only or (``headers=True``) status line and headers too, so
  each read arrives well within a client's timeout and the whole reply never does; it
  stops when the server is stopped;
* a callable ``(Received) -> Raw``: a reply computed from the request (e.g. an echo);

``Reply``, ``Raw`` and ``Drop`` take ``delay``: seconds to wait first (past a client's
timeout, or to keep requests in flight); ``hold_until`` instead waits until that many
requests are in flight at once (up to ``HOLD_LIMIT`` seconds), so a test can show that
the client allows that many without relying on timing. When the script runs out the server
answers 418 and ``ChatServer`` fails the test on exit, so an unexpected request is loud.
The server listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

HOLD_LIMIT = 2.0  # seconds a ``hold_until`` step waits for the others at most


@dataclass(frozen=True)
class Received:
    """One request as the server saw it; ``headers`` keys are lower-case."""

    path: str
    headers: Mapping[str, str]
    body: Any  # the parsed JSON body, or None when it was not JSON
    raw: bytes


@dataclass(frozen=True)
class Reply:
    """A 200 chat completion with ``content`` as the assistant's message."""

    content: str
    usage: Mapping[str, int] | None = None
    delay: float = 0.0
    hold_until: int = 0


@dataclass(frozen=True)
class Raw:
    """A reply written as given: for error statuses and bodies that are not completions."""

    body: str | bytes
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hold_until: int = 0


@dataclass(frozen=True)
class Drop:
    """Close the connection without any response (the client sees a remote disconnect)."""

    delay: float = 0.0
    hold_until: int = 0


@dataclass(frozen=True)
class Trickle:
    """A 200 chat completion with ``content`` sent a byte every ``every`` seconds: the body
    only, or with ``headers`` the whole response."""

    content: str
    every: float = 0.2
    headers: bool = False


Step = Reply | Raw | Drop | Trickle | Callable[[Received], Raw]
EXHAUSTED = Raw('{"error": {"message": "the test script has no step for this request"}}', 418)


def completion(content: str, usage: Mapping[str, int] | None = None) -> str:
    """The JSON body of a chat completion carrying ``content``."""
    document: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    if usage is not None:
        document["usage"] = dict(usage)
    return json.dumps(document)


def unused_port() -> int:
    """A loopback port nothing listens on (bound, read and closed), for "connection
    refused"."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class ChatServer:
    """``with ChatServer([steps...]) as server:`` then point the judge at ``server.url``."""

    def __init__(self, script: Iterable[Step] = (), default: Step | None = None) -> None:
        self.script = list(script)
        self.default = default
        self.requests: list[Received] = []
        self.unexpected = 0  # requests that found the script exhausted and no default
        self.in_flight = 0
        self.max_in_flight = 0
        self._condition = threading.Condition()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        """The base URL a judge is configured with (requests go to ``/v1/chat/completions``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stopping.set()
        with self._condition:
            self._condition.notify_all()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        if kind is None and self.unexpected:
            raise AssertionError(f"{self.unexpected} request(s) arrived after the script ended")

    def _next_step(self, received: Received) -> Step:
        with self._condition:
            self.requests.append(received)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._condition.notify_all()
            if self.script:
                return self.script.pop(0)
            if self.default is not None:
                return self.default
            self.unexpected += 1
            return EXHAUSTED

    def _wait(self, delay: float, hold_until: int) -> None:
        if delay:
            self._stopping.wait(delay)
        if hold_until:
            with self._condition:
                self._condition.wait_for(
                    lambda: self.in_flight >= hold_until or self._stopping.is_set(), HOLD_LIMIT
                )

    def _done(self) -> None:
        with self._condition:
            self.in_flight -= 1
            self._condition.notify_all()


def _handler_for(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the method name http.server dispatches to
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            headers = {name.lower(): value for name, value in self.headers.items()}
            received = Received(self.path, headers, body, raw)
            step = server._next_step(received)
            self._perform(step, received)

        def _perform(self, step: Step, received: Received) -> None:
            if callable(step):
                step = step(received)
            if isinstance(step, Trickle):
                server._done()
                self._trickle(step)
                return
            server._wait(step.delay, step.hold_until)
            # Out of flight before the reply goes out: once the client has read it, it may
            # send its next request at once, and that one must not count as concurrent.
            server._done()
            if isinstance(step, Drop):
                self.close_connection = True
                return
            if isinstance(step, Reply):
                step = Raw(completion(step.content, step.usage), 200, {}, step.delay)
            payload = step.body.encode() if isinstance(step.body, str) else step.body
            try:
                self.send_response(step.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in step.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up waiting (a timeout test)

        def _trickle(self, step: Trickle) -> None:
            self.close_connection = True
            body = completion(step.content).encode()
            head = (
                f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode()
            slow = head + body if step.headers else body
            try:
                if not step.headers:
                    self.wfile.write(head)
                    self.wfile.flush()
                for index in range(len(slow)):
                    if server._stopping.wait(step.every):
                        return  # the test is over: the connection closes, short
                    self.wfile.write(slow[index : index + 1])
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up, as it should

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the tests assert on ``server.requests`` instead."""

    return Handler
