"""`mdfts mcp`: every tool through a real in-memory MCP client session, several indexes fused by
rank, clamped caps, unknown arguments, resources; one stdio subprocess and one HTTP server on
127.0.0.1, each started and stopped here."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, MCPError, StdioServerParameters  # noqa: E402

import mdfts  # noqa: E402
from mdfts.build import build_index  # noqa: E402
from mdfts.errors import MdftsError  # noqa: E402
from mdfts.mcp_server import Caps, build_server, close_server  # noqa: E402

from conftest import FIXTURE_DOCS, SAMPLE_DOCS  # noqa: E402

pytestmark = pytest.mark.anyio
ROLLBACK = "runbooks/payments.md#rollback-procedure"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def two_dbs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("mcp")
    build_index([SAMPLE_DOCS], root / "ops.db")
    build_index([FIXTURE_DOCS], root / "fixtures.db")
    return root / "ops.db", root / "fixtures.db"


@pytest.fixture
async def client(two_dbs: tuple[Path, Path]) -> AsyncIterator[Client]:
    srv = build_server([two_dbs[0]], Caps(max_tokens=1500, max_results=5))
    try:
        async with Client(srv, raise_exceptions=True) as c:
            yield c
    finally:
        close_server(srv)


async def _call(c: Client, tool: str, **args: Any) -> tuple[str, dict[str, Any], bool]:
    r = await c.call_tool(tool, args)
    text = r.content[0].text  # type: ignore[union-attr]
    return text, r.structured_content or {}, bool(r.is_error)


async def test_tools_are_read_only_closed_world_and_small(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == ["search", "fetch", "token", "context", "outline"]
    for t in tools:
        assert t.annotations is not None and t.annotations.read_only_hint and t.annotations.open_world_hint is False
    listing = json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools])
    assert (len(listing.encode()) + 3) // 4 < 2000  # tool descriptions are context for the agent
    assert [p for p in tools[0].input_schema["properties"]] == ["query", "limit", "path_prefix", "index"]


async def test_search_structured_and_text(client: Client) -> None:
    text, data, err = await _call(client, "search", query="payments rollback", limit=3)
    assert not err and len(data["hits"]) == 3
    top = data["hits"][0]
    assert (top["ref"], top["start_line"], top["end_line"], top["title"]) == (
        ROLLBACK, 83, 103, "payments › Rollback procedure")
    assert "body" not in top and top["tokens"] > 0 and "url" in top
    assert text.splitlines()[0].startswith(f"[{top['id']}] runbooks/payments.md:83-103 payments › Rollback procedure — ")


async def test_search_text_marks_a_hit_without_the_named_identifier(client: Client) -> None:
    # The text is what most clients hand the model: like `mdfts search`, it must say which hits
    # hold none of the query's identifiers as written (structured `exact` false), so an absent
    # name never passes for a hit.
    text, data, _ = await _call(client, "search", query="PAYMENTS_DB_URL rollback", limit=3)
    assert [h["exact"] for h in data["hits"]] == [False, True, False]
    lines = text.splitlines()
    assert lines[0].startswith(f"[{data['hits'][0]['id']}] runbooks/payments.md:83-103 payments › Rollback procedure "
                               "(no exact match) — ")
    assert ["(no exact match)" in line for line in lines] == [True, False, True]


async def test_search_path_prefix(client: Client) -> None:
    _, data, _ = await _call(client, "search", query="rollback", path_prefix="sops/")
    assert data["hits"] and all(h["path"].startswith("sops/") for h in data["hits"])


async def test_a_path_prefix_no_document_has_says_so(client: Client) -> None:
    text, data, err = await _call(client, "search", query="rollback", path_prefix="sop/")
    assert not err and data["hits"] == []
    assert text.startswith("no document's path starts with 'sop/'")


@pytest.mark.parametrize(("query", "text"), [
    ("*** -- ()", "no usable search term: '*** -- ()'"),
    ("zqxvvz", "no section matches: 'zqxvvz'"),
], ids=["no-term", "no-match"])
async def test_a_search_with_no_hits_says_why_as_the_cli_does(client: Client, query: str, text: str) -> None:
    # `mdfts search` tells a query with nothing to search for from one that matched nothing:
    # the agent should rephrase the first, not conclude the docs do not cover it.
    said, data, err = await _call(client, "search", query=query)
    assert not err and data["hits"] == [] and said.splitlines()[0] == text


async def test_a_larger_limit_is_clamped_and_says_so(client: Client) -> None:
    text, data, err = await _call(client, "search", query="payments", limit=999)
    assert not err and len(data["hits"]) == 5
    assert data["clamped"] == {"limit": {"asked": 999, "used": 5, "why": "server maximum"}}
    assert text.endswith("(limit 999 → 5 (server maximum))")


async def test_a_default_above_the_operators_cap_is_the_cap_not_a_clamp(client: Client) -> None:
    # The agent asked for nothing: "limit 8 → 5" and "max_tokens 4000 → 1500" told it otherwise.
    text, data, _ = await _call(client, "search", query="payments")
    assert len(data["hits"]) == 5 and "clamped" not in data and "→" not in text
    text, data, _ = await _call(client, "context", question="payments")
    assert data["budget"] == 1500 and "clamped" not in data and "→" not in text
    tools = {t.name: t.input_schema["properties"] for t in (await client.list_tools()).tools}
    assert (tools["search"]["limit"]["default"], tools["context"]["max_tokens"]["default"]) == (5, 1500)


async def test_an_unknown_argument_names_the_valid_ones(client: Client) -> None:
    text, _, err = await _call(client, "search", query="x", collection="docs")
    assert err and text == "Error: search takes no argument 'collection'; valid arguments: query, limit, path_prefix, index"


async def test_fetch_a_section_with_line_numbers_and_its_parent(client: Client) -> None:
    text, data, err = await _call(client, "fetch", ref="runbooks/payments.md:90", include="parent")
    assert not err
    assert [(s["ref"], s["relation"]) for s in data["sections"]] == [
        ("runbooks/payments.md#payments", "parent"), (ROLLBACK, "self")]
    assert "\n83: ## Rollback procedure\n" in text and data["truncated"] is False


async def test_fetch_with_neighbors_gives_each_section_once(client: Client) -> None:
    # A first subsection's parent is also its previous section: its body once, not twice
    # within the agent's token budget (context() likewise puts each section in once).
    text, data, err = await _call(client, "fetch", ref="runbooks/payments.md#dashboards-and-alerts",
                                  include="neighbors")
    assert not err
    assert [(s["ref"], s["relation"]) for s in data["sections"]] == [
        ("runbooks/payments.md#payments", "parent"), ("runbooks/payments.md#dashboards-and-alerts", "self"),
        ("runbooks/payments.md#required-env-vars", "next")]
    assert text.count("\n11: # payments\n") == 1


async def test_fetch_with_neighbors_reads_no_childs_body(parent_db: Path, bodies_read: list[int]) -> None:
    # fetch adds the parent, previous and next sections. It found them with the neighbors query,
    # which returns the section's own body again and every child's (here 500 of 1.2 KB).
    srv = build_server([parent_db])
    try:
        async with Client(srv, raise_exceptions=True) as c:
            _, child, _ = await _call(c, "fetch", ref="top.md#child-3", include="neighbors")
            bodies_read.clear()
            _, top, _ = await _call(c, "fetch", ref="top.md#top", include="neighbors")
    finally:
        close_server(srv)
    assert [(s["heading"], s["relation"]) for s in child["sections"]] == [
        ("Top", "parent"), ("child 2", "previous"), ("child 3", "self"), ("child 4", "next")]
    assert [(s["heading"], s["relation"]) for s in top["sections"]] == [("Top", "self"), ("child 0", "next")]
    assert sum(bodies_read) < 5_000  # (it was 609 KB)


@pytest.fixture(scope="module")
def long_names_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """long.md: headings of 10,000 characters (a top one over 30); many.md: 2,000 headings;
    tokens.md: 20 identifiers of 9,000 characters."""
    docs = tmp_path_factory.mktemp("long-names")
    long = "h" * 10_000
    (docs / "long.md").write_text(f"# Top {long}\n\nrollback\n\n"
                                  + "".join(f"## {i} rollback {long}\n\nrollback text\n\n" for i in range(30)))
    (docs / "many.md").write_text("".join(f"# heading {i}\n\ntext\n\n" for i in range(2_000)))
    (docs / "tokens.md").write_text("# Tokens\n\n" + " ".join(f"LONG_{i}_" + "AB_" * 3_000 + "C" for i in range(20)))
    out = tmp_path_factory.mktemp("long-names-index") / "long.db"
    build_index([docs], out)
    return out


async def test_every_result_is_bounded_whatever_the_headings(long_names_db: Path) -> None:
    # Markdown allows a heading of any length, and any number of them in a file. A search gave a
    # 100 KB heading five times a hit (heading, trail, anchor, ref, title): 11.7 MB for 20 hits;
    # the outline of a file of 50,000 headings was 14.7 MB, of 200 of 100 KB 78 MB.
    srv = build_server([long_names_db])
    sizes: dict[str, tuple[int, int]] = {}
    try:
        async with Client(srv, raise_exceptions=True) as c:
            calls = [("search", {"query": "rollback", "limit": 20}), ("outline", {"path": "long.md"}),
                     ("outline", {"path": "many.md"}), ("fetch", {"ref": "many.md"}), ("outline", {}),
                     ("fetch", {"ref": "long.md:10", "include": "neighbors"}),
                     ("token", {"token": "LONG_1_" + "AB_" * 3_000 + "C"}), ("context", {"question": "rollback"})]
            for tool, args in calls:
                text, data, err = await _call(c, tool, **args)
                assert not err, (tool, text[:300])
                sizes[f"{tool} {args}"[:60]] = (len(text), len(json.dumps(data)))
                if tool == "search":
                    hits = data["hits"]
                if args.get("path") == "many.md":
                    assert data["truncated"] is True and 0 < len(data["headings"]) < 2_000
                    n = len(data["headings"])
                    assert text.endswith(f"[… {2_000 - n:,} more headings, from line {4 * n + 1}; next: "
                                         f'fetch(ref="many.md", from_line={4 * n + 1}); fetch many.md:LINE for one]')
                    _, rest, _ = await _call(c, "fetch", **data["next"])
                    assert rest["headings"][0] == {**data["headings"][0], **{
                        k: v for k, v in rest["headings"][0].items() if k not in ("path", "level")}}
                    assert rest["headings"][0]["start_line"] == 4 * n + 1
            # A ref too long to repeat is the section's id, which fetch takes back.
            assert all(len(h["ref"]) < 300 for h in hits) and any(h["ref"] == str(h["id"]) for h in hits)
            _, one, _ = await _call(c, "fetch", ref=hits[0]["ref"])
            assert one["sections"][0]["id"] == hits[0]["id"]
    finally:
        close_server(srv)
    # The text within max_tokens (6,000: 4 bytes a token) and a note; the structured content a few
    # times its text (field names).
    assert max(t for t, _ in sizes.values()) < 6_000 * 4 + 200, sizes
    assert max(j for _, j in sizes.values()) < 5 * 6_000 * 4, sizes


async def test_fetch_reads_a_long_section_only_as_far_as_it_answers(tmp_path: Path) -> None:
    # fetch split and numbered every line of a section, then kept those that fit max_tokens: for
    # 24 KB of answer, a 20 MB section cost 85 MB (210,536 lines, each split and numbered).
    docs = tmp_path / "docs"
    docs.mkdir()
    body = "# Long\n\n" + "".join(f"line {i} of a long section\n" for i in range(100_000))
    (docs / "long.md").write_text(body)
    build_index([docs], tmp_path / "long.db")
    srv = build_server([tmp_path / "long.db"])
    try:
        async with Client(srv, raise_exceptions=True) as c:
            tracemalloc.start()
            try:
                text, data, _ = await _call(c, "fetch", ref="long.md#long")
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
    finally:
        close_server(srv)
    assert data["truncated"] is True and text.splitlines()[1:3] == ["1: # Long", "2: "]
    assert data["sections"][0]["body"] == body[:len(data["sections"][0]["body"])]
    assert peak < 2 * len(body)  # the section as read (it was 7 times that)


async def test_fetch_cuts_a_line_longer_than_max_tokens_and_says_so(tmp_path: Path) -> None:
    # Whole lines only: a line no fetch of this budget could hold (a 1 MB line) was never shown,
    # and the answer was the section's heading and blank lines.
    docs = tmp_path / "docs"
    docs.mkdir()
    long_line = "word " * 200_000
    body = f"# One line\n\nintro\n\n{long_line}\n\nafter\n"
    (docs / "oneline.md").write_text(body)
    build_index([docs], tmp_path / "one.db")
    srv = build_server([tmp_path / "one.db"], Caps(max_tokens=1000))
    try:
        async with Client(srv, raise_exceptions=True) as c:
            text, data, err = await _call(c, "fetch", ref="oneline.md#one-line")
            plain, plain_data, _ = await _call(c, "fetch", ref="oneline.md:5", line_numbers=False)
            after, after_data, _ = await _call(c, "fetch", **data["next"])
    finally:
        close_server(srv)
    lines = text.splitlines()
    shown = data["cut_line"]["shown"]
    assert not err and lines[1:5] == ["1: # One line", "2: ", "3: intro", "4: "]
    assert lines[5] == "5: " + long_line[:shown] + "…" and 3_000 < shown < 4_000
    # What goes on is the next line: a fetch of this budget cannot show the 1 MB one either.
    assert lines[6:] == [f"[… line 5 cut after {shown:,} of 1,000,000 characters for max_tokens 1000; "
                         'next: fetch(ref="oneline.md#one-line", from_line=6)]']
    assert after.splitlines() == ["## [1] oneline.md:1-7 One line (from line 6)", "6: ", "7: after"]
    assert after_data["sections"][0]["body"] == "\nafter" and after_data["truncated"] is False
    assert (len("\n".join(lines[:6]).encode()) + 3) // 4 <= 1000  # the cut line within the budget
    assert data["truncated"] is True and data["next_line"] == 5
    assert data["cut_line"] == {"line": 5, "shown": shown, "chars": 1_000_000}
    assert data["sections"][0]["body"] == body[:len("# One line\n\nintro\n\n") + shown]
    assert plain.splitlines()[5] == long_line[:plain_data["cut_line"]["shown"]] + "…"
    assert plain_data["cut_line"]["shown"] > shown  # no line numbers: more room for the text


async def test_fetch_is_cut_to_max_tokens_and_says_where(client: Client) -> None:
    text, data, _ = await _call(client, "fetch", ref=ROLLBACK, max_tokens=100)
    assert data["truncated"] is True and 83 < data["next_line"] <= 103
    assert (len(text.encode()) + 3) // 4 < 100 + 40  # the body lines within the budget, plus the notes
    _, big, _ = await _call(client, "fetch", ref=ROLLBACK, max_tokens=100000)
    assert big["clamped"]["max_tokens"] == {"asked": 100000, "used": 1500, "why": "server maximum"}


async def _read_on(c: Client, **args: Any) -> list[tuple[str, dict[str, Any]]]:
    """Fetch, then make the call each result's text names until one is whole: each (text,
    structured content)."""
    results: list[tuple[str, dict[str, Any]]] = []
    while True:
        text, data, err = await _call(c, "fetch", **args)
        assert not err, text
        results.append((text, data))
        if not data["truncated"]:
            return results
        named = re.search(r"; next: fetch\((.*)\)\]$", text.splitlines()[-1])
        assert named, text.splitlines()[-1]
        args = {k: json.loads(v) for k, v in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\d+|true|false)', named.group(1))}
        assert args == data["next"]
        assert len(results) < 50


@pytest.mark.parametrize("include", ["section", "neighbors"])
async def test_a_cut_fetch_names_the_call_that_reads_on(client: Client, include: str) -> None:
    # `fetch path:LINE` starts at the section's first line, so "[… truncated at line 93]" could
    # not be acted on: the same 100 tokens again. Now the hint is the call that goes on.
    _, whole, _ = await _call(client, "fetch", ref=ROLLBACK, include=include)
    assert not whole["truncated"]
    results = await _read_on(client, ref=ROLLBACK, include=include, max_tokens=100)
    assert len(results) > 2
    assert all((len(text.encode()) + 3) // 4 < 100 + 60 for text, _ in results)
    numbered = [line for text, _ in results for line in text.splitlines() if re.match(r"\d+: ", line)]
    want = [f"{h['start_line'] + i}: {line}" for h in whole["sections"]
            for i, line in enumerate(h["body"].rstrip("\n").split("\n"))]
    assert numbered == want  # every line once, in order
    parts = [part for _, data in results for part in data["sections"]]
    bodies: dict[int, str] = {}
    for part, after in zip(parts, [*parts[1:], None], strict=True):
        if part["body"] == "\n" and after is not None and after["id"] == part["id"]:
            continue  # only its heading line fit: the next call starts it again
        bodies[part["id"]] = bodies.get(part["id"], "") + part["body"]
    assert bodies == {h["id"]: h["body"] for h in whole["sections"]}
    for (_, before), (text, data) in itertools.pairwise(results):
        first = data["sections"][0]
        assert first.get("from_line", first["start_line"]) == before["next"]["from_line"]
        assert text.splitlines()[0].endswith(f" (from line {first['from_line']})" if "from_line" in first
                                             else first["title"] + ("" if first["relation"] == "self" else
                                                                    f" ({first['relation']} of {ROLLBACK})"))


async def test_a_fetch_from_a_line_past_the_section_says_which_lines_it_has(client: Client) -> None:
    text, _, err = await _call(client, "fetch", ref=ROLLBACK, from_line=104)
    assert err and text.endswith("from_line 104 is past what 'runbooks/payments.md#rollback-procedure' reads "
                                 "(lines 83-103)")
    _, data, err = await _call(client, "fetch", ref=ROLLBACK, from_line=1)  # before it: all of it
    assert not err and "from_line" not in data["sections"][0] and not data["truncated"]


@pytest.mark.parametrize("asked", [0, -1])
async def test_fetch_raises_a_too_small_max_tokens_to_the_minimum_and_says_so(client: Client, asked: int) -> None:
    _, data, err = await _call(client, "fetch", ref=ROLLBACK, max_tokens=asked)
    assert not err and data["clamped"]["max_tokens"] == {"asked": asked, "used": 100, "why": "minimum"}
    assert data["truncated"] is True


async def test_fetch_miss_lists_the_nearest_anchors(client: Client) -> None:
    text, _, err = await _call(client, "fetch", ref="runbooks/payments.md#rolback")
    assert err and "nearest anchors in runbooks/payments.md: #rollback-procedure" in text


async def test_fetch_a_path_gives_its_outline(client: Client) -> None:
    text, data, _ = await _call(client, "fetch", ref="runbooks/payments.md")
    assert data["path"] == "runbooks/payments.md" and ROLLBACK in [h["ref"] for h in data["headings"]]
    assert f"{ROLLBACK}  lines 83-103" in text


async def test_token_and_kind(client: Client) -> None:
    text, data, _ = await _call(client, "token", token="E1027")
    assert data["hits"] and all(h["token"] == "E1027" and h["kind"] == "error_code" for h in data["hits"])
    assert "E1027 (error_code, exact)" in text
    _, none, _ = await _call(client, "token", token="E1027", kind="env_var")
    assert none["hits"] == []


async def test_an_unknown_token_kind_names_the_kinds(client: Client) -> None:
    # "env" is no kind: the agent must learn that, not that no section holds E1027.
    text, _, err = await _call(client, "token", token="E1027", kind="env")
    assert err
    assert text == ("Error executing tool token: no token kind 'env'; kinds: url, host, cli_flag, file_path, "
                    "env_var, error_code, identifier, name, version, dotted, code")


@pytest.mark.parametrize(("tool", "args", "message"), [
    ("search", {"query": "rollback", "limit": 2.5},
     "limit: Input should be a valid integer, got a number with a fractional part"),
    ("fetch", {"ref": 141, "include": "all"},
     "ref: Input should be a valid string; include: Input should be 'section', 'parent' or 'neighbors'"),
], ids=["fraction", "two-errors"])
async def test_an_argument_of_the_wrong_type_is_one_line(client: Client, tool: str, args: dict[str, Any],
                                                         message: str) -> None:
    # The SDK's message is pydantic's: a line per error, the input echoed, a link to pydantic's docs.
    text, _, err = await _call(client, tool, **args)
    assert err and text == f"Error executing tool {tool}: {message}"


async def test_a_huge_argument_is_not_echoed_back_whole(client: Client) -> None:
    # A 2 MB query or ref: the answer repeats its start and says how long it was, not 2 MB.
    query = "zqxv " * 400_000
    text, data, err = await _call(client, "search", query=query)
    assert not err and data["hits"] == []
    assert text.startswith(f"no section matches: {query[:300] + '… (2,000,000 characters)'!r}")
    assert len(text) < 1000
    assert data["query"] == query[:2000] + "… (2,000,000 characters)"
    text, _, err = await _call(client, "fetch", ref="runbooks/ledger.md#" + "x" * 1_000_000)
    assert err and len(text) < 1000 and "characters)" in text


async def test_a_crash_in_a_tool_or_resource_says_what_went_wrong_in_one_line(
        client: Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # The SDK answers a crash with only "Error executing tool search": the agent (and the user
    # reading its transcript) must learn what broke, without a traceback; the log keeps that.
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(mdfts.lookup, "search_hits", boom)
    monkeypatch.setattr(mdfts.Index, "info", boom)
    text, _, err = await _call(client, "search", query="payments")
    assert err and text == "Error executing tool search: RuntimeError: disk on fire second line"
    with pytest.raises(MCPError) as raised:
        await client.read_resource("mdfts://ops/manifest")
    assert str(raised.value) == "Error reading resource mdfts://ops/manifest: RuntimeError: disk on fire second line"
    crashes = [r for r in caplog.records if r.exc_info and "disk on fire" in str(r.exc_info[1])]
    assert len(crashes) == 2  # the traceback stays in the server's log


async def test_a_call_out_of_memory_says_so_and_how_to_ask_for_less(
        client: Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # Under the server's memory cap a heavy search fails with a MemoryError: the agent read
    # "MemoryError" alone, and the log had a traceback of it for each call.
    def no_memory(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(mdfts.lookup, "search_hits", no_memory)
    text, _, err = await _call(client, "search", query="payments")
    assert err and text == ("Error executing tool search: out of memory (the server's memory limit); ask for "
                            "less (a smaller limit, a path_prefix) or try again")
    assert [r.exc_info for r in caplog.records if "out of memory" in r.getMessage()] == [None]
    _, data, err = await _call(client, "token", token="E1027")
    assert not err and data["hits"]  # the next call is answered


async def test_every_tool_and_resource_reads_the_index_off_the_event_loop(
        client: Client, two_dbs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    # Over HTTP one server answers many agents: a tool that reads on the event loop holds every
    # other call until it is done (a small search waited 9.5 s behind four context calls on a
    # 20 MB section). The SDK runs a tool or resource that is a plain function in a worker thread.
    threads: dict[str, set[int]] = {}
    for name in ("search", "show", "run", "token", "context", "outline", "info"):
        real = getattr(mdfts.Index, name)

        def spy(self: Any, *args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            threads.setdefault(_name, set()).add(threading.get_ident())
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(mdfts.Index, name, spy)
    with mdfts.open_index(two_dbs[0]) as ix:
        rid = ix.show(ROLLBACK).id  # type: ignore[union-attr]
    threads.clear()
    for tool, args in [("search", {"query": "payments"}), ("fetch", {"ref": ROLLBACK, "include": "neighbors"}),
                       ("token", {"token": "PAYMENTS_DB_URL"}), ("context", {"question": "roll back payments"}),
                       ("outline", {"path": "runbooks/payments.md"}), ("outline", {})]:
        _, _, err = await _call(client, tool, **args)
        assert not err, tool
    for uri in ("mdfts://ops/manifest", f"mdfts://ops/section/{rid}", "mdfts://ops/doc/runbooks/payments.md"):
        await client.read_resource(uri)
    assert set(threads) == {"search", "show", "run", "token", "context", "outline", "info"}
    assert threading.get_ident() not in set().union(*threads.values())


async def test_a_broken_index_under_a_running_server_is_named(tmp_path: Path, two_dbs: tuple[Path, Path]) -> None:
    # Corrupted after the server opened it: every tool and resource says so, as the CLI would.
    db = tmp_path / "ops.db"
    db.write_bytes(two_dbs[0].read_bytes())
    srv = build_server([db])
    try:
        async with Client(srv, raise_exceptions=True) as c:
            with db.open("r+b") as f:  # all but the first page (the header and the schema's start)
                f.seek(4096)
                f.write(b"\xff" * (db.stat().st_size - 4096))
            broken = f"{db}: damaged or truncated index file (database disk image is malformed); build or copy it again"
            for tool, args in [("search", {"query": "payments"}), ("outline", {}), ("token", {"token": "E1027"})]:
                text, _, err = await _call(c, tool, **args)
                assert err and text == f"Error executing tool {tool}: {broken}"
            with pytest.raises(MCPError) as raised:
                await c.read_resource("mdfts://ops/manifest")
            assert str(raised.value) == f"Error reading resource mdfts://ops/manifest: {broken}"
    finally:
        close_server(srv)


async def test_concurrent_calls_each_read_their_own_connection_at_most_workers_at_once(
        two_dbs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    # Threads sharing one connection took turns on it, and worse than in turn: four searches of a
    # 28 MB index at once took 4.2-6.0 s, one after another 1.25 s. Each call now borrows a
    # connection of its own, and no more calls run at once than the server has workers.
    running, most, conns = 0, 0, set()
    lock = threading.Lock()
    real = mdfts.Index.search

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            conns.add(id(self.conn))
        try:
            time.sleep(0.2)  # long enough for the other calls to arrive meanwhile
            return real(self, *args, **kwargs)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(mdfts.Index, "search", spy)
    srv = build_server([two_dbs[0]], Caps(workers=3))
    try:
        async with Client(srv, raise_exceptions=True) as c:
            results = await asyncio.gather(*(_call(c, "search", query="payments rollback") for _ in range(8)))
    finally:
        close_server(srv)
    assert all(not err and data["hits"] for _, data, err in results)
    assert (most, len(conns)) == (3, 3)


async def test_a_call_that_cannot_start_within_the_time_limit_is_told_the_server_is_busy(
        two_dbs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    # However many calls wait, none waits forever behind one that does not end.
    release = threading.Event()
    real = mdfts.Index.search

    def stuck(self: Any, *args: Any, **kwargs: Any) -> Any:
        release.wait(30)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(mdfts.Index, "search", stuck)
    srv = build_server([two_dbs[0]], Caps(workers=1, time_limit_ms=300))
    try:
        async with Client(srv, raise_exceptions=True) as c:
            first = asyncio.create_task(_call(c, "search", query="payments"))
            await asyncio.sleep(0.1)
            text, _, err = await _call(c, "token", token="PAYMENTS_DB_URL")
            with pytest.raises(MCPError, match="the server is busy"):
                await c.read_resource("mdfts://ops/manifest")
            release.set()
            await first  # (past the time limit by now, whatever it answers)
            _, again, again_err = await _call(c, "token", token="PAYMENTS_DB_URL")  # a slot is free again
    finally:
        release.set()
        close_server(srv)
    assert err and text == ("Error executing tool token: the server is busy (1 call at a time, none free "
                            "for 300 ms); try again")
    assert not again_err and again["hits"]


def test_workers_and_time_limit_are_one_or_more(two_dbs: tuple[Path, Path]) -> None:
    for caps in (Caps(workers=0), Caps(time_limit_ms=0)):
        with pytest.raises(MdftsError, match="workers and time_limit_ms must be 1 or more"):
            build_server([two_dbs[0]], caps)


async def test_a_call_that_runs_past_the_time_limit_is_stopped_and_says_so(
        two_dbs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    # A statement that runs for minutes (here a counting one, in place of a search of some
    # pathological index) is interrupted at the time limit; its connection serves the next call.
    real = mdfts.Index.search
    slow = "with recursive n(x) as (select 1 union all select x + 1 from n limit 100000000) select count(*) from n"

    def runaway(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("limit") == 7:
            self.conn.execute(slow).fetchone()
        return real(self, *args, **kwargs)

    monkeypatch.setattr(mdfts.Index, "search", runaway)
    srv = build_server([two_dbs[0]], Caps(workers=1, time_limit_ms=200))
    try:
        async with Client(srv, raise_exceptions=True) as c:
            started = time.monotonic()
            text, _, err = await _call(c, "search", query="payments", limit=7)
            took = time.monotonic() - started
            _, data, next_err = await _call(c, "search", query="payments")
    finally:
        close_server(srv)
    assert err and text == ("Error executing tool search: stopped at the server's time limit (200 ms); "
                            "ask for less (a smaller limit, a path_prefix, another index) or try again")
    assert took < 20  # (it ran the whole count: a minute and more)
    assert not next_err and data["hits"]


async def test_context_keeps_the_clamped_budget(client: Client) -> None:
    text, data, _ = await _call(client, "context", question="how do I roll back payments?", max_tokens=99999)
    assert data["budget"] == 1500 and data["used"] <= 1500
    block = text[: text.index("</documents>\n") + len("</documents>\n")]
    assert (len(block.encode()) + 3) // 4 == data["used"]
    assert data["sources"][0]["role"] in ("match", "parent", "previous", "next")
    assert ROLLBACK in [s["ref"] for s in data["sources"]]


async def test_context_keeps_to_a_path_prefix(client: Client) -> None:
    _, data, err = await _call(client, "context", question="how do I roll back payments?", path_prefix="sops/")
    assert not err and data["sources"] and all(s["ref"].startswith("sops/") for s in data["sources"])


async def test_context_picks_the_index_that_has_the_path_prefix(two_dbs: tuple[Path, Path]) -> None:
    srv = build_server(list(two_dbs))
    try:
        async with Client(srv, raise_exceptions=True) as c:
            _, anywhere, _ = await _call(c, "context", question="payments rollback")
            _, data, err = await _call(c, "context", question="payments rollback", path_prefix="runbooks/")
    finally:
        close_server(srv)
    assert anywhere["index"] == "fixtures"  # the best fused hit without the prefix: no runbooks/ there
    assert not err and data["index"] == "ops"
    assert data["sources"] and all(s["ref"].startswith("runbooks/") for s in data["sources"])


async def test_outline_counts_a_documents_one_section_and_line_in_the_singular(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "one.md").write_text("# One\n")
    (tmp_path / "docs" / "two.md").write_text("# Two\n\n## More\n")
    build_index([tmp_path / "docs"], tmp_path / "small.db")
    srv = build_server([tmp_path / "small.db"])
    try:
        async with Client(srv, raise_exceptions=True) as c:
            text, _, _ = await _call(c, "outline")
    finally:
        close_server(srv)
    assert text == "one.md — One (1 section, 1 line)\ntwo.md — Two (2 sections, 3 lines)"


async def test_outline_lists_documents_then_headings(client: Client) -> None:
    _, docs, _ = await _call(client, "outline")
    assert "runbooks/payments.md" in [d["path"] for d in docs["documents"]]
    _, under, _ = await _call(client, "outline", path="runbooks/")
    assert under["documents"] and all(d["path"].startswith("runbooks/") for d in under["documents"])
    _, heads, _ = await _call(client, "outline", path="runbooks/payments.md")
    assert heads["headings"][0]["ref"] == "runbooks/payments.md#payments"


async def test_outline_of_an_empty_path_lists_the_documents_as_in_python(client: Client, two_dbs: tuple[Path, Path]) -> None:
    # An agent may send "" for "no path": Index.outline("") lists the documents, not an error.
    with mdfts.open_index(two_dbs[0]) as ix:
        want = [d.path for d in ix.outline("")]
    text, data, err = await _call(client, "outline", path="")
    assert not err, text
    assert [d["path"] for d in data["documents"]] == want


@pytest.mark.parametrize("ref", [ROLLBACK, "runbooks/payments.md:90", "id"], ids=["anchor", "line", "id"])
async def test_outline_of_a_section_ref_is_its_documents_as_in_python(
        client: Client, two_dbs: tuple[Path, Path], ref: str) -> None:
    with mdfts.open_index(two_dbs[0]) as ix:
        ref = str(ix.show(ROLLBACK).id) if ref == "id" else ref  # type: ignore[union-attr]
        want = [e.ref for e in ix.outline(ref)]  # type: ignore[union-attr]
    text, data, err = await _call(client, "outline", path=ref)
    assert not err and data["path"] == "runbooks/payments.md", text
    assert [h["ref"] for h in data["headings"]] == want


async def test_resources_and_instructions(client: Client, two_dbs: tuple[Path, Path]) -> None:
    assert [str(r.uri) for r in (await client.list_resources()).resources] == ["mdfts://ops/manifest"]
    templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
    assert templates == ["mdfts://{index}/section/{id}", "mdfts://{index}/doc/{+path}"]
    manifest = json.loads((await client.read_resource("mdfts://ops/manifest")).contents[0].text)  # type: ignore[union-attr]
    with mdfts.open_index(two_dbs[0]) as ix:
        assert manifest["sections"] == int(ix.meta["sections"])
        assert manifest["schema_version"] == ix.info()["schema_version"]
        assert manifest["commit"] == ix.meta.get("git_commit")
        rid = ix.show(ROLLBACK).id  # type: ignore[union-attr]
    section = (await client.read_resource(f"mdfts://ops/section/{rid}")).contents[0]
    assert section.text.startswith("## Rollback procedure\n") and section.mime_type == "text/markdown"  # type: ignore[union-attr]
    doc = (await client.read_resource("mdfts://ops/doc/runbooks/payments.md")).contents[0].text  # type: ignore[union-attr]
    assert doc.startswith("# payments\n") and "## Rollback procedure" in doc
    instructions = client.instructions or ""
    assert "index 'ops': 23 documents, 184 sections" in instructions and "then fetch" in instructions
    assert "backticks" in instructions and "Cite path:lines" in instructions


@pytest.mark.parametrize(("uri", "message"), [
    ("mdfts://ops/section/999999", "no section with id 999999 in this index"),
    ("mdfts://ops/section/runbooks", "not a section id: 'runbooks'"),
    ("mdfts://ops/section/%D9%A1", "not a section id: '١'"),
    ("mdfts://ops/doc/runbooks/nope.md", "no document 'runbooks/nope.md' in this index; nearest documents: "),
    ("mdfts://ops/doc/runbooks/payments.md:90", "runbooks/payments.md:90: not a document path"),
    ("mdfts://nope/section/1", "no index 'nope'; indexes: ops"),
], ids=["unknown-id", "not-an-id", "other-digits", "unknown-document", "not-a-document", "unknown-index"])
async def test_a_resource_miss_says_why(client: Client, uri: str, message: str) -> None:
    with pytest.raises(MCPError) as err:
        await client.read_resource(uri)
    assert message in str(err.value)


async def test_several_indexes_fused_each_hit_names_its_index(two_dbs: tuple[Path, Path]) -> None:
    srv = build_server(list(two_dbs))
    try:
        async with Client(srv, raise_exceptions=True) as c:
            text, data, _ = await _call(c, "search", query="payments rollback", limit=6)
            assert {h["index"] for h in data["hits"]} == {"ops", "fixtures"}
            scores = [h["score"] for h in data["hits"]]
            assert scores == sorted(scores, reverse=True) and scores[0] == pytest.approx(1 / 61, abs=1e-6)
            assert text.startswith("[ops:") or text.startswith("[fixtures:")
            _, one, _ = await _call(c, "search", query="payments rollback", index="fixtures")
            assert one["hits"] and {h["index"] for h in one["hits"]} == {"fixtures"}
            err_text, _, err = await _call(c, "search", query="x", index="nope")
            assert err and "no index 'nope'; indexes: ops, fixtures" in err_text
            # a path only one index has needs no index argument; one both have does
            _, f, _ = await _call(c, "fetch", ref="services/payments.md#rollback-procedure")
            assert f["index"] == "fixtures"
    finally:
        close_server(srv)


async def test_token_over_several_indexes_puts_case_exact_sections_first(tmp_path: Path) -> None:
    # The tool's promise (and `mdfts token`'s): case-exact first. Hits were listed index by index
    # and cut at the cap, so one index's case-insensitive matches pushed out another's exact one.
    for name, texts in {"a": ["foo_bar_url"] * 3, "b": ["FOO_BAR_URL"]}.items():
        docs = tmp_path / name
        docs.mkdir()
        for i, text in enumerate(texts):
            (docs / f"p{i}.md").write_text(f"# Page {i}\n\nSet `{text}` here.\n")
        build_index([docs], tmp_path / f"{name}.db")
    srv = build_server([tmp_path / "a.db", tmp_path / "b.db"], Caps(max_results=2))
    try:
        async with Client(srv, raise_exceptions=True) as c:
            _, data, _ = await _call(c, "token", token="FOO_BAR_URL")
    finally:
        close_server(srv)
    assert [(h["index"], h["token"], h["exact"]) for h in data["hits"]] == [
        ("b", "FOO_BAR_URL", True), ("a", "foo_bar_url", False)]


def test_rrf_is_plain_reciprocal_rank(two_dbs: tuple[Path, Path]) -> None:
    with mdfts.open_index(two_dbs[0]) as a, mdfts.open_index(two_dbs[1]) as b:
        lists = {"ops": a.search("rollback", limit=3), "fixtures": b.search("rollback", limit=3)}
    merged = mdfts.rrf_merge(lists, 6)
    assert [round(h.score or 0, 6) for h in merged[:2]] == [round(1 / 61, 6)] * 2
    assert [h.rank for h in merged] == list(range(1, len(merged) + 1))
    assert {(h.index, h.id) for h in merged} == {(n, h.id) for n, hs in lists.items() for h in hs}


@pytest.mark.integration
async def test_stdio_subprocess(two_dbs: tuple[Path, Path]) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mdfts", "mcp", str(two_dbs[0])],
                                   env={**os.environ})
    async with Client(params) as c:
        text, data, err = await _call(c, "search", query="payments rollback", limit=1)
    assert not err and data["hits"][0]["ref"] == ROLLBACK


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(proc: subprocess.Popen[bytes], port: int) -> None:
    """Until the server `proc` listens on `port` (30 s at most, and while it runs)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)


