"""Building from github:OWNER/REPO[@REF][:PATH] against a fake GitHub on 127.0.0.1: request counts,
ETag reuse, the exact rate-limit rules, the token's reach, hostile archives, and equality with a
build from a local clone of the same commit."""

from __future__ import annotations

import gzip
import io
import json
import sqlite3
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakegithub import FAKE_NOW, Canned, Clock, FakeGitHub

from mdfts.build import build_index
from mdfts.discover import FileSet, discover
from mdfts.errors import MdftsError
from mdfts.github import (
    GitHubClient,
    GitHubOptions,
    GitHubSource,
    parse_source,
    read_archive,
    source_url_template,
    web_url,
)

from conftest import run_cli
from gitrepo import commit_all, git, isolate, make_repo

TOKEN = "ghs_fakeTOKENfortests0123456789"
OWNER_REPO = "acme/handbook"


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository: docs/ (the fixture tree plus files discover leaves out), a README at the top."""
    isolate(monkeypatch)
    repo = tmp_path / "clone"
    docs = make_repo(repo)
    (docs / ".hidden").mkdir()
    (docs / ".hidden" / "secret.md").write_text("# Hidden\n")
    (docs / "node_modules").mkdir()
    (docs / "node_modules" / "dep.md").write_text("# Dependency\n")
    (docs / "notes.txt").write_text("not markdown\n")
    (docs / "guides" / "deploy.md").write_text("# Deploy\n\nSet `DEPLOY_TOKEN` and run `make deploy --force`.\n")
    (repo / "README.md").write_text("# Handbook\n\nSee docs/.\n")
    commit_all(repo, "More docs")
    return repo


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def github(clone: Path, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    """The fake GitHub serving `clone`; the token in the environment, the cache in tmp_path."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "GH_TOKEN", "GITHUB_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fake = FakeGitHub(clone, clock).start()
    yield fake
    fake.stop()


def _options(fake: FakeGitHub, clock: Clock, **kwargs: object) -> GitHubOptions:
    return GitHubOptions(api_url=fake.api_url, sleep=clock.sleep, clock=clock.time, **kwargs)


def _client(fake: FakeGitHub, clock: Clock, max_wait: float = 10_000) -> GitHubClient:
    return GitHubClient(fake.api_url, TOKEN, max_wait=max_wait, sleep=clock.sleep, clock=clock.time)


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _meta(db: Path) -> dict[str, str]:
    return dict(_rows(db, "select key, value from mdfts_meta"))  # type: ignore[arg-type]


def _paths(db: Path) -> list[str]:
    return [str(r[0]) for r in _rows(db, "select path from documents order by path")]


# --- source syntax -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("github:acme/handbook", GitHubSource("acme", "handbook", None, "")),
        ("github:acme/handbook@v1.2", GitHubSource("acme", "handbook", "v1.2", "")),
        ("github:acme/hand.book@feature/x:docs/guides/", GitHubSource("acme", "hand.book", "feature/x", "docs/guides")),
        ("github:acme/handbook:./docs//api", GitHubSource("acme", "handbook", None, "docs/api")),
    ],
)
def test_parse_source(text: str, parsed: GitHubSource) -> None:
    assert parse_source(text) == parsed


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("github:acme", "not a GitHub source"),
        ("github:acme/hand book", "not a GitHub source"),
        ("github:acme/handbook@", "is not a valid git ref"),
        ("github:acme/handbook@a..b", "is not a valid git ref"),
        # git refuses control characters and "@{"; a newline split the error over two lines.
        ("github:acme/handbook@ma\nin", r"'ma\\nin' is not a valid git ref"),
        ("github:acme/handbook@ma\tin:docs", "is not a valid git ref"),
        ("github:acme/handbook@ma\x7fin", "is not a valid git ref"),
        ("github:acme/handbook@main@{1}", "is not a valid git ref"),
        ("github:acme/handbook:docs/../..", "may not contain '..'"),
    ],
)
def test_parse_source_rejects(text: str, error: str) -> None:
    with pytest.raises(MdftsError, match=error):
        parse_source(text)


def test_web_url_and_default_template() -> None:
    assert web_url("https://api.github.com") == "https://github.com"
    assert web_url("https://ghe.example.com/api/v3/") == "https://ghe.example.com"
    assert web_url("https://api.acme.ghe.com") == "https://acme.ghe.com"
    src = parse_source("github:acme/handbook:docs")
    assert source_url_template("https://api.github.com", src, "docs") == (
        "https://github.com/acme/handbook/blob/{commit}/docs/{path}#L{start_line}-L{end_line}")


# --- builds end to end ---------------------------------------------------------------------------


