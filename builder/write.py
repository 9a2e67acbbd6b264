"""Documents → one SQLite file: schema, rows, FTS5, meta and queries, written atomically."""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import time
from dataclasses import dataclass
from json.encoder import encode_basestring as _quote  # what JSONEncoder(ensure_ascii=False) quotes with
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, cast

from mdfts.acronyms import defined_json
from mdfts.artifact import APPLICATION_ID, KIND_COLUMNS, KINDS, SCHEMA_VERSION, SOURCES, TOKENIZER, load_sql
from mdfts.errors import MdftsError
from mdfts.tokens import normalize
from mdfts.words import file_words, heading_parts

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from mdfts.sections import Document, Section
    from mdfts.workers import Aside

# A big document's rows go to SQLite in batches of about this much body text (or this many
# exact tokens), so memory holds one batch, not the whole document's rows.
_BATCH_CHARS = 1 << 20
_BATCH_TOKENS = 20_000

# The build file's page size, 64 KiB for a build of many files: VACUUM INTO copies the rows into
# fresh b-trees of the index's pages, so the index is the same bytes whatever pages the build
# file had, and inserting into 64 KiB ones (fewer b-tree pages to split and write) cost ~8% less
# write CPU. Not for a few files: every table and index takes a page at least (~1.5 MB of build
# file for a tiny index, which then no longer fits where its index would).
_PAGE_SIZE = 4096
_BUILD_PAGE_SIZE = 65536
BIG_PAGES_FROM = 256  # files

# The index's page sizes: VACUUM INTO writes it in each, and the smallest file is kept (the first
# on a tie). A b-tree page leaves what its next row does not fit unused, so which size wastes
# least depends on the rows, not on the docs' total: sections of ~2.5 KB go one to a 4 KiB page
# and three to an 8 KiB one, and every table and index takes a page at least (the sample: +41% at
# 16 KiB). tldr-common is smallest at 8 KiB (-3.6%), the 20 MB bench at 16 KiB, most docs at 4.
# 1-2 KiB pages were smaller for some (argo-cd-docs -2.6% at 1 KiB) but cost searches +3% CPU;
# 32 KiB saved 0.3% at 100k sections only. VACUUM INTO writes the same bytes for the same rows,
# so the choice is reproducible; the extra VACUUMs cost 1.5-3% of a build's CPU (docs/schema.md).
_INDEX_PAGE_SIZES = (4096, 8192, 16384)

# sections' stored columns; the view `sections_full` adds title, trail and file_words.
# (anchor, prev_id, next_id and chars are generated from these: see schema.sql)
_SECTION_COLUMNS = (
    "id, document_id, path, ordinal, level, heading, start_line, end_line, "
    "parent_id, body, heading_parts, other_anchor, is_last, "
    + ", ".join(f"{c}_packed" for c in KIND_COLUMNS.values()) + ", ancestors_packed"
)
_DOCUMENT_COLUMNS = "id, path, title, front_matter, sha256_bytes, bytes, lines, sections, rows_sha256, file_words"
# token_rows' kind and source: the position of the name (the view `tokens` spells them out).
_KIND_CODE: dict[str, int] = {k: i for i, k in enumerate(KINDS)}
_SOURCE_CODE: dict[str, int] = {k: i for i, k in enumerate(SOURCES)}


_SHIFTED = {"id", "parent_id"}  # section ids, shifted by their document's delta when copied
# The documents reuse() took since the last copy (new_id from :since on), with their sections,
# copied inside SQLite in one statement each: no old row passes through Python.
_COPY_SECTIONS = (
    f"insert into sections ({_SECTION_COLUMNS}) select "
    + ", ".join(
        f"s.{c} + r.delta" if c in _SHIFTED else "r.new_id" if c == "document_id" else f"s.{c}"
        for c in (c.strip() for c in _SECTION_COLUMNS.split(","))
    )
    + " from _mdfts_reuse as r join prev.sections as s on s.document_id = r.old_id where r.new_id >= :since"
)
# last_commit is left out: provenance belongs to this build, not to the one that wrote the rows.
_COPY_DOCUMENTS = (
    f"insert into documents ({_DOCUMENT_COLUMNS}) "
    "select r.new_id, d.path, d.title, d.front_matter, d.sha256_bytes, d.bytes, d.lines, d.sections, "
    "d.rows_sha256, d.file_words from _mdfts_reuse as r join prev.documents as d on d.id = r.old_id "
    "where r.new_id >= :since"
)
# Every document of the previous index, what reuse() looks a file up in (read once, at its first call).
_PREVIOUS_DOCUMENTS = (
    "select d.path, d.sha256_bytes, d.id, d.sections, "
    "(select min(s.id) from prev.sections as s where s.document_id = d.id) from prev.documents as d"
)


# One encoder for every row: json.dumps(..., ensure_ascii=False) builds a new one per call.
_to_json = json.JSONEncoder(ensure_ascii=False).encode


def _list_encoder() -> Callable[[list[object]], str]:
    """_to_json for a list, without JSONEncoder.encode's set-up of the C encoder on every call
    (a third of its cost for a section's digest record): the same C encoder, made once, with
    the same settings. No check for a list that holds itself (the digest's never do)."""
    import json.encoder

    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)  # None where CPython's _json is missing
    if c_make_encoder is None:
        return _to_json
    encoder = json.JSONEncoder(ensure_ascii=False)
    make = c_make_encoder(None, encoder.default, _quote, None, encoder.key_separator, encoder.item_separator,
                          False, False, True)
    return lambda values: "".join(make(values, 0))


_list_to_json = _list_encoder()


def _json_strings(items: Iterable[str]) -> str:
    """_to_json(list(items)) for strings, without the encoder's set-up on every call (a few
    times faster for the short arrays most rows hold): the same function quotes each string."""
    return "[" + ", ".join(map(_quote, items)) + "]"


