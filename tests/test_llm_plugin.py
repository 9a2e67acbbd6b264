"""The llm plugin (mdfts.llm_plugin): fragment loaders, the Mdfts toolbox and the template loader,
driven offline by the llm-echo model; core mdfts never imports llm."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

llm = pytest.importorskip("llm")
pytest.importorskip("llm_echo")

import mdfts  # noqa: E402
from mdfts.build import build_index  # noqa: E402
from mdfts.llm_plugin import Mdfts  # noqa: E402

ROLLBACK = "runbooks/payments.md#rollback-procedure"


@pytest.fixture(autouse=True)
def llm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "llm-home"
    home.mkdir()
    monkeypatch.setenv("LLM_USER_PATH", str(home))
    return home


def _llm(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("llm")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env={**os.environ}, timeout=120)


@pytest.mark.integration
def test_the_plugin_registers_its_three_hooks() -> None:
    out = _llm("plugins")
    [mine] = [p for p in json.loads(out.stdout) if p["name"] == "mdfts"]
    assert sorted(mine["hooks"]) == ["register_fragment_loaders", "register_template_loaders", "register_tools"]


def test_search_fragments_one_per_section(sample_db: Path) -> None:
    frags = llm.get_fragment_loaders()["mdfts"](f"{sample_db}?q=how do I roll back payments&k=2")
    assert len(frags) == 2 and all(isinstance(f, llm.Fragment) for f in frags)
    assert frags[0].source == "runbooks/payments.md:83-103"
    assert str(frags[0]).startswith("payments › Rollback procedure\n\n## Rollback procedure\n")


def test_section_and_token_fragments(sample_db: Path) -> None:
    loader = llm.get_fragment_loaders()["mdfts"]
    [one] = loader(f"{sample_db}@runbooks/payments.md#Rollback-Procedure")
    assert one.source == "runbooks/payments.md:83-103"
    tokens = loader(f"{sample_db}?token=PAYMENTS_DB_URL&k=3")
    assert tokens and all("PAYMENTS_DB_URL" in str(f) for f in tokens)
    with pytest.raises(ValueError, match="nearest anchors in runbooks/payments.md: #rollback-procedure"):
        loader(f"{sample_db}@runbooks/payments.md#rolback")
    with pytest.raises(ValueError, match=r"give \?q=QUESTION"):
        loader(str(sample_db))


@pytest.mark.parametrize("param", ["limit=3", "path_prefix=sops/", "Q=rollback"])
def test_an_unknown_fragment_parameter_is_named_not_ignored(sample_db: Path, param: str) -> None:
    # `&limit=3` gave the default five sections: the user never learned that k is the count.
    name = param.partition("=")[0]
    with pytest.raises(ValueError, match=re.escape(f"unknown parameter {name!r}; use q, k, token")):
        llm.get_fragment_loaders()["mdfts"](f"{sample_db}?q=rollback&{param}")


def test_search_fragments_and_the_toolbox_keep_to_a_path_prefix(sample_db: Path) -> None:
    loader = llm.get_fragment_loaders()["mdfts"]
    frags = loader(f"{sample_db}?q=how do I roll back payments&k=3&prefix=sops/")
    assert len(frags) == 3 and all(f.source.startswith("sops/") for f in frags)
    with pytest.raises(ValueError, match=re.escape("prefix goes with ?q=QUESTION")):
        loader(f"{sample_db}?token=PAYMENTS_DB_URL&prefix=sops/")
    with pytest.raises(ValueError, match=re.escape("no document's path starts with 'sop/'")):
        loader(f"{sample_db}?q=rollback&prefix=sop/")
    box = Mdfts(str(sample_db))
    lines = box.search("how do I roll back payments", limit=3, path_prefix="sops/").splitlines()
    assert len(lines) == 3 and all(re.match(r"\[\d+\] sops/", line) for line in lines)
    assert box.search("rollback", path_prefix="sop/") == "no document's path starts with 'sop/'"
    sources = re.findall(r"<source>(\S+)", box.context("how do I roll back payments", path_prefix="sops/"))
    assert sources and all(s.startswith("sops/") for s in sources)
    assert box.search("rollback", path_prefix=3) == (  # type: ignore[arg-type]
        "Error: path_prefix is the start of a document's path, e.g. runbooks/; not 3")


@pytest.mark.integration
def test_fragment_reaches_the_model_through_the_cli(sample_db: Path) -> None:
    out = _llm("-m", "echo", "-f", f"mdfts:{sample_db}?q=roll back payments&k=1", "How do I roll back?")
    assert out.returncode == 0, out.stderr
    assert "## Rollback procedure" in out.stdout and "How do I roll back?" in out.stdout


def test_toolbox_search_then_fetch_with_the_echo_model(sample_db: Path) -> None:
    model = llm.get_model("echo")
    calls = [{"name": "Mdfts_search", "arguments": {"query": "payments rollback", "limit": 2}},
             {"name": "Mdfts_fetch", "arguments": {"ref": ROLLBACK}},
             {"name": "Mdfts_fetch", "arguments": {"ref": "runbooks/payments.md#rolback"}},
             {"name": "Mdfts_token", "arguments": {"token": "E1027"}},
             {"name": "Mdfts_context", "arguments": {"question": "how do I roll back payments?"}}]
    chain = model.chain(json.dumps({"tool_calls": calls}), tools=[Mdfts(str(sample_db), max_tokens=800)])
    responses = list(chain.responses())
    results = {r.name + str(i): r.output for i, r in enumerate(responses[1].prompt.tool_results)}
    assert results["Mdfts_search0"].splitlines()[0].startswith(f"[141] {ROLLBACK} (runbooks/payments.md:83-103) ")
    assert results["Mdfts_fetch1"].startswith("runbooks/payments.md:83-103 payments › Rollback procedure\n\n## Rollback")
    assert results["Mdfts_fetch2"].startswith("Error: no section 'runbooks/payments.md#rolback'; nearest anchors")
    assert "E1027" in results["Mdfts_token3"]
    ctx = results["Mdfts_context4"]
    assert ctx.startswith("<documents ") and (len(ctx.encode()) + 3) // 4 <= 800


@pytest.mark.integration
def test_template_sets_a_system_prompt_and_the_toolbox(sample_db: Path) -> None:
    template = llm.get_template_loaders()["mdfts"](str(sample_db))
    assert template.tools == [f"Mdfts({json.dumps(str(sample_db))})"]
    assert "Mdfts_search first, then Mdfts_fetch" in (template.system or "")
    assert "a long one comes in parts: make the call its last line names" in (template.system or "")
    out = _llm("-m", "echo", "-t", f"mdfts:{sample_db}", "Which env var sets the payments DB?")
    assert out.returncode == 0, out.stderr
    echoed = json.loads(out.stdout)
    assert "Mdfts_search" in echoed["system"] and echoed["prompt"] == "Which env var sets the payments DB?"


@pytest.mark.integration
def test_core_does_not_import_llm(sample_db: Path) -> None:
    code = ("import sys, mdfts, mdfts.cli, mdfts.lookup\n"
            "ix = mdfts.open_index(sys.argv[1]); ix.search('rollback'); ix.context('rollback')\n"
            "print('llm' in sys.modules, 'mcp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(sample_db)], capture_output=True, text=True)
    assert out.stdout == "False False\n", out.stderr


@pytest.mark.parametrize("k", ["0", "-1", "abc", "\u0661\u0662"])
def test_a_count_of_sections_that_is_no_count_says_so(sample_db: Path, k: str) -> None:
    loader = llm.get_fragment_loaders()["mdfts"]
    with pytest.raises(ValueError, match=rf"^mdfts:.*k={k}: k is the number of sections, a whole number from 1$"):
        loader(f"{sample_db}?q=rollback&k={k}")


def test_toolbox_search_keeps_the_snippet_as_search_gives_it(tmp_path: Path) -> None:
    # The line's " — snippet" was trimmed of any trailing spaces and dashes: prose that ends
    # in a dash lost it.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nKeep the rollback plan short —\n")
    build_index([docs], tmp_path / "notes.db")
    [hit] = mdfts.search(tmp_path / "notes.db", "rollback")
    assert hit.snippet == "Keep the [rollback] plan short —"
    out = Mdfts(str(tmp_path / "notes.db")).search("rollback")
    assert out == f"[{hit.id}] notes.md#notes (notes.md:1-3) Notes — Keep the [rollback] plan short —"


def test_toolbox_token_says_how_each_section_writes_it(sample_db: Path) -> None:
    # As the MCP token tool and `mdfts token` do: the token as the section writes it, its kind,
    # and whether the case matches too (case-exact sections come first).
    lines = Mdfts(str(sample_db)).token("payments_db_url").splitlines()
    assert lines[0] == ("[46] onboarding/local-dev.md#local-env-vars (onboarding/local-dev.md:24-32) "
                        "Local development › Local ENV vars — PAYMENTS_DB_URL (env_var)")
    assert len(lines) == 7 and all(line.endswith(" — PAYMENTS_DB_URL (env_var)") for line in lines)
    exact = Mdfts(str(sample_db)).token("E1027").splitlines()
    assert exact and all(line.endswith(" — E1027 (error_code, exact)") for line in exact)


def test_toolbox_search_marks_a_hit_without_the_named_identifier(sample_db: Path) -> None:
    # As `mdfts search` and the MCP search text do: an absent name must not pass for a hit.
    hits = mdfts.search(sample_db, "PAYMENTS_DB_URL rollback", limit=3)
    assert [h.exact for h in hits] == [False, True, False]
    lines = Mdfts(str(sample_db)).search("PAYMENTS_DB_URL rollback", limit=3).splitlines()
    assert lines[0].startswith(f"[141] {ROLLBACK} (runbooks/payments.md:83-103) payments › Rollback procedure "
                               "(no exact match) — ")
    assert ["(no exact match)" in line for line in lines] == [True, False, True]


@pytest.mark.parametrize(("query", "said"), [
    ("*** -- ()", "no usable search term: '*** -- ()'"),
    ("zqxvvz", "no section matches: 'zqxvvz'"),
], ids=["no-term", "no-match"])
def test_a_search_with_no_hits_says_why_as_the_cli_does(sample_db: Path, query: str, said: str) -> None:
    # As `mdfts search` and MCP say it: punctuation alone is to be rephrased, not read as
    # "the docs do not cover it".
    assert Mdfts(str(sample_db)).search(query) == said
    with pytest.raises(ValueError, match=f"^mdfts:.*: {re.escape(said)}$"):
        llm.get_fragment_loaders()["mdfts"](f"{sample_db}?q={query}")


@pytest.mark.parametrize(("limit", "lines"), [(0, 1), (-3, 1), ("2", 2), (999, 20)],
                         ids=["zero", "negative", "text", "huge"])
def test_toolbox_search_reads_any_limit_a_model_sends(sample_db: Path, limit: object, lines: int) -> None:
    # A model may send 0 (not "no section matches": sections do) or the number as text.
    out = Mdfts(str(sample_db)).search("payments rollback database config deploy", limit=limit)  # type: ignore[arg-type]
    assert len(out.splitlines()) == lines and all(line.startswith("[") for line in out.splitlines()), out


def test_toolbox_fetch_reads_an_id_sent_as_a_number(sample_db: Path) -> None:
    box = Mdfts(str(sample_db))
    first = box.search("payments rollback", limit=1)
    ref = first[1:first.index("]")]
    assert ref.isdigit()
    assert box.fetch(int(ref)) == box.fetch(ref)  # type: ignore[arg-type]
    assert not box.fetch(ref).startswith("Error")
    assert box.fetch(None) == ("Error: ref is a section's ref as a search gave it (path#anchor, path:line or id); "  # type: ignore[arg-type]
                               "not None")


def test_toolbox_search_says_what_limit_is(sample_db: Path) -> None:
    out = Mdfts(str(sample_db)).search("payments rollback", limit="many")  # type: ignore[arg-type]
    assert out == "Error: limit is the number of sections to list, a whole number from 1 to 20; not 'many'"


def _tool_call(box: Mdfts, name: str, args: dict[str, object]) -> str:
    """What the toolbox answers a model's call, the call made through llm's echo model."""
    chain = llm.get_model("echo").chain(json.dumps({"tool_calls": [{"name": name, "arguments": args}]}), tools=[box])
    [result] = list(chain.responses())[1].prompt.tool_results
    assert result.name == name
    return str(result.output)


def _read_on(box: Mdfts, ref: str) -> list[str]:
    """Mdfts_fetch `ref`, then make the call each answer's last line names until one names none."""
    answers: list[str] = []
    args: dict[str, object] = {"ref": ref}
    while True:
        answers.append(_tool_call(box, "Mdfts_fetch", args))
        named = re.search(r"; next: Mdfts_fetch\((.*)\)(; Mdfts_fetch \S+ for one)?\]$", answers[-1].splitlines()[-1])
        if not named:
            return answers
        args = {k: json.loads(v) for k, v in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\d+)', named.group(1))}
        assert len(answers) < 50


