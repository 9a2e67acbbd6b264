#!/usr/bin/env python3
"""Check the round-18 held-out query files for prometheus-operator-runbooks and tldr-common.

Run with a Python that has markdown-it-py and mdit-py-plugins, e.g.
    /work/main/.venv/bin/python bench/heldout-next/validate_promop_tldr.py
Prints OK when every check passes, else one line per problem and exits 1.

It reads only the two query files in this folder, the corpora, and the `gold` fields of the
earlier rounds' files in ../heldout (to check that no gold is reused). It runs no ranker.
"""
import json
import os
import sys

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
CORPORA = os.environ.get("CORPORA", "/work/shared/corpora")

SETS = {
    # file stem: (id prefix, reuse unit)
    "prometheus-operator-runbooks": ("heldout18-promop-", "section"),
    "tldr-common": ("heldout18-tldr-", "page"),
}
KINDS = ["exact-token"] * 2 + ["service"] * 2 + ["heading"] * 2 + ["natural"] * 5 + ["paraphrase"] * 5

MD = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")
problems = []


def problem(msg):
    problems.append(msg)


_cache = {}


def headings(path):
    """[(line, level, text)] for one file, line 1-based from the file's first line."""
    if path not in _cache:
        with open(path, encoding="utf-8") as f:
            toks = MD.parse(f.read())
        out = []
        for i, t in enumerate(toks):
            if t.type == "heading_open":
                inline = toks[i + 1]
                text = "".join(c.content for c in (inline.children or [])
                               if c.type in ("text", "code_inline"))
                out.append((t.map[0] + 1, int(t.tag[1]), text))
        _cache[path] = out
    return _cache[path]


def md_files(root):
    for dp, dn, fn in os.walk(root):
        dn.sort()
        for f in sorted(fn):
            if f.endswith(".md"):
                full = os.path.join(dp, f)
                yield os.path.relpath(full, root), full


def section_of(full, line):
    """Line of the nearest heading at or above `line`; 0 if none (front matter / preamble)."""
    best = 0
    for hl, _, _ in headings(full):
        if hl <= line:
            best = hl
        else:
            break
    return best


def sections_holding(root, needle):
    needle = needle.lower()
    found = set()
    for rel, full in md_files(root):
        with open(full, encoding="utf-8") as f:
            for n, text in enumerate(f, 1):
                if needle in text.lower():
                    found.add((rel, section_of(full, n)))
    return found


def earlier_gold(stem):
    used = set()
    for line in open(os.path.join(BENCH, "heldout", stem + ".queries.jsonl"), encoding="utf-8"):
        if line.strip():
            for g in json.loads(line)["gold"]:
                used.add((g["path"], g["line"]))
    return used


def check(stem, prefix, unit):
    root = os.path.join(CORPORA, stem)
    qpath = os.path.join(HERE, stem + ".queries.jsonl")
    rows = [json.loads(line) for line in open(qpath, encoding="utf-8") if line.strip()]
    if len(rows) != len(KINDS):
        problem(f"{stem}: {len(rows)} queries, want {len(KINDS)}")
    used = earlier_gold(stem)
    used_pages = {p for p, _ in used}

    all_heads = {}
    for rel, full in md_files(root):
        for hl, _, text in headings(full):
            all_heads.setdefault(text.strip().lower(), []).append((rel, hl))

    pages_seen = {}
    for i, r in enumerate(rows):
        want_id = f"{prefix}{i + 1:03d}"
        rid = r.get("id")
        if set(r) != {"id", "q", "gold", "kind"}:
            problem(f"{rid}: keys {sorted(r)}")
        if rid != want_id:
            problem(f"{stem} row {i + 1}: id {rid}, want {want_id}")
        if i < len(KINDS) and r.get("kind") != KINDS[i]:
            problem(f"{rid}: kind {r.get('kind')}, want {KINDS[i]}")
        q = r.get("q", "")
        gold = r.get("gold") or []
        if not q.strip() or not gold:
            problem(f"{rid}: empty q or gold")
        gset = set()
        for g in gold:
            full = os.path.join(root, g["path"])
            if not os.path.isfile(full):
                problem(f"{rid}: no file {g['path']}")
                continue
            hs = [h for h in headings(full) if h[0] == g["line"]]
            if not hs:
                problem(f"{rid}: no heading at {g['path']}:{g['line']}")
            elif hs[0][2] != g["heading"]:
                problem(f"{rid}: heading at {g['path']}:{g['line']} is {hs[0][2]!r}, not {g['heading']!r}")
            key = (g["path"], g["line"])
            gset.add(key)
            if unit == "section" and key in used:
                problem(f"{rid}: gold section {key} used by an earlier round")
            if unit == "page" and g["path"] in used_pages:
                problem(f"{rid}: gold page {g['path']} used by an earlier round")
            if g["path"] in pages_seen and pages_seen[g["path"]] != rid:
                problem(f"{rid}: page {g['path']} also carries {pages_seen[g['path']]}")
            pages_seen.setdefault(g["path"], rid)
        if len(gset) != len(gold):
            problem(f"{rid}: duplicate gold entries")

        kind = r.get("kind")
        if kind == "heading":
            hits = all_heads.get(q.strip().lower(), [])
            if len(hits) != 1:
                problem(f"{rid}: heading query {q!r} matches {len(hits)} corpus headings")
            elif set(hits) != gset:
                problem(f"{rid}: heading query {q!r} is at {hits}, gold is {sorted(gset)}")
        if kind == "exact-token":
            holding = sections_holding(root, q)
            if holding != gset:
                problem(f"{rid}: sections holding {q!r}: {sorted(holding)}; gold: {sorted(gset)}")
            if unit == "section":
                for p, ln in holding:
                    if (p, ln) in used:
                        problem(f"{rid}: {q!r} is also in used section {p}:{ln}")
        if unit == "page" and kind in ("natural", "paraphrase"):
            for g in gold:
                if g["heading"].lower() not in q.lower():
                    problem(f"{rid}: query does not name its tool {g['heading']!r}")


for stem, (prefix, unit) in SETS.items():
    check(stem, prefix, unit)

if problems:
    print("\n".join(problems))
    sys.exit(1)
print("OK")