def test_fresh_build_then_unchanged_ref_costs_one_304(github: FakeGitHub, clock: Clock, clone: Path,
                                                      tmp_path: Path) -> None:
    out = tmp_path / "a.db"
    build_index(["github:acme/handbook:docs"], out, github=_options(github, clock))
    assert [s.path.split("/")[4] for s in github.api_requests()] == ["commits", "tarball"]
    assert len(github.downloads()) == 1
    first = out.read_bytes()
    sha = git(clone, "rev-parse", "HEAD")
    assert _paths(out) == ["guides/deploy.md", "guides/releases.md", "guides/setup.md", "index.md"]
    meta = _meta(out)
    assert {k: meta[k] for k in ("source", "source_ref", "source_commit", "source_path", "git_commit")} == {
        "source": "github:acme/handbook", "source_ref": "HEAD", "source_commit": sha, "source_path": "docs",
        "git_commit": sha}
    assert meta["source_url"] == f"{github.api_url}/acme/handbook/blob/{{commit}}/docs/{{path}}#L{{start_line}}-L{{end_line}}"

    github.seen.clear()
    again = tmp_path / "b.db"
    build_index(["github:acme/handbook:docs"], again, github=_options(github, clock))
    assert [(s.path.split("/")[4], s.headers.get("if-none-match")) for s in github.seen] == [
        ("commits", f'W/"{sha[:16]}"')]
    assert again.read_bytes() == first  # two builds of one commit: the same bytes
    assert clock.sleeps == []

    github.seen.clear()  # other globs: the commit's cached files do not fit, so one download
    build_index(["github:acme/handbook:docs"], tmp_path / "c.db", github=_options(github, clock), include=["index.md"])
    assert [(s.host, s.path.split("/")[4] if s.api else "", s.headers.get("if-none-match") is not None)
            for s in github.seen] == [("127.0.0.1", "commits", True), ("127.0.0.1", "tarball", False), ("localhost", "", False)]
    assert _paths(tmp_path / "c.db") == ["index.md"]


def test_every_request_carries_user_agent_and_api_version_and_the_token_stays_on_the_api_host(
        github: FakeGitHub, clock: Clock, tmp_path: Path) -> None:
    out = tmp_path / "a.db"
    build_index(["github:acme/handbook"], out, github=_options(github, clock))
    assert len(github.seen) == 3
    assert all(s.headers["user-agent"].startswith("mdfts/") and s.headers["x-github-api-version"] == "2022-11-28"
               for s in github.seen)
    assert [(s.host, s.auth) for s in github.seen] == [
        ("127.0.0.1", f"Bearer {TOKEN}"), ("127.0.0.1", f"Bearer {TOKEN}"), ("localhost", None)]
    cached = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert cached and all(TOKEN.encode() not in p.read_bytes() for p in cached)
    assert TOKEN.encode() not in out.read_bytes()


def test_the_token_follows_a_redirect_on_the_api_host(github: FakeGitHub, clock: Clock, tmp_path: Path) -> None:
    # A renamed or moved repository answers 301 to api.github.com/repositories/ID/...: still the API,
    # and a private one is found only with the token.
    github.script = [Canned("commits", 301, {"Location": f"{github.api_url}/repos/acme/handbook/commits/HEAD"})]
    build_index(["github:acme/handbook"], tmp_path / "a.db", github=_options(github, clock))
    assert [(s.host, s.auth) for s in github.seen] == [
        ("127.0.0.1", f"Bearer {TOKEN}"), ("127.0.0.1", f"Bearer {TOKEN}"), ("127.0.0.1", f"Bearer {TOKEN}"),
        ("localhost", None)]


@pytest.mark.parametrize(("location", "why"), [
    ("{api}/repos/acme/handbook/commits/HEAD", "would lead to an infinite loop"),
    ("file:///etc/passwd", "Redirection to url 'file:///etc/passwd' is not allowed"),
], ids=["loop", "file-scheme"])
def test_a_redirect_not_followed_says_why(github: FakeGitHub, clock: Clock, tmp_path: Path,
                                           location: str, why: str) -> None:
    """A redirect loop, or one to a scheme urllib refuses, ended as "GitHub answered HTTP 302"."""
    github.script = [Canned("commits", 302, {"Location": location.format(api=github.api_url)})] * 12
    with pytest.raises(MdftsError) as err:
        build_index(["github:acme/handbook"], tmp_path / "a.db", github=_options(github, clock))
    assert str(err.value).startswith("github:acme/handbook: GitHub's redirect (HTTP 302) was not followed: ")
    assert why in str(err.value) and not (tmp_path / "a.db").exists()


def test_gh_token_is_used_when_github_token_is_unset(github: FakeGitHub, clock: Clock, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.setenv("GH_TOKEN", "gh-cli-token")
    build_index(["github:acme/handbook"], tmp_path / "a.db", github=_options(github, clock))
    assert [s.auth for s in github.seen] == ["Bearer gh-cli-token", "Bearer gh-cli-token", None]


@pytest.mark.parametrize("damage", ["cut-after-a-file", "cut-inside-a-file", "byte-flipped", "empty"])
def test_a_damaged_cache_entry_is_downloaded_again(github: FakeGitHub, clock: Clock, tmp_path: Path,
                                                   damage: str) -> None:
    """A cached tar cut short at a member's end read as a whole one: the build silently lost files."""
    full = tmp_path / "full.db"
    build_index(["github:acme/handbook:docs"], full, github=_options(github, clock))
    [cached] = (tmp_path / "cache").rglob("*.tar")
    data = cached.read_bytes()
    with tarfile.open(cached) as tar:
        members = tar.getmembers()
    if damage == "cut-after-a-file":
        data = data[:members[2].offset]
    elif damage == "cut-inside-a-file":
        data = data[:members[1].offset_data + 3]
    elif damage == "byte-flipped":
        at = members[1].offset_data
        data = data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]
    else:
        data = b""
    cached.write_bytes(data)
    github.seen.clear()
    again = tmp_path / "again.db"
    build_index(["github:acme/handbook:docs"], again, github=_options(github, clock))
    assert [s.path.split("/")[4] if s.api else "download" for s in github.seen] == ["commits", "tarball", "download"]
    assert again.read_bytes() == full.read_bytes()