# One document's rows without ids (they depend on the documents before it): what a worker
# process hands the writer. Plain tuples pickle several times faster than the dataclasses.
# (path, sha256, documents values after id (rows_sha256 made where the rows are, in the worker
# when there are workers), [(ordinal, parent ordinal, sections values but the ids, in
# _INSERT_SECTION's order)], [(norm, ordinal, written, kind_source)]: token_stage's values,
# the ordinal for the section id, [(ordinal, included text, its files as a JSON array)]:
# section_includes' rows, the few sections with include directives)
SectionRow = tuple[int, "int | None", tuple[object, ...]]
TokenRow = tuple[str, int, str, int]
IncludeRow = tuple[int, str, str]
DocumentRows = tuple[str, str, tuple[object, ...], list[SectionRow], list[TokenRow], list[IncludeRow]]
# The ids last: add_rows() appends them to the prepared values (the stored row is in the
# table's column order whatever the statement's).
_SECTION_VALUES = (
    "path, ordinal, level, heading, start_line, end_line, body, heading_parts, other_anchor, is_last, "
    + ", ".join(f"{c}_packed" for c in KIND_COLUMNS.values()) + ", ancestors_packed"
)
_N_SECTION_VALUES = len(_SECTION_VALUES.split(","))
_INSERT_SECTION = (
    f"insert into sections ({_SECTION_VALUES}, id, document_id, parent_id) "
    f"values ({', '.join('?' * (_N_SECTION_VALUES + 3))})"
)
_INSERT_INCLUDED = "insert into section_includes (section_id, text, files) values (?, ?, ?)"
_INSERT_DOCUMENT = f"insert into documents ({_DOCUMENT_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
# The exact tokens as the build collects them, by their lookup form's text: token_rows keys
# them by the form's number in sorted order, known once every document is in (finish()).
_TOKEN_STAGE = (
    "create table token_stage (norm text not null, section_id integer not null, written text not null, "
    "kind_source integer not null, primary key (norm, section_id, written, kind_source)) without rowid"
)
# A token can normalise to the same form twice in a section (`X.` and `X`): keep one row.
_INSERT_TOKEN = "insert or ignore into token_stage values (?, ?, ?, ?)"
# token_stage → token_norms and token_rows: ids in norm order (so a full build and one that
# reused rows number the forms alike), rows inserted in key order.
_NUMBER_TOKENS = (
    "insert into token_norms select norm, row_number() over (order by norm) from "
    "(select distinct norm from token_stage)",
    "insert into token_rows select n.id, t.section_id, t.written, t.kind_source "
    "from token_stage as t join token_norms as n on n.norm = t.norm",
    "drop table token_stage",
)
# The same with the rows of reused documents (_mdfts_reuse_sections: old section id → shift):
# the forms of token_stage and of the reused rows (one seek a form of the previous index: its
# first row is nearly always a reused one), then the reused rows, each with its form's number.
_NUMBER_WITH_REUSED = (
    "insert into token_norms select norm, row_number() over (order by norm) from "
    "(select norm from token_stage union select n.norm from prev.token_norms as n where exists "
    "(select 1 from prev.token_rows as t join _mdfts_reuse_sections as m on m.old_id = t.section_id "
    "where t.token_id = n.id))",
    "insert into token_rows select k.id, t.section_id + m.delta, t.written, t.kind_source "
    "from prev.token_norms as n join token_norms as k on k.norm = n.norm "
    "join prev.token_rows as t on t.token_id = n.id join _mdfts_reuse_sections as m on m.old_id = t.section_id",
)


def _stored_document(doc_id: int, values: tuple[object, ...]) -> tuple[object, ...]:
    """documents' values from a prepared row: the file's sha256 as its 32 bytes (the generated
    column sha256 spells them in hex again)."""
    path, title, front_matter, sha256, *rest = values
    assert isinstance(sha256, str)
    return (doc_id, path, title, front_matter, bytes.fromhex(sha256), *rest)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _anchor_rule(heading: str) -> str:
    """What sections.anchor gives when other_anchor is NULL: SQLite's lower(replace(heading, ' ',
    '-')) (lower() folds ASCII letters only)."""
    return heading.replace(" ", "-").translate(_ASCII_LOWER)


def _ancestors(trail: str) -> str | None:
    """sections.ancestors_packed from the trail's JSON text: the same array without its last item
    (the section's own heading), packed as the kinds are; NULL when that leaves none. The view
    sections_full splices the heading back."""
    cut = trail.rfind(', "')  # the encoder's item separator: a heading's own ", " is escaped as \"
    return trail[2:cut - 1].replace('", "', "\x1f") if cut > 0 else None


# kind_source by (kind, source), and the digest's quoted tail of a token record
_KIND_SOURCE: dict[tuple[str, str], int] = {
    (k, src): _KIND_CODE[k] * 5 + _SOURCE_CODE[src] for k in KINDS for src in SOURCES
}
_QUOTED_KIND_SOURCE: dict[tuple[str, str], str] = {
    (k, src): f"{_quote(k)}, {_quote(src)}]" for k in KINDS for src in SOURCES
}
_KIND_POSITION: dict[str, int] = {k: i for i, k in enumerate(KIND_COLUMNS)}


