"""A fake GitHub on 127.0.0.1 for tests: the REST API (commits/REF with ETag and 304, tarball/REF as
a 302) on one host name and the download on another (`localhost`), so a forwarded token shows;
archives come from `git archive` of a real repository. A script of canned answers goes first."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FAKE_NOW = 1_900_000_000.0  # the injected clock's start: 2030-03-17T17:46:40Z


class Clock:
    """An injectable clock whose sleep() only moves the time on and notes how long."""

    def __init__(self, now: float = FAKE_NOW) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@dataclass(frozen=True)
class Seen:
    host: str  # 127.0.0.1 (the API) or localhost (the download host)
    path: str
    headers: dict[str, str]
    at: float = 0.0  # the injected clock's time when the request came in

    @property
    def auth(self) -> str | None:
        return self.headers.get("authorization")

    @property
    def api(self) -> bool:
        return self.host == "127.0.0.1"


@dataclass
class Canned:
    """One scripted answer, given to the next request of its kind (commits, tarball, download, any)."""

    kind: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    cut: int = 0  # leave off this many bytes of the body (the Content-Length still counts them)


class FakeGitHub:
    def __init__(self, repo: Path, clock: Clock, owner: str = "acme", name: str = "handbook") -> None:
        self.repo, self.clock, self.owner, self.name = repo, clock, owner, name
        self.seen: list[Seen] = []
        self.script: list[Canned] = []
        self.archives: dict[str, bytes] = {}  # commit → archive served instead of git archive's
        self.remaining = 5000  # in the hour that ends at reset_at
        self.reset_at = int(clock.now) + 3600
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeGitHub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def api_requests(self) -> list[Seen]:
        return [s for s in self.seen if s.api]

    def downloads(self) -> list[Seen]:
        return [s for s in self.seen if not s.api]

    def resolve(self, ref: str) -> str | None:
        done = subprocess.run(["git", "rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], cwd=self.repo,
                              capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else None

    def archive(self, sha: str) -> bytes:
        if sha in self.archives:
            return self.archives[sha]
        prefix = f"{self.owner}-{self.name}-{sha[:7]}/"
        return subprocess.run(["git", "archive", "--format=tar.gz", f"--prefix={prefix}", sha], cwd=self.repo,
                              capture_output=True, check=True).stdout

    def rate_headers(self) -> dict[str, str]:
        with self.lock:
            if self.clock.now >= self.reset_at:  # a new hour: the full allowance again
                self.remaining, self.reset_at = 5000, int(self.clock.now) + 3600
            self.remaining = max(self.remaining - 1, 0)
            left = self.remaining
        return {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": str(left), "x-ratelimit-used": str(5000 - left),
                "x-ratelimit-reset": str(self.reset_at), "x-ratelimit-resource": "core"}


def _handler(fake: FakeGitHub) -> Callable[..., BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def _send(self, status: int, headers: dict[str, str], body: bytes = b"", cut: int = 0) -> None:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) - cut])

        def _json(self, status: int, message: str, headers: dict[str, str]) -> None:
            self._send(status, {**headers, "Content-Type": "application/json"},
                       json.dumps({"message": message}).encode())

        def do_GET(self) -> None:
            host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
            path = self.path
            fake.seen.append(Seen(host, path, {k.lower(): v for k, v in self.headers.items()}, fake.clock.now))
            api = host == "127.0.0.1"
            kind = "download" if not api else "commits" if "/commits/" in path else "tarball" if "/tarball/" in path else "other"
            with fake.lock:
                canned = next((c for c in fake.script if c.kind in (kind, "any")), None)
                if canned is not None:
                    fake.script.remove(canned)
            if canned is not None:
                self._send(canned.status, canned.headers, canned.body, canned.cut)
                return
            rate = fake.rate_headers() if api else {}
            repo = f"/repos/{fake.owner}/{fake.name}"
            m = re.fullmatch(rf"{repo}/(commits|tarball)/(.+)", path) if api else None
            if m:
                sha = fake.resolve(urllib.parse.unquote(m[2]))
                if sha is None:
                    self._json(404, "No commit found", rate)
                elif m[1] == "tarball":
                    where = f"http://localhost:{fake.port}/{fake.owner}/{fake.name}/legacy.tar.gz/{sha}"
                    self._send(302, {**rate, "Location": where})
                elif self.headers.get("Accept") != "application/vnd.github.sha":
                    self._json(415, "this fake answers commits/REF only as application/vnd.github.sha", rate)
                else:
                    etag = f'W/"{sha[:16]}"'
                    if self.headers.get("If-None-Match") == etag:
                        self._send(304, {**rate, "ETag": etag})
                    else:
                        self._send(200, {**rate, "ETag": etag, "Content-Type": "text/plain"}, sha.encode())
                return
            d = re.fullmatch(rf"/{fake.owner}/{fake.name}/legacy\.tar\.gz/([0-9a-f]{{40}})", path) if not api else None
            if d:
                self._send(200, {"Content-Type": "application/x-gzip"}, fake.archive(d[1]))
                return
            self._json(404, "Not Found", rate)

    return Handler
