"""FrozenRecord: the read path's records behave as the frozen, slotted dataclasses they replaced."""

from __future__ import annotations

import copy
import inspect
import json
import pickle

import pytest

from mdfts.artifact import StoredQuery
from mdfts.frozen import FrozenRecord
from mdfts.records import DocumentEntry, Hit, Outline, OutlineEntry, SectionLink, SectionPage, TokenEntry
from mdfts.refs import Ref

RECORDS = [Hit, OutlineEntry, DocumentEntry, Outline, SectionLink, TokenEntry, SectionPage, StoredQuery, Ref]


def _hit(**changes: object) -> Hit:
    fields: dict[str, object] = dict(id=1, ref="a.md#a", path="a.md", heading="A", trail=("A",), anchor="a",
                                     level=1, start_line=1, end_line=2, body="# A\n", score=1.5, rank=1)
    return Hit(**(fields | changes))  # type: ignore[arg-type]


@pytest.mark.parametrize("cls", RECORDS, ids=[c.__name__ for c in RECORDS])
def test_init_takes_the_fields_in_slot_order(cls: type[FrozenRecord]) -> None:
    # _fill() assigns positionally: a parameter out of order would land in the wrong field.
    assert tuple(inspect.signature(cls).parameters) == cls.__slots__
    values = [f"v{i}" for i in range(len(cls.__slots__))]
    made = cls(*values)
    assert [getattr(made, f) for f in cls.__slots__] == values
    assert repr(made) == f"{cls.__name__}(" + ", ".join(f"{f}='v{i}'" for i, f in enumerate(cls.__slots__)) + ")"


def test_equality_and_hash_leave_out_explain_only() -> None:
    hit = _hit()
    assert hit == _hit(explain={"score": 1.5}) and hash(hit) == hash(_hit(explain={"score": 1.5}))
    assert hit != _hit(rank=2) and hit != _hit(snippet="x")
    assert hit != OutlineEntry(1, "a.md#a", "a.md", 1, "A", "a", 1, 2, 3, 1)
    assert len({hit, _hit(explain={}), _hit(rank=2)}) == 2


def test_a_record_cannot_be_changed_only_copied() -> None:
    hit = _hit()
    with pytest.raises(AttributeError, match="cannot assign to field 'id'"):
        hit.id = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del hit.path
    with pytest.raises(AttributeError):
        hit.other = 1  # type: ignore[attr-defined]
    moved = hit.with_(rank=3, relation="child")
    assert (moved.rank, moved.relation, moved.path, hit.rank) == (3, "child", "a.md", 1)
    with pytest.raises(TypeError):
        hit.with_(nonsense=1)


def test_records_pickle_and_copy() -> None:
    page = SectionPage(_hit(), 10, (SectionLink(1, "A"),), None, None, SectionLink(2, "B"), (), False,
                       (TokenEntry("E1027", "error_code"),))
    for record in (_hit(explain={"x": 1}), page, Ref("line", "a.md:3", path="a.md", line=3)):
        assert pickle.loads(pickle.dumps(record)) == record
        assert copy.copy(record) == record and copy.deepcopy(record) == record
    assert pickle.loads(pickle.dumps(_hit(explain={"x": 1}))).explain == {"x": 1}


def test_repr_cuts_long_text() -> None:
    # A section's body can be megabytes: repr (a traceback, a log line, the REPL) printed it all,
    # in the Hit, in a SectionPage holding it, and in a Context holding the Hit of a cut match.
    from mdfts.prompt import Block, Context

    body = "# A\n" + "x" * 3_000_000
    hit = _hit(body=body)
    page = SectionPage(hit, len(body), (), None, None, None, (), False, ())
    ctx = Context("<documents/>", "xml", 100, 3, "bytes/4", (Block(hit, "match", 1, cut_lines=2),), ())
    for made in (hit, page, ctx):
        assert len(repr(made)) < 1000
    assert f"body={body[:200]!r}... (3,000,004 characters)" in repr(hit)
    assert f"body={'x' * 200!r}, score=" in repr(_hit(body="x" * 200))  # short text whole


def _page() -> SectionPage:
    return SectionPage(_hit(explain={"x": 1}), 10, (SectionLink(1, "A"),), SectionLink(1, "A"), None,
                       SectionLink(2, "B"), (SectionLink(3, "C"), SectionLink(4, "D")), True,
                       (TokenEntry("E1027", "error_code"),))


# Each public record of the read API, as lookups make it and as from_dict() must give it back.
PUBLIC = {
    "Hit": _hit(),
    "Hit (explain)": _hit(explain={"score": 1.5, "signals": {}}),
    "Hit (no score)": _hit(score=None, snippet="the [rollback]"),  # search.sql's NULL score
    "Hit (neighbour)": _hit(score=None, rank=None, relation="child", url="https://x/a.md#L1-L2"),
    "Hit (token)": _hit(score=None, rank=None, token="E1027", kind="error_code", exact=False, index="a"),
    "OutlineEntry": OutlineEntry(1, "a.md#a", "a.md", 1, "A", "a", 1, 2, 3, 1),
    "DocumentEntry": DocumentEntry(1, "a.md", "A", 3, 1),
    "Outline": Outline("a.md", "A", (OutlineEntry(1, "a.md#a", "a.md", 1, "A", "a", 1, 2, 3, 1),)),
    "SectionLink": SectionLink(3, "Rollback"),
    "TokenEntry": TokenEntry("E1027", "error_code"),
    "SectionPage": _page(),
    "SectionPage (top)": SectionPage(_hit(), 4, (), None, None, None, (), False, ()),
}


@pytest.mark.parametrize("record", PUBLIC.values(), ids=PUBLIC.keys())
def test_every_record_round_trips_through_its_json_form(record: FrozenRecord) -> None:
    data = record.to_dict()
    wire = json.loads(json.dumps(data))
    assert wire == data  # JSON-ready as it is: lists, not tuples; nothing json.dumps changes
    back = type(record).from_dict(wire)
    assert back == record and hash(back) == hash(record)
    assert back.to_dict() == data
    assert pickle.loads(pickle.dumps(back)) == back


def test_a_hit_made_from_json_data_is_hashable() -> None:
    data = json.loads(json.dumps(_hit().to_dict(content_alias=True)))
    assert isinstance(data["trail"], list) and data["content"] == data["body"]
    made = Hit.from_dict(data)  # the `content` alias is read as what it is, the body
    assert made == _hit() and isinstance(made.trail, tuple) and len({made, _hit()}) == 1
    assert hash(_hit(trail=["A"])) == hash(_hit())  # a list for a tuple field, as JSON gives one
    page = SectionPage(_hit(), 4, [SectionLink(1, "A")], None, None, None, [], False, [])
    assert page == SectionPage(_hit(), 4, (SectionLink(1, "A"),), None, None, None, (), False, ()) and hash(page)
    with pytest.raises(TypeError, match="nonsense"):
        Hit.from_dict({**data, "nonsense": 1})
    with pytest.raises(ValueError, match="content"):
        Hit.from_dict({**data, "content": "# B\n"})  # an alias that is not the body is a mistake


def test_a_document_with_front_matter_is_hashable() -> None:
    from mdfts.sections import split_sections

    doc = split_sections("a.md", "---\ntitle: A\ntags: [x]\n---\n# A\n\ntext\n")
    assert doc.front_matter == {"title": "A", "tags": ["x"]}
    assert hash(doc) == hash(split_sections("a.md", "---\ntitle: A\ntags: [x]\n---\n# A\n\ntext\n"))
