"""Score a labelled set again with its systems' names swapped for made-up ones.

    python -m bench renamed CORPUS QUERIES --work /tmp/renamed [--map Postgres=Cassandra ...] [--sql VARIANT.sql ...]

The hidden sets the ranking is judged on are "built the same way, with other service and vendor
names". This asks whether a set's score rests on its names: every system name is swapped, the
same way in the file paths, the docs' text and the queries, for a made-up word, and the set is
scored on both indexes side by side (Hit@1 and MRR@10 per kind, and each query whose first hit
moved). A system name is the first word of a file name made of lower-case words
(`payments-worker.md` → payments), for a corpus laid out as `<area>/<system>-<kind>.md`, as the
synthetic opsdocs set is; `--map OLD=NEW` swaps more (a vendor: `--map Stripe=Adyen`). Each
word is swapped as written, capitalised and in upper case, wherever it stands alone or as a part
of a longer name (`payments-worker`, `PAYMENTS_DB_URL`, `PaymentsDown`), and nowhere inside a
word (`payment`, `paymentsx`).
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

import click

from bench.mixed import run_queries, score
from mdfts.build import build_index
from mdfts.discover import discover
from mdfts.evaluate import load_queries, rank_of

SEARCH = Path(__file__).resolve().parent.parent / "queries" / "search.sql"
# (made-up words, two syllables each: no English word, nothing porter shortens; see made_up)
ONSETS = "b d f g k l m n p r t v z".split()
VOWELS = "a o u i".split()


def system_names(root: Path) -> list[str]:
    """The first word of every file name made of lower-case words (`payments-worker.md` →
    payments; README.md names nothing), sorted, each once."""
    names = set()
    for f in discover([root]):
        stem = Path(f.path).name.split(".")[0]
        if re.fullmatch(r"[a-z]+(?:[-_][a-z0-9]+)*", stem):
            names.add(re.split(r"[-_]", stem)[0])
    return sorted(names)


def made_up(n: int, avoid: str) -> list[str]:
    """n words like "dovir", "kamur" (seeded order, so neighbours rarely share a first syllable):
    none of them in `avoid` (the corpus and queries, lower case)."""
    words = [f"{a}{v}{b}{w}r" for a in ONSETS for v in VOWELS for b in ONSETS for w in VOWELS]
    random.Random(0).shuffle(words)
    out = [w for w in words if not re.search(rf"(?<![a-z0-9]){w}(?![a-z0-9])", avoid)][:n]
    if len(out) < n:
        raise click.UsageError(f"only {len(out)} made-up words free for {n} names")
    return out


def swapper(pairs: Iterable[tuple[str, str]]) -> re.Pattern[str]:
    """One pattern matching every form of every old word, as a whole word or a part of a name."""
    forms = sorted({f for old, _ in pairs for f in (old, old.lower(), old.capitalize(), old.upper())},
                   key=len, reverse=True)
    return re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, forms)) + r")(?![a-z0-9])")


def swap(text: str, pattern: re.Pattern[str], new: dict[str, str]) -> str:
    """`text` with each old word replaced by its new word in the same case (lower, Capital, UPPER)."""
    def one(m: re.Match[str]) -> str:
        w = m.group(1)
        n = new[w.lower()]
        return n.upper() if w.isupper() and len(w) > 1 else n.capitalize() if w[:1].isupper() else n
    return pattern.sub(one, text)


def rename(corpus: Path, queries: Path, out: Path,
           extra: Sequence[tuple[str, str]]) -> tuple[Path, Path, dict[str, str]]:
    """Write the renamed corpus and queries under `out`; return them and the word map (old → new)."""
    # (every file, not only the pages: a page's includes are read from the corpus too; hidden
    # ones, a checkout's .git among them, as discover leaves them out)
    texts = {p.relative_to(corpus).as_posix(): p.read_text(encoding="utf-8", errors="surrogateescape")
             for p in sorted(corpus.rglob("*"))
             if p.is_file() and not any(part.startswith(".") for part in p.relative_to(corpus).parts)}
    qtext = queries.read_text(encoding="utf-8")
    avoid = "\n".join([*texts.values(), *texts, qtext]).lower()
    names = [n for n in system_names(corpus) if n not in {o.lower() for o, _ in extra}]
    new = dict(zip(names, made_up(len(names), avoid), strict=True))
    new.update({o.lower(): n.lower() for o, n in extra})
    pattern = swapper(new.items())
    root = out / "corpus"
    shutil.rmtree(root, ignore_errors=True)
    for rel, text in texts.items():
        dest = root / swap(rel, pattern, new)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(swap(text, pattern, new), encoding="utf-8", errors="surrogateescape")
    lines = []
    for q in load_queries(queries):
        q["q"] = swap(q["q"], pattern, new)
        q["gold"] = [{**g, "path": swap(g["path"], pattern, new)} for g in q["gold"]]
        lines.append(json.dumps(q))
    renamed = out / queries.name
    renamed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root, renamed, new


def side_by_side(sets: Sequence[tuple[str, Path, Path]], sqls: Sequence[Path]) -> list[str]:
    """Markdown lines: Hit@1 / MRR@10 per kind, a column per (index, search.sql), and the queries
    whose first hit differs between the first column and each other."""
    cols = []
    for label, db, qfile in sets:
        qs = load_queries(qfile)
        for p in sqls:
            hits = run_queries(db, p.read_text(encoding="utf-8"), [q["q"] for q in qs])
            cols.append((f"{label}, {p.name}", qs, [rank_of(h, q["gold"]) for h, q in zip(hits, qs, strict=True)]))
    qs = cols[0][1]
    lines = ["| kind | n | " + " | ".join(c[0] for c in cols) + " |", "|---|---:|" + "---:|" * len(cols)]
    for kind in ["all", *dict.fromkeys(q["kind"] for q in qs)]:
        sel = [i for i, q in enumerate(qs) if kind in ("all", q["kind"])]
        cells = [score([r[i] for i in sel]) for _, _, r in cols]
        lines.append(f"| {kind} | {len(sel)} | " + " | ".join(f"{a:.3f} / {b:.3f}" for a, b in cells) + " |")
    for label, cqs, ranks in cols[1:]:
        moved = [f"{q['id']} {a} → {b} ({q['q']})" for q, a, b in zip(cqs, cols[0][2], ranks, strict=True) if a != b]
        lines += ["", f"{label}, ranks that differ from {cols[0][0]}: {len(moved) or 'none'}", *moved]
    return lines


def pair(value: str) -> tuple[str, str]:
    old, sep, new = value.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z]+", old) or not re.fullmatch(r"[A-Za-z]+", new):
        raise click.BadParameter(f"{value!r}: want OLD=NEW, each one word of letters")
    return old, new


@click.command()
@click.argument("corpus", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("queries", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for the renamed corpus, its queries and both indexes (rewritten each run).")
@click.option("--map", "extra", multiple=True, metavar="OLD=NEW",
              help="Swap this word too (a vendor's name; repeatable).")
@click.option("--sql", "variants", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A search.sql variant to score next to queries/search.sql (repeatable).")
def main(corpus: Path, queries: Path, work: Path, extra: tuple[str, ...], variants: tuple[Path, ...]) -> None:
    """Score QUERIES over CORPUS and over a copy whose system names are made up, side by side."""
    work.mkdir(parents=True, exist_ok=True)
    root, renamed, new = rename(corpus, queries, work, [pair(e) for e in extra])
    if not new:
        raise click.UsageError(f"{corpus}: no file name names a system (<system>-<kind>.md), and no --map")
    click.echo(f"{len(new)} names swapped: " + ", ".join(f"{o} → {n}" for o, n in sorted(new.items())) + "\n")
    dbs = []
    for label, src in (("as written", corpus), ("renamed", root)):
        db = work / f"{label.replace(' ', '-')}.db"
        db.unlink(missing_ok=True)
        build_index([src], db, workers=1)
        dbs.append((label, db))
    sets = [(label, db, q) for (label, db), q in zip(dbs, (queries, renamed), strict=True)]
    click.echo("\n".join(side_by_side(sets, [SEARCH, *variants])))
