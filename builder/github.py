"""GitHub as a source: `github:OWNER/REPO[@REF][:PATH]` → one tarball, streamed and read in memory,
within GitHub's rate limits; the ref's ETag and the files of each commit are cached."""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import os
import re
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.message import Message
from http.client import HTTPMessage
from pathlib import Path
from typing import IO, Any

from mdfts.discover import DEFAULT_INCLUDE, FileSet, wanted
from mdfts.errors import MdftsError, display
from mdfts.includes import MAX_BYTES, READ_COST, Files, Includes, may_include

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"  # X-GitHub-Api-Version; GitHub Enterprise Server knows it too
LOW_WATER = 2  # with this many requests left or fewer, wait for the reset before the next one
MAX_RETRIES = 3  # per request, for rate limits and for server errors alike
FIRST_BACKOFF = 60.0  # a rate limit that names no time to wait: 60 s, 120 s, 240 s
# No requests left, yet the reset already past by this machine's clock (it runs ahead of
# GitHub's): the reset says nothing, so 5 s, 10 s, 20 s, not three retries in the same second.
PAST_RESET_BACKOFF = 5.0
DEFAULT_MAX_WAIT = 900.0  # seconds of rate-limit waiting a whole build may spend
MAX_FILE_BYTES = 8 << 20  # one kept file
MAX_TOTAL_BYTES = 256 << 20  # all kept files of one source
MAX_ARCHIVE_BYTES = 8 << 30  # every file in the tarball, kept or not (a decompression bomb stops here)
MAX_HEADER_BYTES = 1 << 20  # one pax or long-name header, and all global pax headers together
# files below PATH the selection leaves out, held while the archive is read in case an include
# directive names one (each at most includes.MAX_BYTES, what a directive reads of a file, and
# counting includes.READ_COST at least); past this, the rest are not held (a warning says so when
# a kept page has directives)
MAX_SPARE_BYTES = 64 << 20
TIMEOUT = 60.0  # seconds without a byte before a request fails

_OWNER = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"
_REPO = r"[A-Za-z0-9._-]{1,100}"
_SPEC = re.compile(rf"github:(?P<owner>{_OWNER})/(?P<repo>{_REPO})(?:@(?P<ref>[^:]*))?(?::(?P<path>.*))?\Z")
_SHA = re.compile(r"[0-9a-fA-F]{40}\Z")


@dataclass(frozen=True, slots=True)
class GitHubSource:
    owner: str
    repo: str
    ref: str | None  # as asked; None: the default branch
    path: str  # folder or file inside the repository, "/" separators; "" for all of it

    @property
    def name(self) -> str:
        """How mdfts_meta names the source: github:owner/repo."""
        return f"github:{self.owner}/{self.repo}"

    @property
    def prefix(self) -> str:
        """What the documents' paths start with when the build has more than one source: the
        repository's own path, under owner/repo[@ref], so two sources never share a path."""
        at = f"@{self.ref}" if self.ref else ""
        return "/".join(p for p in (f"{self.owner}/{self.repo}{at}", self.path) if p)

    def __str__(self) -> str:
        """The source as written, for messages: a control character in its path (git allows one) escaped."""
        return self.name + (f"@{self.ref}" if self.ref else "") + (f":{display(self.path)}" if self.path else "")


def is_github(text: str) -> bool:
    """True when a source argument is meant as a GitHub source (starts with `github:`)."""
    return text.startswith("github:")