@pytest.mark.integration
async def test_http_on_loopback(two_dbs: tuple[Path, Path]) -> None:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mdfts", "mcp", str(two_dbs[0]), "--http", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for(proc, port)
        async with Client(f"http://127.0.0.1:{port}/mcp") as c:
            text, data, err = await _call(c, "fetch", ref=ROLLBACK, line_numbers=False)
        assert not err and "\n## Rollback procedure\n" in text and data["sections"][0]["ref"] == ROLLBACK
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _address_space(pid: int) -> list[str]:
    limits = Path(f"/proc/{pid}/limits").read_text()
    return next(x for x in limits.splitlines() if x.startswith("Max address space")).split()[3:5]


@pytest.mark.integration
@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
def test_mcp_caps_its_address_space_as_serve_does(two_dbs: tuple[Path, Path], http: bool) -> None:
    # Unbounded, four searches of a common word in a 20 MB section took 2.36 GB; `mdfts serve`
    # has had the 2 GiB cap, under which such a call fails and the server goes on.
    from mdfts.browse import SERVE_MEMORY_BYTES

    port = _free_port()
    args = ["--http", "--port", str(port)] if http else []
    proc = subprocess.Popen([sys.executable, "-m", "mdfts", "mcp", str(two_dbs[0]), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin and proc.stdout
    try:
        if http:
            _wait_for(proc, port)
        else:  # an answer to initialize: the server is running
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}}).encode() + b"\n")
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["id"] == 1
        assert _address_space(proc.pid) == [str(SERVE_MEMORY_BYTES), str(SERVE_MEMORY_BYTES)]
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()