def test_a_commit_ref_needs_no_resolution_and_a_moved_ref_downloads_again(
        github: FakeGitHub, clock: Clock, clone: Path, tmp_path: Path) -> None:
    sha = git(clone, "rev-parse", "HEAD")
    build_index([f"github:acme/handbook@{sha}:docs"], tmp_path / "a.db", github=_options(github, clock))
    assert [s.path.split("/")[4] for s in github.api_requests()] == ["tarball"]
    build_index(["github:acme/handbook@main:docs"], tmp_path / "b.db", github=_options(github, clock))
    (clone / "docs" / "index.md").write_text("# Changed\n")
    new = commit_all(clone, "Change", when=1_700_000_100)
    github.seen.clear()
    result = build_index(["github:acme/handbook@main:docs"], tmp_path / "c.db", github=_options(github, clock),
                         previous=tmp_path / "b.db")
    assert [s.path.split("/")[4] for s in github.api_requests()] == ["commits", "tarball"]
    assert _meta(tmp_path / "c.db")["source_commit"] == new
    assert result.reused == 3  # every document but index.md copied from the previous index


def test_same_index_as_a_local_clone_of_the_commit(github: FakeGitHub, clock: Clock, clone: Path,
                                                   tmp_path: Path) -> None:
    # (a page that includes another, named from the repository's root: the download reads it too)
    (clone / "docs" / "release.md").write_text("# Release\n\n## Deploy step\n\n{!docs/guides/deploy.md!}\n")
    commit_all(clone, "A page with an include")
    sha = git(clone, "rev-parse", "HEAD")
    remote, local = tmp_path / "remote.db", tmp_path / "local.db"
    build_index([f"github:acme/handbook@{sha}:docs"], remote, github=_options(github, clock), exclude=["guides/setup.md"])
    build_index([clone / "docs"], local, exclude=["guides/setup.md"])
    assert _rows(remote, "select files from section_includes") == [('["guides/deploy.md"]',)]
    for table in ("sections", "tokens", "section_includes"):
        assert _rows(remote, f"select * from {table} order by 1, 2") == _rows(local, f"select * from {table} order by 1, 2")
    docs = "select id, path, title, front_matter, sha256, bytes, lines, sections from documents order by id"
    assert _rows(remote, docs) == _rows(local, docs)
    assert len(_rows(remote, docs)) == 4
    source_meta = {"source", "source_ref", "source_commit", "source_path", "source_url", "git_ref"}
    assert {k: v for k, v in _meta(remote).items() if k not in source_meta} == {
        k: v for k, v in _meta(local).items() if k not in source_meta}
    assert _rows(local, "select count(*) from documents where last_commit is not null") == [(4,)]


def test_files_that_include_directives_name_are_kept_from_the_download(github: FakeGitHub, clock: Clock,
                                                                       clone: Path, tmp_path: Path) -> None:
    """A YAML snippet, a code sample in a hidden folder, a page the globs leave out, and a file one
    of those names: a build of the download reads them as a build of the checkout does, from the
    download and then from the cache, and keeps no other file besides the markdown."""
    docs = clone / "docs"
    (docs / "examples" / ".ci").mkdir(parents=True)
    (docs / "examples" / "values.yaml").write_text("replicas: 3\nimage: PAYMENTS_IMAGE_TAG\n")
    (docs / "examples" / ".ci" / "check.py").write_text("print('CHECK_SAMPLE_TOKEN')\n")
    (docs / "examples" / "nested.txt").write_text("--8<-- \"examples/leaf.conf\"\n")
    (docs / "examples" / "leaf.conf").write_text("LEAF_SETTING=1\n")
    (docs / "examples" / "unused.yaml").write_text("NOT_NAMED_ANYWHERE: 1\n")
    (docs / "release.md").write_text(
        "# Release\n\n## Values\n\n--8<-- \"examples/values.yaml\"\n\n## Check\n\n"
        "```{literalinclude} examples/.ci/check.py\n```\n\n## Setup\n\n{!guides/setup.md!}\n\n"
        "## Nested\n\n--8<-- \"examples/nested.txt\"\n")
    sha = commit_all(clone, "A page with includes of files the globs leave out")
    remote, cached, local = tmp_path / "remote.db", tmp_path / "cached.db", tmp_path / "local.db"
    build_index([f"github:acme/handbook@{sha}:docs"], remote, github=_options(github, clock), exclude=["guides/setup.md"])
    build_index([clone / "docs"], local, exclude=["guides/setup.md"])
    assert _rows(remote, "select files from section_includes order by section_id") == [
        ('["examples/values.yaml"]',), ('["examples/.ci/check.py"]',), ('["guides/setup.md"]',),
        ('["examples/nested.txt", "examples/leaf.conf"]',)]
    for table in ("sections", "tokens", "section_includes"):
        assert _rows(remote, f"select * from {table} order by 1, 2") == _rows(local, f"select * from {table} order by 1, 2")
    assert _rows(remote, """select heading from sections_full where id in (select rowid from sections_fts
                            where sections_fts match '"PAYMENTS_IMAGE_TAG" OR "LEAF_SETTING"') order by id""") == [
        ("Values",), ("Nested",)]
    github.seen.clear()
    build_index([f"github:acme/handbook@{sha}:docs"], cached, github=_options(github, clock), exclude=["guides/setup.md"])
    assert github.seen == []  # a commit's snapshot, assets and all, from the cache
    assert cached.read_bytes() == remote.read_bytes()
    [entry] = (tmp_path / "cache").rglob("*.tar")
    with tarfile.open(entry) as tar:
        assert sorted(m.name for m in tar if m.pax_headers.get("mdfts.asset")) == [
            "examples/.ci/check.py", "examples/leaf.conf", "examples/nested.txt", "examples/values.yaml",
            "guides/setup.md"]