def _section_values(path: str, words: str, s: Section, is_last: bool,
                    token_rows: list[TokenRow]) -> tuple[tuple[object, ...], str]:
    """One section's values for _INSERT_SECTION (but the ids) and its text in the rows digest;
    its exact tokens go to `token_rows`.

    token_stage's `written` is '' when the token is its lookup form and '^' when it is that form
    in ASCII capitals (SQLite's upper() gives it back). Each (norm, written, kind) once: source
    shares its column with kind, so the table's key no longer drops a second source itself; the
    first is kept."""
    o = s.ordinal
    by_kind: dict[str, list[str]] = {}  # only the kinds the section has: most have two or three
    rows: list[TokenRow] = []
    records: list[tuple[str, str, str, str]] = []  # the digest's: (norm, token, kind, source)
    kind_source = _KIND_SOURCE
    for t in s.tokens:
        token, kind, source = t.token, t.kind, t.source
        by_kind.setdefault(kind, []).append(token)
        norm = normalize(token)
        records.append((norm, token, kind, source))
        if token == norm:
            written = ""
        elif token.isascii() and token == norm.upper():
            written = "^"
        else:
            written = token
        rows.append((norm, o, written, kind_source[kind, source]))
    # NULL, not "[]", for a kind a section has none of (most sections, for most kinds): ~0.09x
    # of the corpus bytes on the sample, and json_each(NULL) is empty like json_each('[]').
    packed: list[str | None] = [None] * len(_KIND_POSITION)
    arrays: list[str | None] = [None] * len(_KIND_POSITION)  # the JSON arrays the digest spells
    repeats = False
    for kind_of, items in by_kind.items():
        if len(items) > 1:
            unique = set(items)
            repeats = repeats or len(unique) < len(items)
            items = sorted(unique)
        array = _json_strings(items)
        # the array without its brackets and the quotes around each string, char(31) between
        # them (the generated <kind> column spells the JSON back: a string's own quotes are
        # escaped, so '", "' only ever separates two)
        arrays[_KIND_POSITION[kind_of]] = array
        packed[_KIND_POSITION[kind_of]] = array[2:-2].replace('", "', "\x1f")
    # (norm, written) spells the token back, so a (norm, written, kind) repeats exactly when a
    # kind's items do: the splitter gives each token and kind once; a Section made by hand may not
    if repeats:
        kept: dict[tuple[str, str, str], TokenRow] = {}
        for row, record in zip(rows, records, strict=True):
            kept.setdefault((row[0], row[2], record[2]), row)
        rows = list(kept.values())
    token_rows += rows
    body, heading, anchor = s.body, s.heading, s.anchor
    trail = _json_strings(s.trail)
    parts = heading_parts(heading)
    values = (path, o, s.level, heading, s.start_line, s.end_line, body, parts,
              None if anchor == _anchor_rule(heading) else anchor, int(is_last), *packed, _ancestors(trail))
    fields: list[object] = [path, s.level, heading, trail, anchor, s.start_line, s.end_line, s.parent,
                            body, len(body), words, parts, *arrays]
    if s.included is not None:  # (a digest of a section without it stays as it was)
        fields += [s.included, _json_strings(s.included_files)]
    text = _section_text(o, is_last, fields, records)
    return values, text


def _section_text(o: int, is_last: bool, values: list[object], tokens: list[tuple[str, str, str, str]]) -> str:
    """A section's text in the rows digest: its record, then one a token. `values`: path, level,
    heading, trail, anchor, start_line, end_line, parent ordinal, then body on; `tokens`: (norm,
    token, kind, source), each (norm, token, kind) once. Strings only: TypeError else (a row edited
    in a previous index)."""
    quoted = _QUOTED_KIND_SOURCE
    return "\n".join([
        _list_to_json([o, o - 1 if o else None, None if is_last else o + 1, *values]),
        # One record a token: [norm, token, kind, source], quoted the way _to_json quotes them, in
        # (norm, token, kind) order
        *[f"[{_quote(n)}, {_quote(t)}, " + (quoted.get((k, src)) or f"{_quote(k)}, {_quote(src)}]")
          for n, t, k, src in sorted(tokens)],
    ]) + "\n"


class RowsMismatch(MdftsError):
    """The previous index cannot be reused: a row differs from its digest, or it cannot be read."""


def _record(values: list[object]) -> bytes:
    return (_list_to_json(values) + "\n").encode("utf-8", "surrogatepass")


class _RowsDigest:
    """sha256 of one document's rows as a full build writes them, ids made relative (ordinals), so
    the same document gives the same digest wherever its rows sit: documents.rows_sha256, which
    `build --previous` checks before it copies rows instead of parsing the file."""

    def __init__(self) -> None:
        import hashlib  # here, not at the top: see _QUERY_PATH_NOTE

        self.h = hashlib.sha256()

    def add(self, text: str) -> None:
        """Sections' records as one text (one update: the same bytes as one a record)."""
        self.h.update(text.encode("utf-8", "surrogatepass"))

    def document(self, doc_values: tuple[object, ...]) -> bytes:
        self.h.update(_record(["document", *doc_values]))
        return self.h.digest()  # 32 bytes: hex text would cost 32 more a document (0.05x on tldr-common)


_KIND_SQL = ", ".join(f"s.{c}" for c in KIND_COLUMNS.values())
# What _RowsDigest hashes, read back from the previous index (ordinals from ids), per reused document.
_REUSED_DOCUMENTS = (
    "select d.id, d.path, d.title, d.front_matter, d.sha256, d.bytes, d.lines, d.sections, d.rows_sha256 "
    "from prev.documents as d join _mdfts_reuse as r on r.old_id = d.id order by d.id"
)
# Ordinals as ids less the document's first section id: _verify_rows checks that id less first
# is the ordinal in every row, so the ids of a document are contiguous and id - first names the
# same section a lookup of its ordinal would (at half the cost: no subquery a row).
_REUSED_SECTIONS = (
    "select s.document_id, s.id, s.ordinal, s.id - r.old_first, s.prev_id - r.old_first, "
    "s.next_id - r.old_first, s.path, s.level, s.heading, s.trail, s.anchor, s.start_line, s.end_line, "
    "s.parent_id - r.old_first, "
    f"s.body, s.chars, s.file_words, s.heading_parts, {_KIND_SQL}, s.included, s.included_files, "
    "s.title = d.title "
    "from prev.sections_full as s join _mdfts_reuse as r on r.old_id = s.document_id "
    "join prev.documents as d on d.id = s.document_id order by s.document_id, s.ordinal"
)
# Every token of a reused section, by old section id. _mdfts_reuse_sections is a small table
# keyed by that id; joining prev.sections instead reads the wide section rows, bodies and all,
# once a token (4x slower on the bench corpus). A section's tokens are sorted in Python.
_REUSED_TOKENS = (
    "select t.section_id, t.norm, t.token, t.kind, t.source from prev.tokens as t "
    "join _mdfts_reuse_sections as m on m.old_id = t.section_id order by t.section_id"
)