@pytest.mark.integration
def test_cli_without_mcp_says_what_to_install(two_dbs: tuple[Path, Path]) -> None:
    code = ("import sys; sys.modules['mcp'] = None\n"
            "from mdfts.cli import cli\ncli(['mcp', sys.argv[1]])")
    result = subprocess.run([sys.executable, "-c", code, str(two_dbs[0])], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr == "Error: the MCP server needs the mcp package: pip install 'mdfts[mcp]'\n"


def test_instructions_give_the_build_date_and_info_a_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")  # 2025-12-01 00:00 UTC
    build_index([FIXTURE_DOCS], tmp_path / "dated.db")
    from mdfts.mcp_server import instructions

    with mdfts.open_index(tmp_path / "dated.db") as ix:
        assert "built 2025-12-01" in instructions({"dated": ix})
        assert ix.info()["meta"]["built_at"] == 1764547200
        assert json.loads(ix.context("payments", max_tokens=500, format="json").text)["built_at"] == 1764547200


def test_an_mcp_without_the_2x_api_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    # mcp 1.x imports, but has no mcp.server.MCPServer: say which version is needed and which is there.
    import importlib
    import importlib.metadata
    import sys
    import types

    old = types.ModuleType("mcp.server")
    monkeypatch.setitem(sys.modules, "mcp.server", old)
    monkeypatch.delitem(sys.modules, "mdfts.mcp_server")
    real_version = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "1.30.0" if name == "mcp" else real_version(name))
    with pytest.raises(MdftsError, match=r"^the MCP server needs mcp 2\.3 or later \(mcp 1\.30\.0 is installed\); "
                                         r"pip install 'mdfts\[mcp\]'$"):
        importlib.import_module("mdfts.mcp_server")