def test_a_cache_entry_without_assets_is_a_miss(github: FakeGitHub, clock: Clock, tmp_path: Path) -> None:
    """An entry written before snapshots held assets would build without the included files."""
    build_index(["github:acme/handbook:docs"], tmp_path / "a.db", github=_options(github, clock))
    [entry] = (tmp_path / "cache").rglob("*.tar")
    with tarfile.open(entry) as tar:
        meta = json.loads(tar.pax_headers["mdfts"])
        members = [(m, tar.extractfile(m).read()) for m in tar]  # type: ignore[union-attr]
    del meta["assets_digest"]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, pax_headers={"mdfts": json.dumps(meta)}) as tar:
        for member, data in members:
            tar.addfile(member, io.BytesIO(data))
    entry.write_bytes(buffer.getvalue())
    github.seen.clear()
    build_index(["github:acme/handbook:docs"], tmp_path / "b.db", github=_options(github, clock))
    assert [s.path.split("/")[4] if s.api else "download" for s in github.seen] == ["commits", "tarball", "download"]


def test_files_held_for_includes_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    import mdfts.github

    data = _tar([("top/docs/page.md", b'# Page\n\n--8<-- "b.yaml"\n', tarfile.REGTYPE),
                 ("top/docs/a.yaml", b"A_VALUE: 1\n" * 6, tarfile.REGTYPE),
                 ("top/docs/b.yaml", b"B_VALUE: 1\n" * 4, tarfile.REGTYPE)])
    monkeypatch.setattr(mdfts.github, "READ_COST", 1)
    _, snap = read_archive(io.BytesIO(data), parse_source("github:a/b:docs"))
    assert (sorted(snap.files), snap.assets) == (["page.md"], {"b.yaml": b"B_VALUE: 1\n" * 4})
    monkeypatch.setattr(mdfts.github, "MAX_SPARE_BYTES", 100)
    warnings: list[str] = []
    _, snap = read_archive(io.BytesIO(data), parse_source("github:a/b:docs"), warn=warnings.append)
    assert snap.assets == {}  # a.yaml's 66 bytes held, b.yaml's 44 more do not fit
    assert warnings == ["github:a/b:docs: 1 file the selection leaves out came past the 100 bytes held for "
                        "include directives; a directive naming one is left out"]
    # an empty file counts READ_COST bytes: a million of them is no small thing to hold
    monkeypatch.setattr(mdfts.github, "READ_COST", 10)
    data = _tar([("top/docs/page.md", b'# Page\n\n--8<-- "b.yaml"\n', tarfile.REGTYPE),
                 *[(f"top/docs/held/{i}.txt", b"", tarfile.REGTYPE) for i in range(25)]])
    warnings.clear()
    read_archive(io.BytesIO(data), parse_source("github:a/b:docs"), warn=warnings.append)
    assert warnings == ["github:a/b:docs: 15 files the selection leaves out came past the 100 bytes held for "
                        "include directives; a directive naming one is left out"]


def test_mixed_sources_get_prefixes(github: FakeGitHub, clock: Clock, tmp_path: Path) -> None:
    local = tmp_path / "runbooks"
    local.mkdir()
    (local / "index.md").write_text("# Runbooks\n")
    out = tmp_path / "mixed.db"
    build_index([local, "github:acme/handbook:docs/guides", "github:acme/handbook@main:docs/guides"], out,
                github=_options(github, clock))
    assert _paths(out) == [
        "acme/handbook/docs/guides/deploy.md", "acme/handbook/docs/guides/releases.md",
        "acme/handbook/docs/guides/setup.md", "acme/handbook@main/docs/guides/deploy.md",
        "acme/handbook@main/docs/guides/releases.md", "acme/handbook@main/docs/guides/setup.md", "runbooks/index.md"]
    meta = _meta(out)
    assert [(s["source"], s["prefix"], s["source_ref"]) for s in json.loads(meta["sources"])] == [
        ("github:acme/handbook", "acme/handbook/docs/guides", "HEAD"),
        ("github:acme/handbook", "acme/handbook@main/docs/guides", "main")]
    assert "source_url" not in meta  # one template cannot fit several sources


def test_a_path_from_two_sources_fails(tmp_path: Path) -> None:
    (tmp_path / "acme" / "handbook").mkdir(parents=True)
    (tmp_path / "acme" / "handbook" / "a.md").write_text("# Local\n")
    remote = FileSet("github:acme/handbook", "acme/handbook", {"a.md": b"# Remote\n"})
    with pytest.raises(MdftsError, match=r"^acme/handbook/a.md: two sources \(a folder and github:acme/handbook\)"):
        discover([tmp_path / "acme", remote])