def _map_reused_sections(db: sqlite3.Connection) -> None:
    """_mdfts_reuse_sections from _mdfts_reuse: old section id → the id shift of its document,
    what the token check and the token copy join on."""
    db.execute("create temp table _mdfts_reuse_sections (old_id integer primary key, delta integer not null)")
    db.execute(
        "insert into _mdfts_reuse_sections select s.id, r.delta from _mdfts_reuse as r "
        "join prev.sections as s on s.document_id = r.old_id"
    )


def _verify_rows(db: sqlite3.Connection) -> None:
    """Check every reused document's rows (prev, _mdfts_reuse, _mdfts_reuse_sections) against the
    digest stored with it, in one pass over its sections and one over its tokens; RowsMismatch if
    any differs (rows edited in the old file were copied, and the result passed integrity_check)
    or cannot be read."""
    path = "?"
    try:
        sections = db.execute(_REUSED_SECTIONS)
        tokens = db.execute(_REUSED_TOKENS)
        section = next(sections, None)
        token = next(tokens, None)
        for doc_id, path, *doc_values, stored in db.execute(_REUSED_DOCUMENTS).fetchall():
            digest = _RowsDigest()
            while section is not None and section[0] == doc_id:
                _, sid, o, id_rel, prev_o, next_o, *values, included, files, title_ok = section
                if included is not None:  # (as _section_values spells them)
                    values += [included, files]
                toks: list[tuple[str, str, str, str]] = []
                # Every token here belongs to a reused section, and sections come in id order
                # (checked by id_rel below), so a token before this section's id is one no
                # section took: a row edited in the old file.
                if token is not None and token[0] < sid:
                    raise RowsMismatch(f"the rows of {path} do not match their digest")
                while token is not None and token[0] == sid:
                    toks.append(token[1:])  # norm, token, kind, source
                    token = next(tokens, None)
                if id_rel != o or prev_o != (o - 1 if o else None) or not title_ok:
                    raise RowsMismatch(f"the rows of {path} do not match their digest")
                section = next(sections, None)
                digest.add(_section_text(o, next_o is None, values, toks))
                if next_o is not None and next_o != o + 1:
                    raise RowsMismatch(f"the rows of {path} do not match their digest")
            if digest.document((path, *doc_values)) != stored:
                raise RowsMismatch(f"the rows of {path} do not match their digest")
        if token is not None:
            raise RowsMismatch(f"the rows of {path} do not match their digest")
    except sqlite3.DatabaseError as err:
        raise RowsMismatch(f"cannot read it ({err})") from None
    except (TypeError, ValueError):  # a value no full build writes (a blob): JSON cannot spell it
        raise RowsMismatch(f"the rows of {path} do not match their digest") from None


def _verify_previous(uri: str, reuse: list[tuple[int, int, int]]) -> str | None:
    """_verify_rows on a connection of its own (in a worker process, beside the build): the
    reason the previous index at `uri` cannot be reused, or None."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        db.execute("attach database ? as prev", (uri,))
        db.execute("create temp table _mdfts_reuse (old_id integer primary key, delta integer not null, "
                   "old_first integer)")
        db.executemany("insert into _mdfts_reuse values (?, ?, ?)", reuse)
        _map_reused_sections(db)
        _verify_rows(db)
    except RowsMismatch as err:
        return str(err)
    except sqlite3.DatabaseError as err:
        return f"cannot read it ({err})"
    finally:
        db.close()
    return None


def prepare_rows(doc: Document) -> DocumentRows:
    """A document's rows, ready for IndexWriter.add_rows(); the ids are given out there."""
    section_rows: list[SectionRow] = []
    token_rows: list[TokenRow] = []
    texts: list[str] = []
    path = doc.path
    words = file_words(path)
    last = len(doc.sections) - 1
    for i, s in enumerate(doc.sections):
        values, text = _section_values(path, words, s, i == last, token_rows)
        section_rows.append((s.ordinal, s.parent, values))
        texts.append(text)
    digest = _RowsDigest()
    digest.add("".join(texts))
    doc_values = _document_values(doc)
    included = [(s.ordinal, s.included, _json_strings(s.included_files))
                for s in doc.sections if s.included is not None]
    return doc.path, doc.sha256, (*doc_values, digest.document(doc_values), words), section_rows, token_rows, included


def _document_values(doc: Document) -> tuple[object, ...]:
    return (doc.path, doc.title, doc.front_matter_json, doc.sha256, doc.size, doc.lines, doc.n_sections)


# While the rows go in, sections is declared with its stored columns only: SQLite computes every
# generated column of each row it inserts (text's four replace()s over the body, the kinds'
# arrays, ...), about half of the sections insert's CPU. A virtual column takes no place in the
# stored record, so the rows are the same bytes either way; finish() puts the real definition back
# before anything reads the table. This is SQLite's documented procedure for a schema change that
# leaves the file's content as it is (https://sqlite.org/lang_altertable.html#otheralter).
LOAD_STORED_ONLY = True