async def test_a_cut_context_names_the_fetch_that_reads_the_rest(client: Client) -> None:
    # The note said `fetch REF`, and that fetch gave the section from its first line again.
    text, _, err = await _call(client, "context", question="how do I roll back payments", max_tokens=300)
    found = re.search(r"\[… lines (\d+)-103 cut for the budget; fetch\((.*)\)\]", text)
    assert not err and found, text
    args = {k: json.loads(v) for k, v in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\d+)', found[2])}
    assert args == {"ref": ROLLBACK, "from_line": int(found[1])}
    _, data, err = await _call(client, "fetch", **args)
    assert not err and data["sections"][0]["from_line"] == int(found[1])


async def test_fetch_names_the_files_a_sections_include_directives_read(tmp_path: Path) -> None:
    # An include-only section ranks first for what its included file says; its body is the
    # directive line, so the fetch names the calls that read what the site shows there.
    docs = tmp_path / "repo" / "docs"
    docs.mkdir(parents=True)
    (docs / "trouble.md").write_text("# Kiln trouble\n\n## Commands\n\nRun kiln status.\n\n## Errors\n\n{!docs/errors.md!}\n")
    (docs / "errors.md").write_text("# Kiln errors\n\nThe controller rejects an unreadable glaze table.\n")
    build_index([tmp_path / "repo"], tmp_path / "x.db")
    srv = build_server([tmp_path / "x.db"])
    try:
        async with Client(srv, raise_exceptions=True) as c:
            text, data, _ = await _call(c, "fetch", ref="docs/trouble.md#errors")
            assert data["includes"] == [{"ref": "docs/errors.md"}]
            assert text.endswith('\n[includes fetch(ref="docs/errors.md")]')
            outline, _, _ = await _call(c, "fetch", **data["includes"][0])  # a path: its outline
            assert "docs/errors.md#kiln-errors  lines 1-3" in outline
            text, data, _ = await _call(c, "fetch", ref="docs/trouble.md#commands")
            assert "includes" not in data and "[includes" not in text
    finally:
        close_server(srv)