def parse_source(text: str) -> GitHubSource:
    """`github:OWNER/REPO[@REF][:PATH]` → GitHubSource; an error saying what is wrong otherwise."""
    m = _SPEC.match(text)
    if not m:
        raise MdftsError(f"{text!r}: not a GitHub source; write github:OWNER/REPO[@REF][:PATH]")
    ref = m["ref"]
    if ref is not None and (not ref or ".." in ref or "@{" in ref or ref.endswith("/")
                            or any(c in " ~^?*[\\\x7f" or c < " " for c in ref)):  # as git check-ref-format
        raise MdftsError(f"{text!r}: {ref!r} is not a valid git ref")
    parts = [p for p in (m["path"] or "").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise MdftsError(f"{text!r}: the path may not contain '..'")
    return GitHubSource(m["owner"], m["repo"], ref, "/".join(parts))


def web_url(api_url: str) -> str:
    """The web address that goes with an API address: api.github.com → github.com,
    https://HOST/api/v3 (GitHub Enterprise Server) → https://HOST; others as they are."""
    parts = urllib.parse.urlsplit(api_url.rstrip("/"))
    host, path = parts.netloc, parts.path
    if path.endswith("/api/v3"):
        path = path[: -len("/api/v3")]
    elif host.startswith("api."):
        host = host[len("api."):]
    return urllib.parse.urlunsplit((parts.scheme, host, path, "", ""))


def source_url_template(api_url: str, source: GitHubSource, folder: str) -> str:
    """The default source-URL template of a build from `source` (documents relative to `folder`)."""
    base = f"{web_url(api_url)}/{source.owner}/{source.repo}/blob/{{commit}}/"
    prefix = urllib.parse.quote(folder, safe="/").replace("{", "{{").replace("}", "}}")
    return base + (f"{prefix}/" if prefix else "") + "{path}#L{start_line}-L{end_line}"


# --- HTTP with rate limits ------------------------------------------------------------------


@dataclass(slots=True)
class RateLimit:
    """What the x-ratelimit-* headers of the last API response said."""

    limit: int | None = None
    remaining: int | None = None
    used: int | None = None
    reset: int | None = None  # seconds since the epoch
    resource: str | None = None

    def update(self, headers: Message | Mapping[str, str]) -> None:
        for name in ("limit", "remaining", "used", "reset"):
            value = headers.get(f"x-ratelimit-{name}")
            if value is not None and value.strip().isdigit():
                setattr(self, name, int(value))
        self.resource = headers.get("x-ratelimit-resource") or self.resource

    def describe(self) -> str:
        name = f"GitHub's {self.resource or 'core'} rate limit"
        if self.remaining is not None and self.limit is not None:
            name += f" ({self.remaining} of {self.limit} requests left)"
        return name


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(slots=True)
class Response:
    status: int
    headers: Message
    body: IO[bytes]

    def close(self) -> None:
        self.body.close()


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), parts.hostname, parts.port


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects as urllib does, dropping unredirected headers (the token) unless the new
    address is on the API's own origin (a renamed repository's 301), and hands the redirecting
    response's headers (the API's x-ratelimit-*) to `seen` first."""

    def __init__(self, api_url: str) -> None:
        self.seen: Callable[[Message], None] | None = None
        self.api_origin = _origin(api_url)

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                         headers: HTTPMessage, newurl: str) -> urllib.request.Request | None:
        if self.seen is not None:
            self.seen(headers)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        token = req.unredirected_hdrs.get("Authorization")
        if new is not None and token and _origin(new.full_url) == self.api_origin:
            new.add_unredirected_header("Authorization", token)
        return new


@dataclass
class GitHubClient:
    """Serial GETs to the GitHub REST API that keep to its rate limits, exactly:

    every response's x-ratelimit-* headers are read; with `low_water` requests left or fewer, the
    next API request waits for the reset; a 429, or a 403 with retry-after, remaining 0 or a rate-limit
    message, waits retry-after seconds, else (remaining 0) until the reset (5 s doubling when this
    clock has it past already), else 60 s doubling, at most 3 times; any other 403 fails at once;
    5xx and network errors retry after 1, 2, 4 s. Rate-limit waits add up to at most `max_wait`
    seconds (0: fail at once) over the client's life. The token goes to the API host only: along a
    redirect only to the API's own origin.
    """

    api_url: str = DEFAULT_API_URL
    token: str | None = field(default=None, repr=False)
    max_wait: float = DEFAULT_MAX_WAIT
    low_water: int = LOW_WATER
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    opener: urllib.request.OpenerDirector | None = field(default=None, repr=False)
    timeout: float = TIMEOUT
    rate: RateLimit = field(default_factory=RateLimit)
    waited: float = 0.0  # rate-limit seconds slept so far
    requests: int = 0  # API requests sent, retries included

    def __post_init__(self) -> None:
        self.api_url = self.api_url.rstrip("/")
        parts = urllib.parse.urlsplit(self.api_url)
        if parts.username is not None or parts.password is not None:  # not echoed: it may be a token
            raise MdftsError("--api-url: must not carry a user or password; give the token in GITHUB_TOKEN")
        if not re.match(r"https?://[^/]", self.api_url):
            raise MdftsError(f"--api-url {self.api_url!r}: must start with https:// (or http://)")
        if self.opener is None:
            redirects = _Redirects(self.api_url)
            redirects.seen = self.rate.update
            self.opener = urllib.request.build_opener(redirects)

    def _headers(self, accept: str) -> dict[str, str]:
        return {"Accept": accept, "User-Agent": f"mdfts/{_version()}", "X-GitHub-Api-Version": API_VERSION}

    def _wait_for_limit(self, seconds: float, why: str) -> None:
        seconds = max(seconds, 0.0)
        if self.waited + seconds > self.max_wait:
            reset = f"; it resets at {_utc(self.rate.reset)}" if self.rate.reset else ""
            hint = "" if self.token else "; set GITHUB_TOKEN for a higher limit"
            raise MdftsError(
                f"{self.rate.describe()}: {why}{reset}; waiting {seconds:.0f} s more would pass "
                f"--max-wait {self.max_wait:g} s{hint}"
            )
        self.waited += seconds
        self.sleep(seconds)
        self.rate.remaining = None  # unknown until the next response says

    def _until_reset(self) -> float:
        # The reset is a whole second: one more makes sure the window has turned.
        return float(self.rate.reset) - self.clock() + 1 if self.rate.reset is not None else 0.0

    def get(self, path: str, *, accept: str = "application/vnd.github+json", etag: str | None = None,
            what: str = "") -> Response:
        """GET an API path (redirects followed); a 2xx or 304 Response, else an MdftsError."""
        url = f"{self.api_url}/{path.lstrip('/')}"
        what = what or path
        limited = failed = 0
        while True:
            if self.rate.remaining is not None and self.rate.remaining <= self.low_water and self.rate.reset:
                self._wait_for_limit(self._until_reset(), "too few requests left to go on")
            request = urllib.request.Request(url, headers=self._headers(accept))
            if etag:
                request.add_header("If-None-Match", etag)
            if self.token:
                request.add_unredirected_header("Authorization", f"Bearer {self.token}")
            self.requests += 1
            assert self.opener is not None
            try:
                raw = self.opener.open(request, timeout=self.timeout)
            except urllib.error.HTTPError as err:
                self.rate.update(err.headers)
                if err.code == 304:
                    return Response(304, err.headers, err)
                body = _read_message(err)
                err.close()
                if err.code == 429 or (err.code == 403 and _rate_limited(err.headers, body)):
                    if limited == MAX_RETRIES:
                        raise MdftsError(f"{what}: {self.rate.describe()}: still limited after "
                                         f"{MAX_RETRIES} retries (HTTP {err.code}); try again later") from None
                    self._wait_for_limit(self._rate_wait(err.headers, limited), f"HTTP {err.code} on {what}")
                    limited += 1
                    continue
                if 500 <= err.code < 600 and failed < MAX_RETRIES:
                    self.sleep(2.0**failed)
                    failed += 1
                    continue
                if 300 <= err.code < 400:  # urllib's redirect handler gave up: a loop, or a scheme it refuses
                    why = str(err.reason).split("\n")[0]
                    raise MdftsError(f"{what}: GitHub's redirect (HTTP {err.code}) was not followed: {why}") from None
                raise MdftsError(_http_problem(err.code, what, body, bool(self.token))) from None
            except (urllib.error.URLError, OSError) as err:
                reason = getattr(err, "reason", err)
                if failed < MAX_RETRIES:
                    self.sleep(2.0**failed)
                    failed += 1
                    continue
                raise MdftsError(f"{what}: cannot reach {self.api_url}: {reason}") from None
            self.rate.update(raw.headers)
            return Response(raw.status, raw.headers, raw)

    def _rate_wait(self, headers: Message, retries: int) -> float:
        after = (headers.get("retry-after") or "").strip()
        if after.isdigit():
            return float(after)
        # The reset is the primary window's: a secondary limit comes with requests left and a reset
        # up to an hour away, and GitHub asks for a back-off of a minute or more instead.
        if (headers.get("x-ratelimit-remaining") or "").strip() == "0" and \
                (headers.get("x-ratelimit-reset") or "").strip().isdigit():
            until = self._until_reset()
            return until if until > 1 else PAST_RESET_BACKOFF * 2.0**retries
        return FIRST_BACKOFF * 2.0**retries


def _read_message(err: urllib.error.HTTPError) -> str:
    try:
        text = err.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return ""
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:200]
    return str(data.get("message", "")) if isinstance(data, dict) else ""


def _rate_limited(headers: Message, message: str) -> bool:
    return (headers.get("retry-after") is not None or (headers.get("x-ratelimit-remaining") or "").strip() == "0"
            or "rate limit" in message.lower())


def _http_problem(code: int, what: str, message: str, has_token: bool) -> str:
    said = f": {message}" if message else ""
    if code == 403:
        return (f"{what}: GitHub refused access (HTTP 403, not a rate limit){said}; "
                + ("check that the token may read this repository" if has_token
                   else "set GITHUB_TOKEN to a token that may read it"))
    if code == 401:
        return f"{what}: GitHub did not accept the token (HTTP 401){said}; check GITHUB_TOKEN / GH_TOKEN"
    if code == 404:
        hint = "check the owner, repository and ref" + ("" if has_token else ", or set GITHUB_TOKEN if it is private")
        return f"{what}: not found on GitHub (HTTP 404){said}; {hint}"
    return f"{what}: GitHub answered HTTP {code}{said}"


def token_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """GITHUB_TOKEN, else GH_TOKEN, else None."""
    env = os.environ if env is None else env
    return (env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or "").strip() or None


# --- the archive ------------------------------------------------------------------------------


@dataclass(slots=True)
class Snapshot:
    """The files of one source at one commit, chosen by PATH and the globs."""

    commit: str
    commit_time: int
    files: dict[str, bytes]  # path relative to the source's PATH → bytes
    folder: str  # the folder of PATH that document paths are relative to
    # files below PATH the selection leaves out (a YAML snippet, a code sample) that the include
    # directives of `files` name, nested ones too: read by those directives, never indexed
    assets: dict[str, bytes] = field(default_factory=dict)


class BrokenOff(MdftsError):
    """A download stopped before its end (the network, not the archive): worth another try."""


class _Counting(io.RawIOBase):
    """A read-only stream that counts the bytes read through it, and raises when it ends short of
    `expected` (urllib just returns b"" when a connection closes early)."""

    def __init__(self, raw: IO[bytes], progress: Callable[[int], None] | None, expected: int | None) -> None:
        self.raw, self.count, self.progress, self.last, self.expected = raw, 0, progress, 0, expected

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(len(buffer))
        n = len(data)
        if not n and buffer and self.expected is not None and self.count < self.expected:
            raise ConnectionError(f"the connection closed at byte {self.count:,} of {self.expected:,}")
        buffer[:n] = data
        self.count += n
        if self.progress and self.count - self.last >= 1 << 18:
            self.last = self.count
            self.progress(self.count)
        return n


def _unsafe(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return name.startswith(("/", "\\")) or ".." in parts or bool(re.match(r"[A-Za-z]:", name))


_HEADER_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
                 tarfile.GNUTYPE_LONGLINK)


def _capped_tar_info(limit: int) -> type[tarfile.TarInfo]:
    """A TarInfo that refuses a pax or long-name header over `limit` bytes (global pax headers,
    which tarfile keeps, over `limit` together) before tarfile reads it whole into memory: a few
    KB of gzip can name a header of gigabytes."""
    global_bytes = 0

    class CappedTarInfo(tarfile.TarInfo):
        def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
            nonlocal global_bytes
            if self.type in _HEADER_TYPES:
                held = self.size + (global_bytes if self.type == tarfile.XGLTYPE else 0)
                if held > limit:
                    raise tarfile.ReadError(f"a tar header of {self.size:,} bytes, over the {limit:,}-byte "
                                            "limit for one")
                if self.type == tarfile.XGLTYPE:
                    global_bytes = held
            return super()._proc_member(tar)  # type: ignore[misc, no-any-return]

    return CappedTarInfo


def read_archive(
    stream: IO[bytes],
    source: GitHubSource,
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    *,
    strip: bool = True,
    max_file_bytes: int = MAX_FILE_BYTES,
    max_total_bytes: int = MAX_TOTAL_BYTES,
    max_archive_bytes: int = MAX_ARCHIVE_BYTES,
    warn: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    expected_bytes: int | None = None,
) -> tuple[str | None, Snapshot]:
    """Read a (gzipped) tar stream front to back, keeping in memory only the regular files under
    the source's PATH that the globs and discover's rules select, and those of the others that
    their include directives name (the snapshot's assets, as a build of a checkout reads them);
    links, devices and absolute or `..` names are skipped with a warning. Returns the commit named
    in the pax header (git archive writes it), or None, and the snapshot.

    :param strip: drop the first path component (GitHub's `owner-repo-sha7/` folder).
    :param expected_bytes: the Content-Length; a stream that ends before it raises BrokenOff.
    """
    files: dict[str, bytes] = {}
    spare: dict[str, bytes] = {}  # the other regular files below PATH, for include directives
    spare_bytes, dropped = 0, 0
    total, unpacked, mtime, folder, found = 0, 0, 0, source.path, not source.path
    counter = _Counting(stream, (lambda n: progress(n, len(files))) if progress else None, expected_bytes)
    name = str(source)
    try:
        with tarfile.open(fileobj=io.BufferedReader(counter, 1 << 16), mode="r|*",
                          tarinfo=_capped_tar_info(MAX_HEADER_BYTES)) as tar:
            for member in tar:
                tar.members.clear()  # type: ignore[attr-defined]  # stream mode keeps each member read
                unpacked += member.size
                if unpacked > max_archive_bytes:
                    raise MdftsError(f"{name}: the archive unpacks to over {max_archive_bytes:,} bytes; "
                                     "too large to read through for its docs")
                if _unsafe(member.name):
                    if warn:
                        warn(f"{name}: {display(member.name)}: skipped, an absolute or '..' name")
                    continue
                repo_path = member.name.partition("/")[2] if strip else member.name
                # As a checkout would name it: `sub//x.md` and `sub/./x.md` are `sub/x.md`.
                repo_path = "/".join(part for part in repo_path.split("/") if part not in ("", "."))
                if not repo_path:
                    continue
                if source.path and repo_path != source.path and not repo_path.startswith(source.path + "/"):
                    continue
                found = True
                if member.isdir():
                    continue
                if repo_path == source.path:  # PATH names a file: its folder is the root
                    folder = source.path.rpartition("/")[0]
                    rel = source.path.rpartition("/")[2]
                    selected = member.isreg() or member.issym() or member.islnk()
                else:
                    rel = repo_path[len(source.path) + 1:] if source.path else repo_path
                    selected = wanted(rel, include, exclude)
                if not selected:
                    if member.isreg() and member.size <= MAX_BYTES:
                        # (each counts READ_COST bytes at least: a million empty files is no
                        # smaller in memory than a few GB of tar headers)
                        cost = max(member.size, READ_COST)
                        if spare_bytes + cost > MAX_SPARE_BYTES:
                            dropped += 1
                        else:
                            extracted = tar.extractfile(member)
                            assert extracted is not None  # a regular file
                            spare[rel] = extracted.read()
                            spare_bytes += cost
                    continue
                if not member.isreg():
                    kind = "a link" if member.issym() or member.islnk() else "not a regular file"
                    if warn:
                        warn(f"{name}: {display(repo_path)}: skipped, {kind}")
                    continue
                if member.size > max_file_bytes:
                    raise MdftsError(f"{name}: {display(repo_path)} is {member.size:,} bytes, over the "
                                     f"{max_file_bytes:,}-byte limit for one file; leave it out with --exclude")
                total += member.size
                if total > max_total_bytes:
                    raise MdftsError(f"{name}: the selected files pass {max_total_bytes:,} bytes; "
                                     "choose a smaller PATH or --include")
                extracted = tar.extractfile(member)
                assert extracted is not None  # a regular file
                if rel in files:  # git archive names a file once; a tar may name it again
                    total -= len(files[rel])
                    if warn:
                        warn(f"{name}: {display(repo_path)}: in the archive more than once; the last copy kept")
                files[rel] = extracted.read()
                mtime = max(mtime, int(member.mtime))
            comment = tar.pax_headers.get("comment")
    except (OSError, http.client.HTTPException) as err:  # the network, not the archive
        raise BrokenOff(f"{name}: the download broke off after {counter.count:,} bytes: {err}") from None
    except (tarfile.TarError, EOFError, ValueError) as err:
        raise MdftsError(f"{name}: cannot read the archive: {err}") from None
    if not found:  # as a local folder that is not there, not an index of nothing
        raise MdftsError(f"{name}: {display(source.path)}: no such file or folder in the repository")
    if progress:
        progress(counter.count, len(files))
    commit = comment.strip() if comment and _SHA.match(comment.strip()) else None
    assets = _named_by_includes(files, spare, folder)
    if dropped and warn and any(map(may_include, files.values())):
        warn(f"{name}: {dropped:,} {'file' if dropped == 1 else 'files'} the selection leaves out came past the "
             f"{MAX_SPARE_BYTES:,} bytes held for include directives; a directive naming one is left out")
    return commit, Snapshot(commit or "", mtime, files, folder, assets)


def _named_by_includes(files: Mapping[str, bytes], spare: Mapping[str, bytes], folder: str) -> dict[str, bytes]:
    """The files of `spare` that the include directives of `files` name, or of a file those name
    (nested), looked up as a build does (mdfts.includes), with the most room a document gets: a
    superset of what the build reads, as the build reads per section within its own room."""
    if not spare:
        return {}
    tree = Files({**spare, **files}, folder)
    named: set[str] = set()
    for rel, data in files.items():
        if may_include(data):
            read = Includes(tree, rel, MAX_BYTES).text(data.decode("utf-8", "ignore"))
            named.update(read[1] if read else ())
    return {rel: spare[rel] for rel in sorted(named) if rel in spare}


# --- the cache ----------------------------------------------------------------------------------


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """$XDG_CACHE_HOME/mdfts (else ~/.cache/mdfts; %LOCALAPPDATA% on Windows)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or (env.get("LOCALAPPDATA") if os.name == "nt" else None)
    return (Path(base) if base else Path.home() / ".cache") / "mdfts"


def _selection_key(source: GitHubSource, include: Sequence[str], exclude: Sequence[str]) -> str:
    raw = json.dumps([source.path, list(include), list(exclude)], ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _digest(files: Mapping[str, bytes]) -> str:
    """One hash over the names and bytes of a snapshot's files."""
    h = hashlib.sha256()
    for rel, data in sorted(files.items()):
        h.update(b"%s\0%d\0" % (rel.encode(), len(data)))
        h.update(data)
    return h.hexdigest()


@dataclass(slots=True)
class Cache:
    """root/github/OWNER/REPO/refs.json: ref → ETag and commit; COMMIT-KEY.tar: the chosen files of
    a commit (KEY: PATH and globs), its assets (members marked `mdfts.asset`) and their digests.
    A commit's files never change, so entries are never stale; one whose files do not match its
    digests, or written before snapshots held assets (no assets digest), is a miss."""

    root: Path

    def _repo(self, source: GitHubSource) -> Path:
        return self.root / "github" / source.owner.lower() / source.repo.lower()

    def ref(self, source: GitHubSource, ref: str) -> tuple[str, str] | None:
        """(etag, commit) cached for the ref, or None."""
        try:
            entry = json.loads((self._repo(source) / "refs.json").read_text("utf-8")).get(ref)
            etag, commit = entry["etag"], entry["commit"]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None
        return (etag, commit) if isinstance(etag, str) and _SHA.match(str(commit)) else None

    def remember(self, source: GitHubSource, ref: str, etag: str, commit: str) -> None:
        path = self._repo(source) / "refs.json"
        try:
            refs = json.loads(path.read_text("utf-8"))
            refs = refs if isinstance(refs, dict) else {}
        except (OSError, ValueError):
            refs = {}
        refs[ref] = {"etag": etag, "commit": commit}
        _write_atomic(path, json.dumps(refs, indent=1, sort_keys=True).encode())

    def load(self, source: GitHubSource, commit: str, key: str) -> Snapshot | None:
        path = self._repo(source) / f"{commit}-{key}.tar"
        try:
            with tarfile.open(path, "r:") as tar:
                meta = json.loads(tar.pax_headers.get("mdfts", "{}"))
                files: dict[str, bytes] = {}
                assets: dict[str, bytes] = {}
                for member in tar:
                    extracted = tar.extractfile(member) if member.isreg() and not _unsafe(member.name) else None
                    if extracted is not None:
                        (assets if member.pax_headers.get("mdfts.asset") else files)[member.name] = extracted.read()
            # A tar cut short at a member's end reads as a whole one with fewer files: the digests tell.
            if (meta.get("commit") != commit or meta.get("digest") != _digest(files)
                    or meta.get("assets_digest") != _digest(assets)):
                return None
            folder = str(meta.get("folder", source.path))
            return Snapshot(commit, int(meta.get("commit_time", 0)), files, folder, assets)
        except (OSError, tarfile.TarError, ValueError, TypeError, AttributeError):
            return None

    def store(self, source: GitHubSource, key: str, snap: Snapshot) -> None:
        buffer = io.BytesIO()
        header = {"mdfts": json.dumps({"commit": snap.commit, "commit_time": snap.commit_time, "folder": snap.folder,
                                       "digest": _digest(snap.files), "assets_digest": _digest(snap.assets)})}
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, pax_headers=header) as tar:
            for marks, held in (({}, snap.files), ({"mdfts.asset": "1"}, snap.assets)):
                for rel, data in sorted(held.items()):
                    info = tarfile.TarInfo(rel)
                    info.size, info.mtime, info.pax_headers = len(data), snap.commit_time, marks
                    tar.addfile(info, io.BytesIO(data))
        _write_atomic(self._repo(source) / f"{snap.commit}-{key}.tar", buffer.getvalue())


# --- one source, end to end -----------------------------------------------------------------------


def fetch(
    source: GitHubSource,
    client: GitHubClient,
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    *,
    cache: Cache | None = None,
    warn: Callable[[str], None] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    max_total_bytes: int = MAX_TOTAL_BYTES,
) -> FileSet:
    """The source's files at one pinned commit, as a FileSet for discover().

    A ref that is not a commit hash is resolved with one `GET commits/REF` (its ETag cached: an
    unchanged ref answers 304 and costs nothing more when the files are cached); then one
    `GET tarball/COMMIT`, streamed. Fresh: at most 2 API requests and 1 download.
    """
    ref = source.ref or "HEAD"
    repo = f"repos/{source.owner}/{source.repo}"
    key = _selection_key(source, include, exclude)
    known = cache.ref(source, ref) if cache else None
    etag: str | None = None
    if _SHA.match(ref):
        commit = ref.lower()
    else:
        quoted = urllib.parse.quote(ref, safe="")
        answer = client.get(f"{repo}/commits/{quoted}", accept="application/vnd.github.sha",
                            etag=known[0] if known else None, what=f"{source}")
        try:
            if answer.status == 304 and known:
                commit = known[1]
            else:
                commit = answer.body.read(1024).decode("ascii", "replace").strip()
                etag = answer.headers.get("ETag")
        finally:
            answer.close()
        if not _SHA.match(commit):
            raise MdftsError(f"{source}: GitHub did not name a commit for {ref!r} (got {commit[:60]!r})")
        commit = commit.lower()
    snap = cache.load(source, commit, key) if cache else None
    if snap is not None:
        _check_caps(source, snap, max_file_bytes, max_total_bytes)
    else:
        shown = (lambda n, files: progress(str(source), n, files)) if progress else None
        named, snap = _download(client, f"{repo}/tarball/{commit}", source,
                                lambda body, length: read_archive(
                                    body, source, include, exclude, warn=warn, progress=shown,
                                    max_file_bytes=max_file_bytes, max_total_bytes=max_total_bytes,
                                    expected_bytes=length))
        if named is not None and named.lower() != commit:
            raise MdftsError(f"{source}: the archive is of commit {named}, not the {commit} asked for")
        snap.commit = commit
        if cache:
            _try(lambda: cache.store(source, key, snap), warn)
    if cache and etag:
        _try(lambda: cache.remember(source, ref, etag, commit), warn)
    meta = {"source_ref": ref, "source_commit": commit, "source_path": source.path,
            "source_url": source_url_template(client.api_url, source, snap.folder)}
    return FileSet(source.name, source.prefix, snap.files, meta, commit, snap.commit_time, snap.folder, snap.assets)


def _download(client: GitHubClient, path: str, source: GitHubSource,
              read: Callable[[IO[bytes], int | None], tuple[str | None, Snapshot]]) -> tuple[str | None, Snapshot]:
    """GET the tarball and read it; a download that breaks off is asked for again (1, 2, 4 s)."""
    attempt = 0
    while True:
        answer = client.get(path, what=f"{source}")
        length = (answer.headers.get("Content-Length") or "").strip()
        try:
            return read(answer.body, int(length) if length.isdigit() else None)
        except BrokenOff as err:
            if attempt == MAX_RETRIES:
                raise MdftsError(f"{err}; gave up after {MAX_RETRIES} retries") from None
            client.sleep(2.0**attempt)
            attempt += 1
        finally:
            answer.close()


def _check_caps(source: GitHubSource, snap: Snapshot, max_file: int, max_total: int) -> None:
    for rel, data in snap.files.items():
        if len(data) > max_file:
            raise MdftsError(f"{source}: {display(rel)} is {len(data):,} bytes, over the {max_file:,}-byte "
                             "limit for one file; leave it out with --exclude")
    if sum(map(len, snap.files.values())) > max_total:
        raise MdftsError(f"{source}: the selected files pass {max_total:,} bytes; choose a smaller PATH or --include")


def _try(action: Callable[[], None], warn: Callable[[str], None] | None) -> None:
    try:
        action()
    except OSError as err:  # a cache that cannot be written costs a download next time, nothing more
        if warn:
            warn(f"cannot write the GitHub cache: {err.strerror or err}")


def _version() -> str:
    from mdfts import __version__

    return __version__


# --- what build_index calls ---------------------------------------------------------------------


@dataclass
class GitHubOptions:
    """How a build reaches GitHub; None fields come from the environment (GITHUB_API_URL,
    GITHUB_TOKEN / GH_TOKEN, XDG_CACHE_HOME)."""

    api_url: str | None = None
    token: str | None = field(default=None, repr=False)
    max_wait: float = DEFAULT_MAX_WAIT
    cache_dir: Path | None = None
    cache: bool = True
    sleep: Callable[[float], None] | None = None
    clock: Callable[[], float] | None = None
    progress: Callable[[str, int, int], None] | None = None  # (source, bytes read, files kept)

    def client(self) -> GitHubClient:
        if self.max_wait < 0:
            raise MdftsError(f"--max-wait {self.max_wait:g}: must be 0 or more seconds")
        return GitHubClient(
            self.api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL,
            self.token if self.token is not None else token_from_env(),
            max_wait=self.max_wait, sleep=self.sleep or time.sleep, clock=self.clock or time.time,
        )


def fetch_sources(
    sources: Sequence[Path | str | FileSet],
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    options: GitHubOptions | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[Path | FileSet]:
    """The sources with each `github:` one fetched (serially, one client) into a FileSet."""
    options = options or GitHubOptions()
    parsed = [parse_source(s) if isinstance(s, str) and is_github(s) else s for s in sources]
    client = options.client() if any(isinstance(s, GitHubSource) for s in parsed) else None
    cache = Cache(options.cache_dir or cache_root()) if options.cache else None
    out: list[Path | FileSet] = []
    for s in parsed:
        if isinstance(s, GitHubSource):
            assert client is not None
            out.append(fetch(s, client, include, exclude, cache=cache, warn=warn, progress=options.progress))
        else:
            out.append(Path(s) if isinstance(s, str) else s)
    return out