def test_path_naming_one_file(github: FakeGitHub, clock: Clock, tmp_path: Path) -> None:
    out = tmp_path / "one.db"
    build_index(["github:acme/handbook:docs/guides/deploy.md"], out, github=_options(github, clock))
    assert _paths(out) == ["deploy.md"]
    assert _meta(out)["source_url"].endswith("/blob/{commit}/docs/guides/{path}#L{start_line}-L{end_line}")


def test_missing_repository_and_ref(github: FakeGitHub, clock: Clock, tmp_path: Path) -> None:
    with pytest.raises(MdftsError, match=r"github:acme/handbook@nope: not found on GitHub \(HTTP 404\)"):
        build_index(["github:acme/handbook@nope"], tmp_path / "a.db", github=_options(github, clock))
    assert not (tmp_path / "a.db").exists()


def test_a_path_not_in_the_repository_fails_as_a_missing_folder_does(github: FakeGitHub, clock: Clock,
                                                                     tmp_path: Path) -> None:
    out = tmp_path / "a.db"
    with pytest.raises(MdftsError, match=r"^github:acme/handbook:dcos: dcos: no such file or folder in the repository$"):
        build_index(["github:acme/handbook:dcos"], out, github=_options(github, clock), allow_empty=True)
    assert not out.exists()


# --- rate limits, exactly ----------------------------------------------------------------------


def _limited(status: int, **headers: str) -> Canned:
    return Canned("any", status, headers, b'{"message": "API rate limit exceeded"}' if status == 403 else b"")


def test_rate_limited_403_waits_for_the_reset_and_429_for_retry_after(github: FakeGitHub, clock: Clock) -> None:
    reset = str(int(FAKE_NOW) + 2)
    github.script = [Canned("any", 403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}),
                     Canned("any", 429, {"Retry-After": "1"})]
    client = _client(github, clock)
    answer = client.get("repos/acme/handbook/commits/main", accept="application/vnd.github.sha")
    answer.close()
    assert (answer.status, clock.sleeps, len(github.seen)) == (200, [3.0, 1.0], 3)


def test_a_reset_already_past_by_this_clock_backs_off_a_few_seconds(github: FakeGitHub, clock: Clock) -> None:
    """No requests left and a reset this clock has passed (it runs ahead of GitHub's): waiting
    "until the reset" was no wait, and the three retries went out in the same second."""
    past = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(FAKE_NOW) - 30)}
    github.script = [Canned("any", 403, past, b'{"message": "API rate limit exceeded"}'), Canned("any", 429, past)]
    _client(github, clock).get("repos/acme/handbook/commits/main", accept="application/vnd.github.sha").close()
    assert (clock.sleeps, len(github.seen)) == ([5.0, 10.0], 3)
    github.script = [Canned("any", 429, past) for _ in range(4)]
    with pytest.raises(MdftsError, match=r"still limited after 3 retries \(HTTP 429\)"):
        _client(github, clock).get("repos/acme/handbook/commits/main")
    assert clock.sleeps[2:] == [5.0, 10.0, 20.0]


def test_four_429s_give_up_after_three_retries(github: FakeGitHub, clock: Clock) -> None:
    github.script = [_limited(429) for _ in range(4)]
    with pytest.raises(MdftsError, match=r"still limited after 3 retries \(HTTP 429\)"):
        _client(github, clock).get("repos/acme/handbook/commits/main")
    assert (clock.sleeps, len(github.seen)) == ([60.0, 120.0, 240.0], 4)


def test_a_secondary_limit_with_requests_left_backs_off_rather_than_waiting_for_the_reset(
        github: FakeGitHub, clock: Clock) -> None:
    """A secondary limit comes with the primary window's headers (requests left, a reset up to an
    hour away): waiting for that reset turned a minute's back-off into an hour, or a --max-wait error."""
    window = {"x-ratelimit-remaining": "4990", "x-ratelimit-limit": "5000",
              "x-ratelimit-reset": str(int(FAKE_NOW) + 3000)}
    github.script = [Canned("any", 403, window, b'{"message": "You have exceeded a secondary rate limit."}'),
                     Canned("any", 429, window)]
    _client(github, clock).get("repos/acme/handbook/commits/main", accept="application/vnd.github.sha").close()
    assert (clock.sleeps, len(github.seen)) == ([60.0, 120.0], 3)


def test_a_rate_limit_message_alone_marks_a_403(github: FakeGitHub, clock: Clock) -> None:
    github.script = [_limited(403)]
    _client(github, clock).get("repos/acme/handbook/commits/main", accept="application/vnd.github.sha").close()
    assert clock.sleeps == [60.0]


def test_a_plain_403_is_a_permission_error_at_once(github: FakeGitHub, clock: Clock) -> None:
    github.script = [Canned("any", 403, {"x-ratelimit-remaining": "4999"},
                            b'{"message": "Resource not accessible by integration"}')]
    with pytest.raises(MdftsError) as err:
        _client(github, clock).get("repos/acme/handbook/commits/main", what="github:acme/handbook")
    assert str(err.value) == (
        "github:acme/handbook: GitHub refused access (HTTP 403, not a rate limit): Resource not accessible by "
        "integration; check that the token may read this repository")
    assert (clock.sleeps, len(github.seen)) == ([], 1)


def test_server_errors_back_off_at_most_three_times(github: FakeGitHub, clock: Clock) -> None:
    github.script = [Canned("any", 502), Canned("any", 503)]
    _client(github, clock).get("repos/acme/handbook/commits/main", accept="application/vnd.github.sha").close()
    assert clock.sleeps == [1.0, 2.0]
    github.script = [Canned("any", 500) for _ in range(4)]
    github.seen.clear()
    with pytest.raises(MdftsError, match=r"GitHub answered HTTP 500"):
        _client(github, clock).get("repos/acme/handbook/commits/main")
    assert len(github.seen) == 4