def _stored_columns_sql(db: sqlite3.Connection, table: str) -> str:
    """CREATE TABLE `table` with its stored columns only (types, primary key and not null kept)."""
    columns = [
        f"{name} {type_}" + (" primary key" if pk else "") + (" not null" if notnull else "")
        for _cid, name, type_, notnull, _default, pk, hidden in db.execute(f"pragma table_xinfo({table})")
        if hidden == 0
    ]
    return f"CREATE TABLE {table} ({', '.join(columns)})"


def _set_table_sql(db: sqlite3.Connection, table: str, sql: str) -> str:
    """Replace the CREATE TABLE text of `table` (same stored columns, in the same order) and add
    one to the schema cookie, so SQLite reads the schema again; returns the text it had."""
    (old,) = db.execute("select sql from sqlite_schema where type = 'table' and name = ?", (table,)).fetchone()
    db.execute("pragma writable_schema = on")
    db.execute("update sqlite_schema set sql = ? where type = 'table' and name = ?", (sql, table))
    db.execute("pragma writable_schema = off")
    db.execute(f"pragma schema_version = {db.execute('pragma schema_version').fetchone()[0] + 1}")
    return cast(str, old)


def _ln(x: float | None) -> float | None:
    return math.log(x) if x is not None and x > 0 else None


def temp_paths(out: Path) -> tuple[Path, Path]:
    """The two temp files of a build of `out`, beside it: rows go to the first, VACUUM INTO the second."""
    stem = f".{out.name}.{os.getpid()}"
    return out.with_name(stem + ".build.tmp"), out.with_name(stem + ".tmp")


# A build's own files beside `out`: .NAME.PID.build.tmp (rows), .NAME.PID.tmp (VACUUM INTO),
# .NAME.PID.try.tmp (VACUUM INTO in another page size, kept when smaller), and
# the -journal SQLite keeps beside either while it writes (VACUUM INTO makes one for its target).
_SIDE_FILES = ("", "-journal", "-wal", "-shm")


def _temp_name(out: Path) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(out.name)}\.(\d+)\.(?:build\.|try\.)?tmp(?:-journal|-wal|-shm)?")


def remove_stale_temps(out: Path) -> None:
    """Delete temp files (and their journals) left by builds of `out` whose process is gone
    (killed with SIGKILL)."""
    try:
        candidates = list(out.parent.glob(f".{out.name}.*"))
    except OSError:
        return
    pattern = _temp_name(out)
    for tmp in candidates:
        m = pattern.fullmatch(tmp.name)
        if m is None or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
        except ProcessLookupError:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


def add_time(timings: dict[str, float] | None, stage: str, started: float) -> float:
    """Add the CPU seconds since `started` to `timings[stage]`; returns now, the next stage's start.
    With `timings` None (every build but `make bench`'s) it does nothing and returns 0. CPU time,
    not wall time: on a shared machine it says where the work goes, not who else was running."""
    if timings is None:
        return 0.0
    now = time.process_time()
    if stage:
        timings[stage] = timings.get(stage, 0.0) + now - started
    return now


@dataclass(frozen=True, slots=True)
class WriteStats:
    documents: int
    sections: int
    tokens: int
    bytes: int  # of the finished file


