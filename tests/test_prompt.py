"""The context block (mdfts.prompt): an exact budget over everything printed, whole sections,
matches before their relatives, grouped by document, each section listed once, three layouts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import mdfts
from mdfts.errors import MdftsError
from mdfts.prompt import Block, ByteCounter, Provenance, _has_text, build_context, render

BUDGETS = [50, 51, 64, 80, 100, 128, 150, 200, 256, 300, 400, 512, 700, 1000, 1500, 2000, 3000, 4000, 6000, 8000]
QUESTIONS = ["how do I roll back payments?", "PAYMENTS_DB_URL", "E1027 spikes after a client release",
             "ledger strict mode", "who do I page for billing"]
FORMATS = ["xml", "markdown", "json"]
count = ByteCounter()


@pytest.fixture(scope="module")
def ix(sample_db: Path) -> Iterator[mdfts.Index]:
    with mdfts.open_index(sample_db) as index:
        yield index


def _fits_at_all(ix: mdfts.Index, question: str, budget: int, fmt: str) -> bool:
    """Whether the best match could be printed at all: its smallest allowed cut (heading and one
    line of text), alone, in the briefest frame with every other candidate counted as omitted."""
    top = ix.search(question, limit=5)
    if not top:
        return False
    lines = top[0].body.split("\n")
    k = next(n for n in range(2, len(lines) + 1) if any(line.strip() for line in lines[1:n]))
    smallest = Block(top[0], "match", 1, cut_lines=k if k < len(lines.copy()) - 1 else None)
    prov = Provenance.from_meta(ix.name, ix.meta)
    text = render(fmt, prov, budget, budget, count.name, [smallest], [], more=100, brief=True,  # type: ignore[arg-type]
                  question=question)
    return count(text) <= budget


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("question", QUESTIONS)
def test_budget_is_never_exceeded_and_the_figure_is_exact(ix: mdfts.Index, question: str, fmt: str) -> None:
    for budget in BUDGETS:
        ctx = ix.context(question, max_tokens=budget, format=fmt)  # type: ignore[arg-type]
        assert count(ctx.text) == ctx.used <= budget, (budget, ctx.used)
        assert f"{ctx.used}" in ctx.text and ctx.tokenizer == "bytes/4" and "bytes/4" in ctx.text
        top = ix.search(question, limit=1)
        if _fits_at_all(ix, question, budget, fmt):
            assert any(b.hit.id == top[0].id for b in ctx.blocks), (budget, fmt)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_sections_whole_or_cut_with_text_listed_once_grouped_by_document(ix: mdfts.Index, fmt: str) -> None:
    for question in QUESTIONS:
        for budget in BUDGETS:
            ctx = ix.context(question, max_tokens=budget, format=fmt)  # type: ignore[arg-type]
            refs = [b.hit.ref for b in ctx.blocks]
            assert len(set(refs)) == len(refs) and not set(refs) & set(ctx.omitted)
            assert len(set(ctx.omitted)) == len(ctx.omitted)
            for b in ctx.blocks:
                assert any(line.strip() for line in b.body.split("\n")[1:]), b.hit.ref  # never an empty body
                if b.cut_lines is None:
                    assert b.body == b.hit.body.rstrip("\n")
                else:
                    assert b.role == "match" and f"fetch {b.hit.ref}]" in b.body
            paths = [b.hit.path for b in ctx.blocks]
            groups = [p for i, p in enumerate(paths) if i == 0 or paths[i - 1] != p]
            assert len(groups) == len(set(groups)), paths  # each document's blocks together
            for p in set(paths):
                starts = [b.hit.start_line for b in ctx.blocks if b.hit.path == p]
                assert starts == sorted(starts)  # document order within it


def test_relatives_never_displace_a_match(ix: mdfts.Index) -> None:
    """The matches chosen are the ones chosen when there are no parents or neighbours at all."""
    prov = Provenance.from_meta(ix.name, ix.meta)
    for question in QUESTIONS:
        matches = ix.search(question, limit=5)
        for budget in BUDGETS:
            with_rel = ix.context(question, max_tokens=budget)
            alone = build_context(matches, lambda h: [], budget=budget, provenance=prov, question=question)
            got = [(b.hit.id, b.cut_lines) for b in with_rel.blocks if b.role == "match"]
            assert sorted(got) == sorted((b.hit.id, b.cut_lines) for b in alone.blocks), (question, budget)
            if any(b.role != "match" for b in with_rel.blocks):  # relatives come only after every match
                # (a match with nothing but its heading is neither printed nor listed, by design)
                assert {h.ref for h in matches if _has_text(h)} <= {b.hit.ref for b in with_rel.blocks} | set(with_rel.omitted)


def test_a_large_budget_brings_parents_and_neighbours_each_once(ix: mdfts.Index) -> None:
    ctx = ix.context("how do I roll back payments?", max_tokens=8000)
    roles = {(b.hit.ref, b.role) for b in ctx.blocks}
    assert ("runbooks/payments.md#rollback-procedure", "match") in roles
    # the page's h1 comes in once: as the match's parent, or as a match itself (ranking-dependent)
    assert [r for r in roles if r[0] == "runbooks/payments.md#payments"] in (
        [("runbooks/payments.md#payments", "parent")], [("runbooks/payments.md#payments", "match")])
    assert not ctx.omitted


def test_xml_layout(ix: mdfts.Index) -> None:
    ctx = ix.context("how do I roll back payments?", max_tokens=700, format="xml")
    text = ctx.text
    assert re.match(r'<documents index="sample" version="[^"]+" commit="[0-9a-f]{12}" budget="700" '
                    rf'used="{ctx.used}" tokenizer="bytes/4">\n', text)
    assert '<document index="1" ref="runbooks/payments.md#rollback-procedure" role="match" rank="1">\n' \
           "<source>runbooks/payments.md:83-103</source>\n<title>payments › Rollback procedure</title>\n" \
           "<document_content>\n## Rollback procedure\n" in text
    assert "`payments`" in text and "<!--" not in text  # exact tokens as written; no comments
    # What is left out depends on the ranking: named refs, a count of more hits, or both.
    assert re.search(r'<omitted( refs="[^"]+")?( more="\d+")? reason="budget"/>\n</documents>\n$', text)
    assert re.search(r'<omitted (refs|more)=', text)


def test_markdown_layout(ix: mdfts.Index) -> None:
    ctx = ix.context("how do I roll back payments?", max_tokens=700, format="markdown")
    assert ctx.text.startswith(f"Context from sample (version {ix.meta['artifact_version']}, commit ")
    # (blocks print in document order: the page's title section may come first, so the block's
    # number is not asserted, only its layout and its search rank)
    assert re.search(r"\n### \[\d\] payments › Rollback procedure — runbooks/payments\.md:83-103 \(match 1\)\n\n"
                     r"## Rollback procedure\n", ctx.text)
    assert "<!--" not in ctx.text and "\nOmitted for the budget: " in ctx.text


@pytest.mark.parametrize("fmt", ["xml", "markdown"])
def test_every_match_names_its_search_rank(ix: mdfts.Index, fmt: str) -> None:
    # Blocks print in document order (a page's parent and earlier sections before its match), so
    # the printed order is not the ranking: each match carries the search's rank, 1 = best.
    question = "payments rollback procedure"
    ranked = {h.ref: h.rank for h in ix.search(question, limit=10)}
    ctx = ix.context(question, max_tokens=6000, format=fmt)
    matches = [b.hit.ref for b in ctx.blocks if b.role == "match"]
    if fmt == "xml":
        printed = [int(r) for r in re.findall(r'role="match" rank="(\d+)">', ctx.text)]
    else:
        printed = [int(r) for r in re.findall(r"^### \[\d+\] .* \(match (\d+)\)$", ctx.text, re.M)]
    assert len(matches) >= 3 and printed == [ranked[ref] for ref in matches]
    assert ctx.blocks[0].role == "parent"  # the case in point: the printed order is not the rank


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_match_without_the_named_identifier_says_so(ix: mdfts.Index, fmt: str) -> None:
    """As `mdfts search` marks it: a match that never writes the identifier the question names is
    marked in the block, so a model does not answer from another service's section; the others
    are not, nor are the relatives (no match, no claim)."""
    question = "PAYMENTS_DB_URL rollback"
    exact = {h.ref: h.exact for h in ix.search(question, limit=10)}
    assert True in exact.values() and False in exact.values()  # the case in point: both kinds
    ctx = ix.context(question, max_tokens=6000, format=fmt)
    if fmt == "xml":
        marked = re.findall(r'ref="([^"]+)" role="match" rank="\d+"( exact="false")?>', ctx.text)
        printed = {ref: not flag for ref, flag in marked}
        assert ctx.text.count('exact="false"') == len([b for b in ctx.blocks if b.role == "match" and not b.hit.exact])
    elif fmt == "markdown":
        titles = {b.hit.title: b.hit.ref for b in ctx.blocks}
        marked = re.findall(r"^### \[\d+\] (.*) — \S+ \(match \d+(, no exact match)?\)$", ctx.text, re.M)
        printed = {titles[title]: not flag for title, flag in marked}
    else:
        docs = json.loads(ctx.text)["documents"]
        printed = {d["ref"]: d["exact"] for d in docs if d["role"] == "match"}
        assert all(d["exact"] is None for d in docs if d["role"] != "match")
    assert len(printed) >= 3 and printed == {ref: exact[ref] for ref in printed}


def test_json_layout_carries_provenance(ix: mdfts.Index) -> None:
    ctx = ix.context("how do I roll back payments?", max_tokens=2000, format="json")
    doc = json.loads(ctx.text)
    assert {k: doc[k] for k in ("index", "version", "commit", "built_at", "budget", "used", "tokenizer")} == {
        "index": "sample", "version": ix.meta["artifact_version"], "commit": ix.meta["git_commit"],
        "built_at": int(ix.meta["built_at"]) if "built_at" in ix.meta else None, "budget": 2000, "used": ctx.used, "tokenizer": "bytes/4"}
    first = next(d for d in doc["documents"] if d["role"] == "match" and d["rank"] == 1)
    assert (first["ref"], first["source"], first["title"]) == (
        "runbooks/payments.md#rollback-procedure", "runbooks/payments.md:83-103", "payments › Rollback procedure")
    assert [d["index"] for d in doc["documents"]] == list(range(1, len(doc["documents"]) + 1))


def test_another_tokenizer_is_named_and_honoured(ix: mdfts.Index) -> None:
    class Words:
        name = "words"

        def __call__(self, text: str) -> int:
            return len(text.split())

    prov = Provenance.from_meta(ix.name, ix.meta)
    matches = ix.search("rollback", limit=5)
    for budget in (60, 200, 900):
        ctx = build_context(matches, lambda h: [], budget=budget, provenance=prov, count=Words())
        assert Words()(ctx.text) == ctx.used <= budget and 'tokenizer="words"' in ctx.text


def test_a_budget_too_small_for_the_frame_is_an_error(ix: mdfts.Index) -> None:
    with pytest.raises(MdftsError, match="cannot hold even an empty context block"):
        ix.context("rollback", max_tokens=5)
    with pytest.raises(MdftsError, match="^a budget of 1 token cannot hold"):
        ix.context("rollback", max_tokens=1)


@pytest.mark.parametrize("tag", ["</document_content>", "</DOCUMENT_CONTENT >", "</document>", "</Documents>"])
def test_a_closing_tag_in_a_body_cannot_end_the_block(ix: mdfts.Index, tag: str) -> None:
    # Any case, any of the block's own tags: a model reading the block may not be case-exact.
    hit = ix.search("rollback", limit=1)[0].with_(body=f"## X\n\nsee {tag} and </documentation> here\n")
    ctx = build_context([hit], lambda h: [], budget=500, provenance=Provenance("t"))
    closing = re.findall(r"</(?:documents?|document_content)\b", ctx.text, re.I)
    assert closing == ["</document_content", "</document", "</documents"]
    assert "</documentation>" in ctx.text


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_cut_keeps_text_under_a_setext_heading(ix: mdfts.Index, fmt: str) -> None:
    """`Title` over `-----` is the heading, two lines: a cut keeps a line of text after both."""
    hit = ix.search("reindexing without downtime", limit=1)[0]
    assert hit.body.split("\n")[1].startswith("---")
    for budget in BUDGETS:
        ctx = ix.context("reindexing without downtime", max_tokens=budget, format=fmt)  # type: ignore[arg-type]
        for b in ctx.blocks:
            if b.hit.id == hit.id and b.cut_lines is not None:
                assert any(line.strip() for line in b.body.split("\n")[2:-1]), (budget, b.body)


def test_a_cut_after_many_blank_lines_reads_the_body_a_few_times(ix: mdfts.Index) -> None:
    """The shortest allowed cut is found in one pass: a test of each number of lines split the
    whole body once a line, quadratic in the blank lines under a heading (5,000 took 2.6 s and
    40,000 took 156 s of `mdfts context`)."""

    class Splits(str):
        calls = 0

        def split(self, *args: object, **kwargs: object) -> list[str]:
            Splits.calls += 1
            return super().split(*args, **kwargs)  # type: ignore[arg-type]

    body = Splits("## X\n" + "\n" * 20_000 + "text here\n" + "more words\n" * 2_000)
    hit = ix.search("rollback", limit=1)[0].with_(body=body)
    ctx = build_context([hit], lambda h: [], budget=6_000, provenance=Provenance("t"))
    (block,) = ctx.blocks
    assert block.cut_lines is not None and "text here" in block.body and ctx.used <= 6_000
    assert Splits.calls < 100


def test_a_match_too_long_for_the_budget_is_counted_about_once(ix: mdfts.Index) -> None:
    """A match too long for the budget is rendered and counted whole once; then only cuts about
    the size of what fits are. The cut was bisected over all its lines, so half of it was
    counted, then a quarter, ..., each a split of the whole body: a 20 MB section took 2.3 s a
    context call, and four at once held an MCP server for 22 s."""
    body = "## X\n\n" + "".join(f"line {i} of a long section\n" for i in range(80_000))
    hit = ix.search("rollback", limit=1)[0].with_(body=body)
    counted: list[int] = []

    class Counting(ByteCounter):
        def __call__(self, text: str) -> int:
            counted.append(len(text))
            return super().__call__(text)

    ctx = build_context([hit], lambda h: [], budget=1_000, provenance=Provenance("t"), count=Counting())
    (block,) = ctx.blocks
    assert block.cut_lines is not None and ctx.used <= 1_000
    assert ctx.used > 950  # as many lines as fit
    assert sum(counted) < len(body) + 64 * 4 * 1_000  # (it was twice the body)
