"""Real receivers on 127.0.0.1 for the delivery tests: an SMTP server (aiosmtpd) that asks for a
login, and an HTTP webhook receiver (stdlib) that can answer 500 or answer too late."""

from __future__ import annotations

import json
import socket
import threading
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, server, session, envelope):  # aiosmtpd handler hook
        self.messages.append(message_from_bytes(envelope.content, policy=policy.default))
        return "250 OK"


class SmtpServer:
    """Plain SMTP with AUTH LOGIN/PLAIN on loopback; only `user`/`password` may log in."""

    def __init__(self, user: str, password: str) -> None:
        self.user, self.password = user, password
        self.inbox = _Inbox()
        self.port = free_port()

        def authenticate(server, session, envelope, mechanism, auth_data):
            ok = (
                isinstance(auth_data, LoginPassword)
                and auth_data.login.decode() == self.user
                and auth_data.password.decode() == self.password
            )
            return AuthResult(success=ok)

        self.controller = Controller(
            self.inbox, hostname=HOST, port=self.port, authenticator=authenticate, auth_require_tls=False
        )

    def url(self, to: str = "ra@example.com", **extra: str) -> str:
        query = "&".join(
            [f"smtp={HOST}", "mode=insecure", f"to={to}", "from=dmf@example.com"]
            + [f"{k}={v}" for k, v in extra.items()]
        )
        return f"mailto://{self.user}:{self.password}@{HOST}:{self.port}?{query}"

    def __enter__(self) -> SmtpServer:
        self.controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        try:
            self.controller.stop()
        except AssertionError:  # already stopped
            pass


class WebhookReceiver:
    """Records every POST (path, headers, JSON); answers `status` after `delay` seconds."""

    def __init__(self, status: int = 200, delay: float = 0.0) -> None:
        self.status, self.delay = status, delay
        self.requests: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    payload = json.loads(body.decode("utf-8"))
                except ValueError:
                    payload = None
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "json": payload})
                if receiver.delay:
                    time.sleep(receiver.delay)
                self.send_response(receiver.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                try:
                    self.wfile.write(b"{}")
                except OSError:
                    pass

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer((HOST, 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, user: str, password: str, path: str = "hook", **extra: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in extra.items())
        return f"json://{user}:{password}@{HOST}:{self.port}/{path}" + (f"?{query}" if query else "")

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