class IndexWriter:
    """Streams documents into a temp database beside `out`; `finish()` renames it into place.

    Leaving the `with` block without `finish()` (an error, Ctrl-C) deletes the temp files and
    leaves any existing `out` untouched.
    """

    def __init__(self, out: Path, timings: dict[str, float] | None = None, files: int = 0) -> None:
        """:param files: how many documents the build expects (a hint: BIG_PAGES_FROM or more
        writes the rows into big pages first)."""
        self.out = out
        self.page_size = _BUILD_PAGE_SIZE if files >= BIG_PAGES_FROM else _PAGE_SIZE
        self.timings = timings  # seconds per finishing step, added to when given (for `make bench`)
        if out.exists() and out.is_dir():
            raise MdftsError(f"{out}: is a folder, not a file")
        if out.parent.exists() and not out.parent.is_dir():
            raise MdftsError(f"{out.parent}: not a folder, cannot hold the output")
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise MdftsError(f"{out.parent}: cannot create the output folder: {err.strerror or err}") from None
        if not os.access(out.parent, os.W_OK):
            raise MdftsError(f"{out.parent}: folder is not writable")
        remove_stale_temps(out)
        self.build_tmp, self.final_tmp = temp_paths(out)
        self.try_tmp = self.final_tmp.with_suffix(".try.tmp")  # .NAME.PID.try.tmp
        try:
            self._open()
        except BaseException:  # a full disk at the first write: leave no empty temp file behind
            self.abort()
            raise
        self.next_doc_id = 1
        self.next_section_id = 1
        self.n_tokens = 0
        import hashlib  # OpenSSL: loaded by a build only

        self.digest = hashlib.sha256()
        self.reusing = False  # attach_previous() was called
        self.previous_uri = ""  # its URI, read-only and immutable
        self._doc_open = False  # between start_document() and end_document()
        self.reused = 0
        # add_rows()'s rows not inserted yet (see _flush_pending), and their body characters.
        self._pending_documents: list[tuple[object, ...]] = []
        self._pending_sections: list[tuple[object, ...]] = []
        self._pending_tokens: list[tuple[object, ...]] = []
        self._pending_included: list[IncludeRow] = []
        self._pending_chars = 0
        # reuse()'s documents not copied yet: (old id, id shift, old first section id, new id)
        self._pending_reuse: list[tuple[int, int, int | None, int]] = []
        self._numbered = False  # token_norms and token_rows written (_number_with_reused_tokens)
        # path → (sha256 bytes, old id, sections, old first section id): _PREVIOUS_DOCUMENTS' rows
        self._previous: dict[str, tuple[bytes, int, int, int | None]] | None = None

    def _open(self) -> None:
        for p in (self.build_tmp, self.final_tmp, self.try_tmp):
            p.unlink(missing_ok=True)
        try:
            # URI filenames on, for attach_previous()'s read-only, immutable ATTACH.
            self.db = sqlite3.connect(self.build_tmp.resolve().as_uri(), uri=True, isolation_level=None)
        except sqlite3.Error as err:
            raise MdftsError(f"{self.out}: cannot create the index: {err}") from None
        db = self.db
        db.create_function("mdfts_ln", 1, _ln, deterministic=True)
        db.create_function("mdfts_acronyms", 1, defined_json, deterministic=True)
        # A 4 MiB page cache and on-disk temp files keep build memory O(largest file), not
        # O(corpus): a 128 MiB cache made peak RSS grow with the corpus (44 -> 149 MB from 1x to 8x
        # of 1.9 MB, docs/bad-input.md; 198 MB for 20 MB of markdown with in-memory temp files).
        # The CPU time is within a few percent: the OS page cache serves the extra reads.
        for pragma in (
            f"page_size = {self.page_size}", "auto_vacuum = NONE", "encoding = 'UTF-8'",
            "journal_mode = OFF", "synchronous = OFF", "cache_size = -4096", "temp_store = DEFAULT",
            f"application_id = {APPLICATION_ID}", f"user_version = {SCHEMA_VERSION}",
        ):
            db.execute(f"pragma {pragma}")
        db.executescript(load_sql("schema"))
        db.execute(_TOKEN_STAGE)
        self._sections_sql = (_set_table_sql(db, "sections", _stored_columns_sql(db, "sections"))
                              if LOAD_STORED_ONLY else None)
        db.execute("begin")

    def __enter__(self) -> IndexWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None:
            self.abort()

    def abort(self) -> None:
        db = getattr(self, "db", None)  # None when connect() itself failed
        if db is not None:
            try:
                db.close()
            except sqlite3.Error:
                pass
        for p in (self.build_tmp, self.final_tmp, self.try_tmp):
            for side in _SIDE_FILES:
                p.with_name(p.name + side).unlink(missing_ok=True)

    def _try_page_sizes(self) -> None:
        """Rewrite final_tmp in each other size of _INDEX_PAGE_SIZES that could be smaller, keeping
        the smallest file. Each is written from final_tmp, after the build file is gone: one
        index's worth of disk more at most."""
        best = self.final_tmp.stat().st_size
        conn = sqlite3.connect(f"{self.final_tmp.resolve().as_uri()}?mode=ro", uri=True)
        try:
            # every b-tree takes a page at least (page 1 is sqlite_schema's): a bound, not a guess
            trees = 1 + conn.execute("select count(*) from sqlite_schema where rootpage > 0").fetchone()[0]
            for size in _INDEX_PAGE_SIZES[1:]:
                if trees * size >= best:
                    continue
                conn.execute(f"pragma page_size = {size}")
                conn.execute("vacuum into ?", (str(self.try_tmp),))
                if self.try_tmp.stat().st_size >= best:
                    self.try_tmp.unlink()
                    continue
                best = self.try_tmp.stat().st_size
                conn.close()
                os.replace(self.try_tmp, self.final_tmp)
                conn = sqlite3.connect(f"{self.final_tmp.resolve().as_uri()}?mode=ro", uri=True)
        finally:
            conn.close()

    def add(self, doc: Document) -> None:
        """Insert one document with its sections and exact tokens."""
        self.add_rows(prepare_rows(doc))

    def add_rows(self, rows: DocumentRows) -> None:
        """Insert one document's rows from prepare_rows(), giving out the next ids."""
        path, sha256, doc_row, section_rows, token_rows, included = rows
        doc_id = self.next_doc_id
        self.next_doc_id += 1
        first = self.next_section_id
        self.next_section_id += len(section_rows)
        self.digest.update(f"{path}\0{sha256}\n".encode())
        # Held until a batch is full: one executemany() a batch, not three calls a document (most
        # documents are a few sections; the calls cost more than the rows on a corpus of small files).
        self._pending_documents.append(_stored_document(doc_id, doc_row))
        self._pending_sections += [
            (*values, first + o, doc_id, None if parent is None else first + parent)
            for o, parent, values in section_rows
        ]
        self._pending_tokens += [(norm, first + o, written, ks) for norm, o, written, ks in token_rows]
        self._pending_included += [(first + o, text, files) for o, text, files in included]
        self.n_tokens += len(token_rows)
        self._pending_chars += sum(len(cast(str, values[6])) for _, _, values in section_rows)  # body
        if self._pending_chars > _BATCH_CHARS or len(self._pending_tokens) > _BATCH_TOKENS:
            self._flush_pending()

    def _flush_pending(self) -> None:
        """Insert the rows add_rows() holds, and copy the documents reuse() took."""
        self._copy_reused()
        if self._pending_documents:
            self.db.executemany(_INSERT_DOCUMENT, self._pending_documents)
            self.db.executemany(_INSERT_SECTION, self._pending_sections)
            self.db.executemany(_INSERT_TOKEN, self._pending_tokens)
            self.db.executemany(_INSERT_INCLUDED, self._pending_included)
        self._pending_documents, self._pending_sections, self._pending_tokens = [], [], []
        self._pending_included = []
        self._pending_chars = 0

    # -- one document streamed section by section (stream_sections), for files too big to hold --

    def start_document(self) -> Callable[[Section, str], None]:
        """Begin a document whose sections come one at a time: they go to the returned
        `sink(section, title)` as they are read and are written in batches; end_document() then
        writes the document's own row. Memory holds a batch, not the document's rows."""
        self._flush_pending()  # abandon_document() counts the rows in the file
        self._doc_open = True
        self._doc_id = self.next_doc_id
        self._first = self.next_section_id
        self._rows: list[tuple[object, ...]] = []
        self._token_rows: list[tuple[object, ...]] = []
        self._included: list[IncludeRow] = []
        self._held = 0  # characters of body in _rows
        self._last: tuple[Section, str] | None = None  # written once the next one says it is not last
        self._written = 0
        self._words: str | None = None
        self._rows_digest = _RowsDigest()
        return self._section

    def _section(self, section: Section, title: str) -> None:
        if self._last is not None:
            self._row(*self._last, is_last=False)
        self._last = (section, title)

    def _row(self, s: Section, title: str, is_last: bool) -> None:
        first = self._first
        if self._words is None:
            self._words = file_words(s.path)
        tokens: list[TokenRow] = []
        values, text = _section_values(s.path, self._words, s, is_last, tokens)
        self._rows_digest.add(text)
        sid = first + s.ordinal
        self._rows.append((*values, sid, self._doc_id, None if s.parent is None else first + s.parent))
        self._token_rows += [(norm, sid, written, ks) for norm, _, written, ks in tokens]
        if s.included is not None:
            self._included.append((sid, s.included, _json_strings(s.included_files)))
        self._written += 1
        self._held += len(s.body)
        if self._held > _BATCH_CHARS or len(self._token_rows) > _BATCH_TOKENS:
            self._flush_rows()

    def _flush_rows(self) -> None:
        self.db.executemany(_INSERT_SECTION, self._rows)
        self.db.executemany(_INSERT_TOKEN, self._token_rows)
        self.db.executemany(_INSERT_INCLUDED, self._included)
        self.n_tokens += len(self._token_rows)
        self._rows, self._token_rows, self._included, self._held = [], [], [], 0

    def end_document(self, doc: Document) -> None:
        """Write the rest of the document's sections and its row (`doc` from stream_sections)."""
        self._doc_open = False
        if self._last is not None:
            self._row(*self._last, is_last=True)
            self._last = None
        self._flush_rows()
        if self._written != doc.n_sections:
            raise MdftsError(f"{doc.path}: {self._written} sections written, {doc.n_sections} expected")
        self.next_doc_id += 1
        self.next_section_id += doc.n_sections
        self.digest.update(f"{doc.path}\0{doc.sha256}\n".encode())
        values = _document_values(doc)
        # (the title lives here only, so rows written before a late first h1 named the document
        # read the right one through the view)
        words = self._words if self._words is not None else file_words(doc.path)
        self.db.execute(_INSERT_DOCUMENT,
                        _stored_document(self._doc_id, (*values, self._rows_digest.document(values), words)))

    def abandon_document(self) -> None:
        """Remove what start_document() wrote of a document that turned out unreadable."""
        if not self._doc_open:
            return
        self._doc_open = False
        self._rows, self._token_rows, self._included, self._last = [], [], [], None
        if self._written:
            first, last = self._first, self._first + self._written
            self.db.execute("delete from token_stage where section_id >= ? and section_id < ?", (first, last))
            self.db.execute("delete from section_includes where section_id >= ? and section_id < ?", (first, last))
            self.db.execute("delete from sections where document_id = ?", (self._doc_id,))
            self.n_tokens = self.db.execute("select count(*) from token_stage").fetchone()[0]

    def set_last_commits(self, commits: dict[str, str]) -> None:
        """Record each document's last git commit (documents.last_commit), by path."""
        self._flush_pending()
        self.db.executemany("update documents set last_commit = ? where path = ?",
                            sorted((c, p) for p, c in commits.items()))

    def attach_previous(self, previous: Path) -> None:
        """Make the documents of an older index (already checked by open_index) available to reuse().

        Attached read-only and immutable: nothing is written to it, and a -wal beside it is neither
        read nor checkpointed into it. Its rows are checked against their digests before finish()."""
        self.previous_uri = previous.resolve().as_uri() + "?mode=ro&immutable=1"
        self.db.execute("attach database ? as prev", (self.previous_uri,))
        # Old document id → section id shift, for the tokens finish() copies. A temp table (one small
        # row a document): a table in main would bump the schema cookie in the file header.
        self.db.execute(
            "create temp table _mdfts_reuse "
            "(old_id integer primary key, delta integer not null, old_first integer, new_id integer not null)"
        )
        self.reusing = True

    def reuse(self, path: str, sha256: str) -> bool:
        """Copy the document at `path` from the previous index when its bytes are unchanged.

        Ids are given out exactly as add() would, so the finished file equals a full build.
        """
        if not self.reusing:
            return False
        try:
            return self._reuse(path, sha256)
        except sqlite3.DatabaseError as err:  # a bad page, a truncated file
            raise RowsMismatch(f"cannot read it ({err})") from None

    def _reuse(self, path: str, sha256: str) -> bool:
        if self._previous is None:
            # One read of every old document (path, sha256 and where its sections start), not a
            # query a file: most of the per-file cost of a build that reuses nearly everything.
            self._previous = {row[0]: row[1:] for row in self.db.execute(_PREVIOUS_DOCUMENTS)}
        old = self._previous.pop(path, None)  # (each path comes once)
        if old is None or old[0] != bytes.fromhex(sha256):
            return False
        _, old_id, n_sections, old_first = old
        doc_id = self.next_doc_id
        self.next_doc_id += 1
        first = self.next_section_id
        self.next_section_id += n_sections
        delta = first - (old_first or first)
        self.digest.update(f"{path}\0{sha256}\n".encode())
        # The rows are copied by _copy_reused(), with the next batch of rows: the ids are given out here.
        self._pending_reuse.append((old_id, delta, old_first, doc_id))
        self.reused += 1
        return True

    def _copy_reused(self) -> None:
        """Copy the documents reuse() took since the last copy, and their sections."""
        if not self._pending_reuse:
            return
        db, since = self.db, self._pending_reuse[0][3]
        try:
            db.executemany("insert into _mdfts_reuse values (?, ?, ?, ?)", self._pending_reuse)
            db.execute(_COPY_DOCUMENTS, {"since": since})
            db.execute(_COPY_SECTIONS, {"since": since})
        except sqlite3.DatabaseError as err:  # a bad page, a truncated file
            raise RowsMismatch(f"cannot read it ({err})") from None
        self._pending_reuse = []

    def _number_with_reused_tokens(self) -> None:
        """_NUMBER_TOKENS for a build that reused documents: their token rows go from the previous
        index to token_rows with their form's new number, not through token_stage by text (265k
        rows written twice on the bench corpus, a tenth of a 99%-reused build). The forms are
        token_stage's and those of the reused rows; numbered in norm order as a full build does."""
        db = self.db
        db.execute(_NUMBER_WITH_REUSED[0])
        db.execute(_NUMBER_TOKENS[1])
        db.execute(_NUMBER_WITH_REUSED[1])
        self.n_tokens += db.execute("select changes()").fetchone()[0]
        db.execute(_NUMBER_TOKENS[2])
        db.execute("drop table _mdfts_reuse")
        db.execute("drop table _mdfts_reuse_sections")
        self._numbered = True

    def finish(self, meta: dict[str, str], queries: list[tuple[str, str, str, str, str]]) -> WriteStats:
        """Index, stamp, compact and rename into place; returns what was written."""
        db = self.db
        started = add_time(self.timings, "", 0.0)
        self._flush_pending()
        check = None
        if self.reusing:
            # The reused rows are checked in a worker process while this one copies, indexes and
            # compacts (a build that reuses 99% of 6,463 files took 3.3 s, not 4.1, on two
            # cores); the file is renamed into place only once the check has passed.
            from mdfts.workers import Aside, default_workers

            reuse = db.execute("select old_id, delta, old_first from _mdfts_reuse order by old_id").fetchall()
            check = Aside(_verify_previous, self.previous_uri, reuse, workers=default_workers(len(reuse)))
            try:
                _map_reused_sections(db)
                self._number_with_reused_tokens()
            except sqlite3.DatabaseError as err:
                check.close()
                raise RowsMismatch(f"cannot read it ({err})") from None
            started = add_time(self.timings, "reuse", started)
        try:
            return self._index_and_replace(meta, queries, started, check)
        finally:
            if check is not None:
                check.close()

    def _index_and_replace(self, meta: dict[str, str], queries: list[tuple[str, str, str, str, str]],
                           started: float, check: Aside | None) -> WriteStats:
        db = self.db
        if not self._numbered:
            for sql in _NUMBER_TOKENS:
                db.execute(sql)
        started = add_time(self.timings, "number_tokens", started)
        if self._sections_sql is not None:
            # sections' own definition back, and the schema cookie without the two swaps' bumps
            # (VACUUM INTO copies it into the index)
            _set_table_sql(db, "sections", self._sections_sql)
            db.execute(f"pragma schema_version = {db.execute('pragma schema_version').fetchone()[0] - 2}")
        db.execute("insert into sections_fts(sections_fts) values ('rebuild')")
        db.execute("commit")
        if self.reusing:
            db.execute("detach database prev")
            self.reusing = False
        started = add_time(self.timings, "fts_rebuild", started)
        # executescript() commits by itself; every statement after this runs in its own transaction,
        # which is fine: VACUUM INTO below writes a fresh file whatever the history was.
        db.executescript(load_sql("derive"))
        started = add_time(self.timings, "derive", started)
        counts = {
            "documents": db.execute("select count(*) from documents").fetchone()[0],
            "sections": db.execute("select count(*) from sections").fetchone()[0],
            "tokens": db.execute("select count(*) from token_rows").fetchone()[0],
        }
        full_meta = {
            "schema_version": str(SCHEMA_VERSION),
            "tokenizer": TOKENIZER,
            "sqlite_version": sqlite3.sqlite_version,
            "content_digest": self.digest.hexdigest(),
            **{k: str(v) for k, v in counts.items()},
            **meta,
        }
        db.executemany("insert or replace into mdfts_meta values (?, ?)", sorted(full_meta.items()))
        db.executemany("insert into mdfts_queries values (?, ?, ?, ?, ?)", sorted(queries))
        started = add_time(self.timings, "meta", started)
        db.execute("insert into sections_fts(sections_fts) values ('optimize')")
        started = add_time(self.timings, "fts_optimize", started)
        try:
            db.execute(f"pragma page_size = {_INDEX_PAGE_SIZES[0]}")
            db.execute("vacuum into ?", (str(self.final_tmp),))
            db.close()
            self.build_tmp.unlink(missing_ok=True)
            self._try_page_sizes()
        except sqlite3.Error as err:
            raise MdftsError(f"{self.out}: cannot write the index: {err}") from None
        started = add_time(self.timings, "vacuum", started)
        if check is not None:
            why = check.result()
            started = add_time(self.timings, "reuse_check", started)
            if why is not None:
                raise RowsMismatch(str(why))
        with open(self.final_tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(self.final_tmp, self.out)
        try:
            dir_fd = os.open(self.out.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError:
            pass
        add_time(self.timings, "replace", started)
        return WriteStats(counts["documents"], counts["sections"], counts["tokens"], self.out.stat().st_size)