def test_low_water_waits_for_the_reset_before_the_next_request(github: FakeGitHub, clock: Clock,
                                                               tmp_path: Path) -> None:
    github.remaining = 3  # the commits answer says 2 left: the tarball request waits for the reset
    build_index(["github:acme/handbook"], tmp_path / "a.db", github=_options(github, clock, max_wait=4000))
    assert clock.sleeps == [3601.0]
    assert len(github.api_requests()) == 2


def test_the_redirect_s_rate_headers_count_too(github: FakeGitHub, clock: Clock, tmp_path: Path) -> None:
    github.remaining = 4  # commits says 3 left, the tarball's 302 says 2: the next source waits
    build_index(["github:acme/handbook:docs", "github:acme/handbook:docs/guides"], tmp_path / "a.db",
                github=_options(github, clock, max_wait=4000))
    assert [(s.path.split("/")[4], s.at - FAKE_NOW) for s in github.api_requests()] == [
        ("commits", 0), ("tarball", 0), ("commits", 3601), ("tarball", 3601)]
    assert clock.sleeps == [3601.0]


def test_max_wait_zero_fails_at_once_naming_the_limit_and_reset(github: FakeGitHub, clock: Clock) -> None:
    reset = int(FAKE_NOW) + 1800
    github.script = [Canned("any", 403, {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "60",
                                         "x-ratelimit-reset": str(reset), "x-ratelimit-resource": "core"})]
    with pytest.raises(MdftsError) as err:
        _client(github, clock, max_wait=0).get("repos/acme/handbook/commits/main")
    assert str(err.value) == (
        "GitHub's core rate limit (0 of 60 requests left): HTTP 403 on repos/acme/handbook/commits/main; "
        "it resets at 2030-03-17 18:16:40 UTC; waiting 1801 s more would pass --max-wait 0 s")
    assert (clock.sleeps, len(github.seen)) == ([], 1)


def test_max_wait_counts_every_wait_of_a_build(github: FakeGitHub, clock: Clock) -> None:
    github.script = [_limited(429, **{"Retry-After": "30"}) for _ in range(3)]
    with pytest.raises(MdftsError, match=r"waiting 30 s more would pass --max-wait 70 s; set GITHUB_TOKEN"):
        GitHubClient(github.api_url, None, max_wait=70, sleep=clock.sleep, clock=clock.time).get("repos/x")
    assert clock.sleeps == [30.0, 30.0]


# --- hostile archives ------------------------------------------------------------------------------


