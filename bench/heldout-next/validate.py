#!/usr/bin/env python3
"""Check the round-18 held-out query files in this folder.

Run with a Python that has markdown-it-py and mdit-py-plugins, e.g.
    /work/main/.venv/bin/python bench/heldout-next/validate.py

Checks, for each set:
- 16 queries, ids heldout18-<short>-001..016, kinds in the order
  exact-token 2, service 2, heading 2, natural 5, paraphrase 5;
- every gold path exists, and a heading starts at gold line with exactly the gold heading text
  (markdown-it-py CommonMark parse with front matter and tables; line = map[0] + 1);
- no gold (path, line) is used by an earlier round (only the gold fields of
  bench/heldout/<set>.queries.jsonl are read);
- heading queries match exactly one heading in the corpus (case-insensitive), and it is the gold;
- exact-token gold is exactly the set of sections whose text holds the string
  (case-insensitive, line by line like grep -i -F; each hit maps to the nearest heading above it);
- govuk: one page per query.
Prints OK when everything holds, else the problems and exits 1.
"""
import glob
import json
import os
import sys

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
CORPORA = "/work/shared/corpora"
SETS = [("govuk-developer-docs", "govuk"), ("openshift-runbooks", "openshift")]
KINDS = ["exact-token"] * 2 + ["service"] * 2 + ["heading"] * 2 + ["natural"] * 5 + ["paraphrase"] * 5

md = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")


def plain(inline):
    out = []
    for ch in inline.children or []:
        if ch.type in ("text", "code_inline"):
            out.append(ch.content)
        elif ch.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return "".join(out)


_cache = {}


def headings(path):
    """[(line, level, text)] for one file."""
    if path not in _cache:
        with open(path, encoding="utf-8") as f:
            toks = md.parse(f.read())
        hs = []
        for i, t in enumerate(toks):
            if t.type == "heading_open":
                hs.append((t.map[0] + 1, int(t.tag[1]), plain(toks[i + 1])))
        _cache[path] = hs
    return _cache[path]


def norm(s):
    return " ".join(s.split()).lower()


def corpus_files(root):
    return sorted(glob.glob(os.path.join(root, "**", "*.md"), recursive=True))


def sections_holding(root, needle):
    """Set of (relpath, heading line) whose text holds needle, case-insensitively."""
    needle = needle.lower()
    found = set()
    for p in corpus_files(root):
        with open(p, encoding="utf-8") as f:
            lines = f.read().split("\n")
        starts = [ln for ln, _, _ in headings(p)]
        for i, line in enumerate(lines, 1):
            if needle in line.lower():
                above = [s for s in starts if s <= i]
                rel = os.path.relpath(p, root)
                found.add((rel, above[-1] if above else 0))
    return found


def main():
    problems = []
    for corpus, short in SETS:
        root = os.path.join(CORPORA, corpus)
        qfile = os.path.join(HERE, corpus + ".queries.jsonl")
        with open(qfile, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        used = set()
        with open(os.path.join(BENCH, "heldout", corpus + ".queries.jsonl"), encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    for g in json.loads(line)["gold"]:
                        used.add((g["path"], g["line"]))
        all_heads = []
        for p in corpus_files(root):
            rel = os.path.relpath(p, root)
            all_heads += [(rel, ln, h) for ln, _, h in headings(p)]

        if len(rows) != 16:
            problems.append(f"{corpus}: {len(rows)} queries, want 16")
        pages = []
        for n, r in enumerate(rows, 1):
            want_id = f"heldout18-{short}-{n:03d}"
            rid = r.get("id")
            if set(r) != {"id", "q", "gold", "kind"}:
                problems.append(f"{rid}: keys {sorted(r)}")
            if rid != want_id:
                problems.append(f"{rid}: id, want {want_id}")
            if n <= len(KINDS) and r.get("kind") != KINDS[n - 1]:
                problems.append(f"{rid}: kind {r.get('kind')}, want {KINDS[n - 1]}")
            if not r.get("q", "").strip():
                problems.append(f"{rid}: empty q")
            gold = r.get("gold") or []
            if not gold:
                problems.append(f"{rid}: no gold")
            for g in gold:
                path = os.path.join(root, g["path"])
                if not os.path.isfile(path):
                    problems.append(f"{rid}: missing path {g['path']}")
                    continue
                hs = {ln: h for ln, _, h in headings(path)}
                if g["line"] not in hs:
                    problems.append(f"{rid}: no heading at {g['path']}:{g['line']}")
                elif hs[g["line"]] != g["heading"]:
                    problems.append(f"{rid}: heading at {g['path']}:{g['line']} is {hs[g['line']]!r}, "
                                    f"gold says {g['heading']!r}")
                if (g["path"], g["line"]) in used:
                    problems.append(f"{rid}: gold {g['path']}:{g['line']} used by an earlier round")
            pages.append({g["path"] for g in gold})
            if r.get("kind") == "heading":
                hits = [(p, ln) for p, ln, h in all_heads if norm(h) == norm(r["q"])]
                if len(hits) != 1:
                    problems.append(f"{rid}: heading query matches {len(hits)} headings: {hits}")
                elif {(g["path"], g["line"]) for g in gold} != set(hits):
                    problems.append(f"{rid}: heading query matches {hits}, not the gold")
            if r.get("kind") == "exact-token":
                holding = sections_holding(root, r["q"])
                goldset = {(g["path"], g["line"]) for g in gold}
                if holding != goldset:
                    problems.append(f"{rid}: string held by {sorted(holding)}, gold is {sorted(goldset)}")
        if short == "govuk":
            seen = {}
            for n, ps in enumerate(pages, 1):
                for p in ps:
                    if p in seen and seen[p] != n:
                        problems.append(f"heldout18-govuk-{n:03d}: page {p} also used by query {seen[p]:03d}")
                    seen.setdefault(p, n)
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