def _long_docs(tmp_path: Path, text: str) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.md").write_text(text)
    build_index([docs], tmp_path / "long.db")
    return tmp_path / "long.db"


def test_toolbox_fetch_keeps_to_the_budget_and_names_the_call_that_reads_on(tmp_path: Path) -> None:
    # fetch gave a section whole, whatever its size, where `mdfts mcp`'s fetch stops at its budget
    # and names the call that goes on: now the toolbox reads as that does, from the same code.
    body = "# Long\n\n" + "".join(f"entry {i} of a long section\n" for i in range(600))
    box = Mdfts(str(_long_docs(tmp_path, body)), max_tokens=300)
    answers = _read_on(box, "long.md#long")
    assert len(answers) > 3 and all((len(a.encode()) + 3) // 4 <= 300 + 40 for a in answers)
    first = answers[0].splitlines()
    assert first[:3] == ["long.md:1-602 Long", "", "# Long"]
    assert first[-1] == ('[… truncated at line 44 for max_tokens 300; '
                         'next: Mdfts_fetch(ref="long.md#long", from_line=44)]')
    assert answers[1].splitlines()[:3] == ["long.md:1-602 Long (from line 44)", "", "entry 41 of a long section"]
    # Every line once, in order: each call goes on exactly where the one before stopped.
    shown = [line for a in answers for line in a.splitlines()[2:-1 if a.endswith("]") else None]]
    assert "\n".join(shown) == body.rstrip("\n")
    assert _tool_call(box, "Mdfts_fetch", {"ref": "long.md#long", "from_line": "600"}).splitlines()[2:] == [
        "entry 597 of a long section", "entry 598 of a long section", "entry 599 of a long section"]
    assert _tool_call(box, "Mdfts_fetch", {"ref": "long.md#long", "from_line": 603}) == (
        "Error: from_line 603 is past what 'long.md#long' reads (lines 1-602)")
    assert box.fetch("long.md#long", from_line="next") == (  # type: ignore[arg-type]
        "Error: from_line is a line of the file to start at, a whole number; not 'next'")


def test_toolbox_fetch_cuts_a_line_longer_than_the_budget_and_goes_on_after_it(tmp_path: Path) -> None:
    long_line = "word " * 20_000
    box = Mdfts(str(_long_docs(tmp_path, f"# One line\n\nintro\n\n{long_line}\n\nafter\n")), max_tokens=300)
    cut, after = _read_on(box, "long.md#one-line")
    lines = cut.splitlines()
    shown = len(lines[6]) - 1
    assert lines[:6] == ["long.md:1-7 One line", "", "# One line", "", "intro", ""]
    assert lines[6] == long_line[:shown] + "…" and 1_000 < shown < 1_200
    assert lines[7:] == [f"[… line 5 cut after {shown:,} of 100,000 characters for max_tokens 300; "
                         'next: Mdfts_fetch(ref="long.md#one-line", from_line=6)]']
    assert after == "long.md:1-7 One line (from line 6)\n\n\nafter"


def test_toolbox_fetch_of_a_path_lists_the_headings_that_fit_then_the_call_for_the_rest(tmp_path: Path) -> None:
    db = _long_docs(tmp_path, "".join(f"# Heading {i}\n\ntext\n\n" for i in range(60)))
    answers = _read_on(Mdfts(str(db), max_tokens=200), "long.md")
    assert len(answers) > 2
    first = answers[0].splitlines()
    assert first[:2] == ["long.md — Heading 0", "long.md#heading-0 lines 1-4"]
    rest = int(first[-2].split()[-1].split("-")[0]) + 4  # the line after the last one listed
    assert first[-1].startswith(f"[… {60 - len(first) + 2} more headings, from line {rest}; ")
    assert first[-1].endswith(f'next: Mdfts_fetch(ref="long.md", from_line={rest}); Mdfts_fetch long.md:LINE for one]')
    listed = [line for a in answers for line in a.splitlines()[1:] if not line.startswith("[…")]
    assert listed == [f"long.md#heading-{i} lines {4 * i + 1}-{4 * i + 4}" for i in range(60)]


def test_a_cut_context_names_the_toolbox_fetch_that_reads_the_rest(sample_db: Path) -> None:
    # The note said `fetch REF`, and Mdfts_fetch of the ref gave the section from its first line.
    box = Mdfts(str(sample_db), max_tokens=300)
    block = _tool_call(box, "Mdfts_context", {"question": "how do I roll back payments"})
    found = re.search(r"\[… lines (\d+)-103 cut for the budget; Mdfts_fetch\((.*)\)\]", block)
    assert found, block
    args = {k: json.loads(v) for k, v in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\d+)', found[2])}
    assert args == {"ref": ROLLBACK, "from_line": int(found[1])}
    rest = _tool_call(box, "Mdfts_fetch", args)
    assert rest.startswith(f"runbooks/payments.md:83-103 payments › Rollback procedure (from line {found[1]})\n\n")


def test_toolbox_fetch_goes_on_when_the_header_line_leaves_no_room(tmp_path: Path) -> None:
    # A path longer than the budget made each read's header line fill it: the read showed no
    # line and named itself as the next call, so a model following it never got further. Now
    # the first line of a read is shown (cut to AT_LEAST bytes when long) whatever the header;
    # and a budget below MIN_TOKENS is raised to it, as mdfts mcp does.
    docs = tmp_path / "docs"
    deep = docs.joinpath(*[f"{'folder' * 30}{i}" for i in range(3)])  # a 550-character path
    deep.mkdir(parents=True)
    lines = [f"step {i} of the long path's section" for i in range(6)] + ["x" * 2000, "last step"]
    (deep / "long.md").write_text("# Long\n\n" + "\n".join(lines) + "\n")
    build_index([docs], tmp_path / "deep.db")
    box = Mdfts(str(tmp_path / "deep.db"), max_tokens=10)
    assert box.max_tokens == 100
    [hit] = mdfts.search(tmp_path / "deep.db", "step", limit=1)
    answers = _read_on(box, hit.ref)
    shown = [a.splitlines()[2] for a in answers]
    assert shown[:8] == ["# Long", "", *lines[:6]]
    assert shown[8].startswith("x" * 200) and shown[8].endswith("…") and shown[-1] == "last step"


def test_toolbox_fetch_names_the_files_a_sections_include_directives_read(tmp_path: Path) -> None:
    docs = tmp_path / "repo" / "docs"
    docs.mkdir(parents=True)
    (docs / "trouble.md").write_text("# Kiln trouble\n\n## Commands\n\nRun kiln status.\n\n## Errors\n\n{!docs/errors.md!}\n")
    (docs / "errors.md").write_text("# Kiln errors\n\nThe controller rejects an unreadable glaze table.\n")
    build_index([tmp_path / "repo"], tmp_path / "x.db")
    box = Mdfts(str(tmp_path / "x.db"))
    assert box.fetch("docs/trouble.md#errors").endswith('\n[includes Mdfts_fetch(ref="docs/errors.md")]')
    assert "docs/errors.md#kiln-errors" in box.fetch("docs/errors.md")  # the call it names: the outline
    assert "[includes" not in box.fetch("docs/trouble.md#commands")