def _tar(entries: list[tuple[str, bytes | None, bytes]]) -> bytes:
    """A tar.gz of (name, data or None, type) entries."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data, kind in entries:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "../../etc/passwd"
            info.size = len(data or b"")
            tar.addfile(info, io.BytesIO(data or b"") if data is not None else None)
    return buffer.getvalue()


def test_hostile_archive_keeps_only_regular_files_inside(github: FakeGitHub, clock: Clock, clone: Path,
                                                         tmp_path: Path) -> None:
    sha = git(clone, "rev-parse", "HEAD")
    top = "acme-handbook-0000000/"
    github.archives[sha] = _tar([
        (top + "docs/ok.md", b"# Fine\n", tarfile.REGTYPE),
        (top + "docs/../../escape.md", b"# Out\n", tarfile.REGTYPE),
        ("../evil.md", b"# Evil\n", tarfile.REGTYPE),
        ("/etc/cron.md", b"# Abs\n", tarfile.REGTYPE),
        (top + "docs/link.md", None, tarfile.SYMTYPE),
        (top + "docs/hard.md", None, tarfile.LNKTYPE),
        (top + "docs/dev.md", None, tarfile.CHRTYPE),
    ])
    warnings: list[str] = []
    out = tmp_path / "a.db"
    build_index([f"github:acme/handbook@{sha}:docs"], out, github=_options(github, clock), warn=warnings.append)
    assert _paths(out) == ["ok.md"]
    src = f"github:acme/handbook@{sha}:docs"
    assert warnings == [
        f"{src}: acme-handbook-0000000/docs/../../escape.md: skipped, an absolute or '..' name",
        f"{src}: ../evil.md: skipped, an absolute or '..' name",
        f"{src}: /etc/cron.md: skipped, an absolute or '..' name",
        f"{src}: docs/link.md: skipped, a link",
        f"{src}: docs/hard.md: skipped, a link",
        f"{src}: docs/dev.md: skipped, not a regular file",
    ]


def test_a_control_character_in_a_github_path_is_escaped_in_messages(github: FakeGitHub, clock: Clock,
                                                                      clone: Path, tmp_path: Path) -> None:
    # git allows any byte but NUL in a path; an escape sequence (or a line break after a `\r`) in
    # a message is the terminal's to act on. (A line break itself is no GitHub source.)
    sha = git(clone, "rev-parse", "HEAD")
    github.archives[sha] = _tar([("acme-handbook-0000000/docs/ok.md", b"# Fine\n", tarfile.REGTYPE)])
    with pytest.raises(MdftsError) as err:
        build_index([f"github:acme/handbook@{sha}:no\x1b[2Jsuch"], tmp_path / "a.db", github=_options(github, clock))
    assert "\x1b" not in str(err.value) and "no\\x1b[2Jsuch" in str(err.value)


def test_max_wait_nan_is_a_usage_error(tmp_path: Path) -> None:
    # nan passes FloatRange(0) (no comparison with it is true) and would make every wait fit.
    result = run_cli(["build", "github:acme/handbook", "-o", tmp_path / "a.db", "--max-wait", "nan"])
    assert result.exit_code == 2 and not (tmp_path / "a.db").exists()
    assert "Invalid value for '--max-wait': nan is not a number of seconds" in result.stderr


def test_archive_names_are_read_as_a_checkout_names_them(github: FakeGitHub, clock: Clock, clone: Path,
                                                          tmp_path: Path) -> None:
    """`docs//a.md` and `docs/./b.md` are docs/a.md and docs/b.md; a name the archive holds twice
    is one file, the last copy, with a warning (git archive writes neither, a crafted tar may)."""
    sha = git(clone, "rev-parse", "HEAD")
    top = "acme-handbook-0000000/"
    github.archives[sha] = _tar([
        (top + "docs//a.md", b"# Doubled slash\n", tarfile.REGTYPE),
        (top + "docs/./b.md", b"# Dot folder\n", tarfile.REGTYPE),
        (top + "docs/c.md", b"# First copy\n", tarfile.REGTYPE),
        (top + "docs/c.md", b"# Last copy\n", tarfile.REGTYPE),
    ])
    warnings: list[str] = []
    out = tmp_path / "a.db"
    src = f"github:acme/handbook@{sha}:docs"
    build_index([src], out, github=_options(github, clock), warn=warnings.append)
    assert _paths(out) == ["a.md", "b.md", "c.md"]
    assert warnings == [f"{src}: docs/c.md: in the archive more than once; the last copy kept"]
    assert _rows(out, "select title from documents where path = 'c.md'") == [("Last copy",)]


def test_an_oversized_file_fails_the_build_and_keeps_the_old_index(github: FakeGitHub, clock: Clock,
                                                                   clone: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.db"
    build_index(["github:acme/handbook:docs"], out, github=_options(github, clock))
    before = out.read_bytes()
    (clone / "docs" / "huge.md").write_bytes(b"# Huge\n" + b"x" * (9 << 20))
    commit_all(clone, "Huge", when=1_700_000_200)
    with pytest.raises(MdftsError, match=r"^github:acme/handbook:docs: docs/huge.md is 9,437,191 bytes, over the "
                                         r"8,388,608-byte limit for one file; leave it out with --exclude$"):
        build_index(["github:acme/handbook:docs"], out, github=_options(github, clock))
    assert out.read_bytes() == before
    build_index(["github:acme/handbook:docs"], out, github=_options(github, clock), exclude=["huge.md"])
    assert "huge.md" not in _paths(out)


def test_a_download_that_breaks_off_is_tried_again(github: FakeGitHub, clock: Clock, clone: Path,
                                                  tmp_path: Path) -> None:
    sha = git(clone, "rev-parse", "HEAD")
    whole = github.archive(sha)
    github.script = [Canned("download", 200, {}, whole, cut=len(whole) // 2)]
    build_index([f"github:acme/handbook@{sha}:docs"], tmp_path / "a.db", github=_options(github, clock))
    assert [s.api for s in github.seen] == [True, False, True, False]
    assert (clock.sleeps, len(_paths(tmp_path / "a.db"))) == ([1.0], 4)

    github.script = [Canned("download", 200, {}, whole, cut=10) for _ in range(4)]
    with pytest.raises(MdftsError, match=rf"^github:acme/handbook@{sha}: the download broke off after "
                                         rf"{len(whole) - 10:,} bytes: the connection closed at byte "
                                         rf"{len(whole) - 10:,} of {len(whole):,}; gave up after 3 retries$"):
        build_index([f"github:acme/handbook@{sha}"], tmp_path / "b.db", github=_options(github, clock))


def test_a_corrupt_archive_is_an_error_not_a_retry(github: FakeGitHub, clock: Clock, clone: Path,
                                                   tmp_path: Path) -> None:
    sha = git(clone, "rev-parse", "HEAD")
    github.archives[sha] = b"\x1f\x8b" + b"not gzip at all" * 10
    with pytest.raises(MdftsError, match=r"cannot read the archive"):
        build_index([f"github:acme/handbook@{sha}"], tmp_path / "a.db", github=_options(github, clock))
    assert len(github.downloads()) == 1


@pytest.mark.parametrize("kind", [tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.GNUTYPE_LONGNAME],
                         ids=["pax", "pax-global", "gnu-long-name"])
def test_an_oversized_tar_header_fails_before_it_is_read(github: FakeGitHub, clock: Clock, clone: Path,
                                                         tmp_path: Path, kind: bytes) -> None:
    # tarfile reads a pax or long-name header whole into memory: a few KB of gzip can ask for GBs.
    sha = git(clone, "rev-parse", "HEAD")
    header = tarfile.TarInfo("acme-handbook-0000000/meta")
    header.type, header.size = kind, 4 << 20
    doc = tarfile.TarInfo("acme-handbook-0000000/docs/ok.md")
    doc.size = 7
    github.archives[sha] = gzip.compress(
        header.tobuf(format=tarfile.USTAR_FORMAT) + bytes(4 << 20)
        + doc.tobuf(format=tarfile.USTAR_FORMAT) + b"# Fine\n".ljust(512, b"\0") + bytes(1024))
    out = tmp_path / "a.db"
    with pytest.raises(MdftsError, match=rf"^github:acme/handbook@{sha}:docs: cannot read the archive: a tar header "
                                         r"of 4,194,304 bytes, over the 1,048,576-byte limit for one$"):
        build_index([f"github:acme/handbook@{sha}:docs"], out, github=_options(github, clock))
    assert not out.exists()


def test_memory_does_not_grow_with_the_number_of_entries() -> None:
    # tarfile's stream mode keeps every member it has read: millions of empty entries (a few MB of
    # gzip, far under the unpacked cap) would hold gigabytes.
    import tracemalloc

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for i in range(40_000):
            tar.addfile(tarfile.TarInfo(f"top/other/{i:06d}.txt"))
        tar.addfile(tarfile.TarInfo("top/docs/ok.md"))
    tracemalloc.start()
    try:
        _, snap = read_archive(io.BytesIO(buffer.getvalue()), parse_source("github:a/b:docs"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sorted(snap.files) == ["ok.md"]
    assert peak < 8 << 20  # 24 MB when every member was kept


def test_total_size_cap() -> None:
    data = _tar([(f"top/docs/{i}.md", b"# x\n" * 100, tarfile.REGTYPE) for i in range(5)])
    src = parse_source("github:a/b:docs")
    with pytest.raises(MdftsError, match=r"^github:a/b:docs: the selected files pass 1,000 bytes; choose a smaller"):
        read_archive(io.BytesIO(data), src, max_total_bytes=1000)
    with pytest.raises(MdftsError, match=r"^github:a/b:other: the archive unpacks to over 1,500 bytes; too large"):
        read_archive(io.BytesIO(data), parse_source("github:a/b:other"), max_archive_bytes=1500)
    commit, snap = read_archive(io.BytesIO(data), src, max_total_bytes=2000)
    assert (commit, sorted(snap.files)) == (None, [f"{i}.md" for i in range(5)])


def test_archive_of_another_commit_is_refused(github: FakeGitHub, clock: Clock, clone: Path, tmp_path: Path) -> None:
    first = git(clone, "rev-parse", "HEAD")
    (clone / "docs" / "index.md").write_text("# Later\n")
    later = commit_all(clone, "Later", when=1_700_000_300)
    github.archives[later] = github.archive(first)
    with pytest.raises(MdftsError, match=rf"the archive is of commit {first}, not the {later} asked for"):
        build_index([f"github:acme/handbook@{later}"], tmp_path / "a.db", github=_options(github, clock))


# --- the command line ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["option", "environment"])
def test_credentials_in_the_api_url_are_refused_unechoed(github: FakeGitHub, tmp_path: Path, how: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A user:token in --api-url (or GITHUB_API_URL) was printed in the "cannot reach" error and
    would reach the index's source_url: it is refused before any request, without echoing it."""
    url = github.api_url.replace("http://", "http://bot:s3cr3t-t0ken@")
    args = ["build", "github:acme/handbook:docs", "-o", str(tmp_path / "x.db")]
    if how == "option":
        args += ["--api-url", url]
    else:
        monkeypatch.setenv("GITHUB_API_URL", url)
    result = run_cli(args)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Error: --api-url: must not carry a user or password; give the token in GITHUB_TOKEN\n"
    assert not (tmp_path / "x.db").exists()


