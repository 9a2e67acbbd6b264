"""`python -m bench agents`: the agent front-ends' targets, measured outside the unit tests.

- MCP: search then fetch through an in-memory client session on the sample, next to the same
  lookups as plain Python calls in the same run (the ratio is the MCP overhead);
- the size of tools/list (tool descriptions are context for the agent);
- the context budget over a sweep of budgets 50…8000 in every format: the printed estimate never
  above the budget, the figure exact, and the top match in whenever it fits at all.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import click

import mdfts
from bench.common import SAMPLE, log, md_table
from mdfts.build import build_index
from mdfts.prompt import FORMATS, Block, ByteCounter, Format, Provenance, render

QUESTIONS = ["how do I roll back payments?", "PAYMENTS_DB_URL", "E1027 spikes after a client release",
             "ledger strict mode", "who do I page for billing", "rotate the stripe webhook secret"]
REF = "runbooks/payments.md#rollback-procedure"


def _ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.2f} ms (p90 {sorted(samples)[int(len(samples) * 0.9)] * 1000:.2f})"


async def _mcp(db: Path, rounds: int) -> dict[str, Any]:
    from mcp import Client

    from mdfts.mcp_server import build_server, close_server

    srv = build_server([db])
    out: dict[str, Any] = {}
    try:
        async with Client(srv, raise_exceptions=True) as c:
            tools = (await c.list_tools()).tools
            listing = json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools])
            out["tools_list_bytes"] = len(listing.encode())
            out["tools_list_tokens"] = ByteCounter()(listing)
            first = time.perf_counter()
            await c.call_tool("search", {"query": QUESTIONS[0], "limit": 8})
            out["first_search"] = time.perf_counter() - first
            search, fetch = [], []
            for i in range(rounds):
                q = QUESTIONS[i % len(QUESTIONS)]
                t0 = time.perf_counter()
                r = await c.call_tool("search", {"query": q, "limit": 8})
                t1 = time.perf_counter()
                ref = (r.structured_content or {})["hits"][0]["ref"]
                await c.call_tool("fetch", {"ref": ref})
                t2 = time.perf_counter()
                search.append(t1 - t0)
                fetch.append(t2 - t1)
            out["search"], out["fetch"] = search, fetch
    finally:
        close_server(srv)
    return out


def _python(db: Path, rounds: int) -> tuple[list[float], list[float], float]:
    search, fetch = [], []
    with mdfts.open_index(db) as ix:
        t0 = time.perf_counter()
        ix.search(QUESTIONS[0], limit=8)
        first = time.perf_counter() - t0
        for i in range(rounds):
            q = QUESTIONS[i % len(QUESTIONS)]
            t0 = time.perf_counter()
            hits = ix.search(q, limit=8)
            t1 = time.perf_counter()
            ix.show(hits[0].ref)
            t2 = time.perf_counter()
            search.append(t1 - t0)
            fetch.append(t2 - t1)
    return search, fetch, first


def _fits_at_all(ix: mdfts.Index, question: str, budget: int, fmt: Format, count: ByteCounter) -> bool:
    top = ix.search(question, limit=1)
    if not top:
        return False
    lines = top[0].body.rstrip("\n").split("\n")
    k = next((n for n in range(2, len(lines)) if any(x.strip() for x in lines[1:n])), None)
    smallest = Block(top[0], "match", 1, cut_lines=k)
    text = render(fmt, Provenance.from_meta(ix.name, ix.meta), budget, budget, count.name, [smallest], [],
                  more=100, brief=True, question=question)
    return count(text) <= budget


def _sweep(db: Path, budgets: list[int]) -> list[list[Any]]:
    count = ByteCounter()
    rows = []
    with mdfts.open_index(db) as ix:
        for fmt in FORMATS:
            runs = over = inexact = top_missing = top_fits = 0
            for q in QUESTIONS:
                for b in budgets:
                    ctx = ix.context(q, max_tokens=b, format=fmt)
                    runs += 1
                    over += ctx.used > b or count(ctx.text) > b
                    inexact += count(ctx.text) != ctx.used
                    if _fits_at_all(ix, q, b, fmt, count):
                        top_fits += 1
                        top = ix.search(q, limit=1)[0]
                        top_missing += not any(x.hit.id == top.id for x in ctx.blocks)
            rows.append([fmt, runs, over, inexact, top_fits, top_missing])
    return rows


@click.command()
@click.option("--rounds", type=click.IntRange(1), default=200, show_default=True, help="search+fetch pairs to time.")
@click.option("--step", type=click.IntRange(1), default=7, show_default=True,
              help="Budget step above 400 (every budget from 50 to 400 is tried).")
@click.option("--sweep/--no-sweep", default=True, show_default=True, help="Run the budget sweep (minutes).")
def main(rounds: int, step: int, sweep: bool) -> None:
    """Time MCP search/fetch, size tools/list, and sweep the context budget 50…8000 on the sample."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "sample.db"
        build_index([SAMPLE / "docs"], db)
        log("timing MCP and Python lookups")
        mcp = anyio.run(_mcp, db, rounds)
        py_search, py_fetch, py_first = _python(db, rounds)
        budgets = list(range(50, 401)) + list(range(401, 8001, step)) + [8000]
        rows = []
        if sweep:
            log(f"sweeping {len(budgets)} budgets x {len(QUESTIONS)} questions x 3 formats")
            rows = _sweep(db, budgets)
    ratio_s = statistics.median(mcp["search"]) / statistics.median(py_search)
    ratio_f = statistics.median(mcp["fetch"]) / statistics.median(py_fetch)
    click.echo(f"## Agents (sample docs, {rounds} rounds)\n")
    click.echo(md_table(["call", "MCP in-memory", "Python", "MCP / Python"], [
        ["search (limit 8)", _ms(mcp["search"]), _ms(py_search), f"{ratio_s:.1f}x"],
        ["fetch (top hit's ref)", _ms(mcp["fetch"]), _ms(py_fetch), f"{ratio_f:.1f}x"],
    ]))
    click.echo(f"\nFirst search on a fresh connection (compiles search.sql): MCP {mcp['first_search'] * 1000:.1f} ms, "
               f"Python {py_first * 1000:.1f} ms. "
               f"tools/list: {mcp['tools_list_bytes']:,} bytes, {mcp['tools_list_tokens']} tokens (bytes/4).\n")
    if rows:
        click.echo(md_table(["format", "runs", "over budget", "figure not exact", "top fits", "top left out"], rows))


if __name__ == "__main__":
    main()