def test_cli_build_from_github(github: FakeGitHub, tmp_path: Path) -> None:
    out = tmp_path / "cli.db"
    result = run_cli(["build", "github:acme/handbook:docs", "-o", str(out), "--api-url", github.api_url])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr.startswith(f"{out}: 4 documents, ")  # no progress off a terminal
    assert TOKEN not in result.stderr
    info = run_cli(["info", str(out)]).stdout
    sha = github.resolve("HEAD")
    assert [line for line in info.splitlines() if line.startswith(("source", "git commit"))] == [
        "source            github:acme/handbook", "source ref        HEAD", "source path       docs",
        f"git commit        {sha}"]


def test_cli_max_wait_zero_fails_with_one_line(github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_API_URL", github.api_url)
    github.script = [Canned("any", 429, {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000",
                                         "x-ratelimit-reset": "4102444800"})]
    result = run_cli(["build", "github:acme/handbook", "-o", str(tmp_path / "x.db"), "--max-wait", "0"])
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: GitHub's core rate limit (0 of 5000 requests left): HTTP 429 on "
                                    "github:acme/handbook; it resets at 2100-01-01 00:00:00 UTC; waiting ")
    assert result.stderr.count("\n") == 1 and TOKEN not in result.stderr
    assert not (tmp_path / "x.db").exists()


@pytest.mark.integration
def test_progress_goes_to_stderr_on_a_terminal_only(github: FakeGitHub, tmp_path: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    env = {**os.environ, "GITHUB_API_URL": github.api_url}
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([Path(sys.executable).parent / "mdfts", "build", "github:acme/handbook:docs",
                               "-o", tmp_path / "tty.db"], stdout=subprocess.PIPE, stderr=follower, env=env,
                              timeout=60, check=False)
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
    assert (done.returncode, done.stdout) == (0, b"")
    assert b"Downloading github:acme/handbook:docs: 0.0 MB, 4 files kept" in seen
    assert TOKEN.encode() not in seen
