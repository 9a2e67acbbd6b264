"""The bench/ scripts keep working: a --quick `make bench` run on a tiny corpus, the other
commands on the fixtures, and the helpers they share."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import bench.common
from bench.common import REPO, build_peak, md_table, percentile, portable_command, replicate
from bench.selfcheck import derive_queries
from bench.speed import interleaved_latencies

from conftest import FIXTURE_DOCS, run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "bench"


@pytest.mark.integration
def test_quick_run_writes_every_section(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "speed", "--quick", str(FIXTURES), "--out", str(out),
         "--sizes", "30,60", "--queries", "10", "--keep", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    report = out.read_text(encoding="utf-8")
    for title in ("Machine", "Build", "Build stages", "Size", "Memory", "Query", "Growth", "Incremental",
                  "Targets (issue #15)"):
        assert f"\n## {title}\n" in report
    assert "| SQLite | " in report
    for method in ("search.sql (mdfts)", "bare bm25 MATCH", "linear scan", "rank-bm25", "tantivy", "bm25s"):
        assert method in report
    build_row = next(line for line in report.splitlines() if line.startswith("| bench |"))
    assert build_row.split("|")[2].strip() == "3"  # files
    assert "## Targets (issue #15)" in proc.stdout  # the report is printed too
    assert "Command: `python -m bench speed --quick tests/fixtures/bench --out .../benchmarks.md " in report
    assert str(tmp_path) not in report and str(REPO) not in report


def test_replicate_prefixes_copies_and_stops_at_sections(tmp_path: Path) -> None:
    whole = replicate(FIXTURES, tmp_path / "a", copies=2)
    assert sorted(p.relative_to(whole).as_posix() for p in whole.rglob("*.md")) == [
        "r0000/ledger.md", "r0000/onboarding.md", "r0000/payments.md",
        "r0001/ledger.md", "r0001/onboarding.md", "r0001/payments.md",
    ]
    part = replicate(FIXTURES, tmp_path / "b", until_sections=9,
                     sections_of={"ledger.md": 4, "onboarding.md": 2, "payments.md": 4})
    assert sorted(p.relative_to(part).as_posix() for p in part.rglob("*.md")) == [
        "r0000/ledger.md", "r0000/onboarding.md", "r0000/payments.md",
    ]


def test_interleaved_latencies_take_turns_and_keep_each_querys_fastest_pass() -> None:
    # A clock that advances only inside a call, by what a script says that call costs (seconds):
    # method a is slow on its first pass over each query (a burst of load), b on its second.
    now = [0.0]
    calls: list[tuple[str, str]] = []
    cost = {("a", 0): 0.009, ("a", 1): 0.002, ("b", 0): 0.003, ("b", 1): 0.008}

    def method(name: str) -> Callable[[str], None]:
        def call(q: str) -> None:
            n = sum(1 for c in calls if c == (name, q))
            calls.append((name, q))
            now[0] += cost[(name, n)] + (0.0005 if q == "y" else 0.0)
        return call

    best = interleaved_latencies({"a": method("a"), "b": method("b")}, ["x", "y"], passes=2,
                                 clock=lambda: now[0])
    assert {k: [round(v, 3) for v in vs] for k, vs in best.items()} == {"a": [2.0, 2.5], "b": [3.0, 3.5]}
    # each query is asked of both methods before the next one, and the first to go rotates
    assert calls == [("a", "x"), ("b", "x"), ("b", "y"), ("a", "y"),
                     ("b", "x"), ("a", "x"), ("a", "y"), ("b", "y")]


@pytest.mark.parametrize(("p", "expected"), [(50, 5.0), (95, 10.0), (0, 1.0), (100, 10.0)])
def test_percentile_is_nearest_rank(p: float, expected: float) -> None:
    assert percentile([float(x) for x in range(10, 0, -1)], p) == expected


def test_md_table_aligns_numbers_right() -> None:
    assert md_table(["name", "ms"], [["a", 1.5], ["b", 12.25]]) == (
        "| name | ms |\n| --- | ---: |\n| a | 1.50 |\n| b | 12.25 |"
    )


def test_replicate_keeps_each_roots_name_when_given_several(tmp_path: Path) -> None:
    both = replicate([FIXTURES, FIXTURE_DOCS / "services"], tmp_path / "c", copies=1)
    names = sorted(p.relative_to(both).as_posix() for p in both.rglob("*.md"))
    assert "r0000/bench/ledger.md" in names
    assert "r0000/services/payments.md" in names
    assert not any(n.startswith("r0001/") for n in names)


@pytest.mark.integration
def test_build_peak_reads_vmhwm_of_a_fresh_process(tmp_path: Path) -> None:
    imports = build_peak([], tmp_path / "unused.db")
    built = build_peak([FIXTURES], tmp_path / "x.db")
    assert (imports.sections, built.sections > 0, (tmp_path / "x.db").is_file()) == (0, True, True)
    assert 5 < imports.rss_mb <= built.rss_mb < 500


def test_portable_command_drops_this_machines_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = Path("/srv/work/mdfts")  # not in the temp folder, wherever this checkout is
    monkeypatch.setattr(bench.common, "REPO", checkout)
    assert portable_command("python -m bench speed", [
        str(checkout / "sample" / "docs"), "/srv/work/shared/corpora/x", "/elsewhere/work",
        str(tmp_path / "out.md"), "--runs", "1",
    ]) == "python -m bench speed sample/docs ../shared/corpora/x .../work .../out.md --runs 1"


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True, timeout=120, cwd=REPO)


@pytest.mark.integration
def test_incremental_command_reports_identical_bytes(tmp_path: Path) -> None:
    proc = _bench("incremental", str(FIXTURES), "--runs", "1", "--changed", "0.5")
    assert proc.returncode == 0, proc.stderr
    header, _, row = proc.stdout.splitlines()[:3]
    assert header.startswith("| files | changed | reused |")
    assert [c.strip() for c in row.split("|")[1:4]] == ["3", "2", "1"]
    assert row.rstrip().endswith("| yes |")


@pytest.mark.parametrize(
    ("changed", "error"),
    [("nan", "nan is not a number"), ("inf", "inf is not in the range 0<x<=1."),
     ("-0.5", "-0.5 is not in the range 0<x<=1."), ("1.5", "1.5 is not in the range 0<x<=1.")],
    ids=["nan", "inf", "negative", "past-all"],
)
def test_incremental_changed_is_a_share(changed: str, error: str) -> None:
    """--changed is a share of the files, 0 to 1; nan passes every range check, and was a traceback."""
    from click.testing import CliRunner

    from bench.incremental import main as incremental_main

    result = CliRunner().invoke(incremental_main, [str(FIXTURES), "--changed", changed])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.endswith(f"\nError: Invalid value for '--changed': {error}\n")


@pytest.mark.integration
def test_check_corpus_passes_on_a_fresh_index_and_fails_on_a_stale_one(fixture_db: Path, tmp_path: Path) -> None:
    ok = _bench("check-corpus", str(FIXTURE_DOCS), str(fixture_db))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.splitlines()[-1].endswith(" files differ") and " 0 files differ" in ok.stdout
    stale = _bench("check-corpus", str(FIXTURES), str(fixture_db))
    assert stale.returncode == 1
    assert "ledger.md: index [] != markdown-it [" in stale.stdout


@pytest.mark.integration
def test_alert_queries_name_the_file_and_the_heading(tmp_path: Path) -> None:
    docs = tmp_path / "runbooks"
    docs.mkdir()
    (docs / "KubeNodeDown.md").write_text("# KubeNodeDown\n\n## Meaning\n\nA node is down.\n\n## Mitigation\n\nFix it.\n")
    assert run_cli(["build", docs, "-o", tmp_path / "r.db", "-q"]).exit_code == 0
    proc = _bench("alert-queries", str(tmp_path / "r.db"))
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line) for line in proc.stdout.splitlines()] == [
        {"id": "alert-0", "q": "KubeNodeDown meaning", "gold": [{"path": "KubeNodeDown.md", "line": 3}], "kind": "alert"},
        {"id": "alert-1", "q": "KubeNodeDown mitigation", "gold": [{"path": "KubeNodeDown.md", "line": 7}], "kind": "alert"},
    ]


def _selfcheck_corpus(root: Path) -> Path:
    pages = {
        "pages/kiln.md": "# kiln\n\n> Firing utility for `clay`.\n> More information: <https://kiln.example>.\n\n"
                         "- [s]tart a firing schedule:\n\n`kiln start`\n\n- Display help:\n\n`kiln -h`\n",
        "pages/wheel.md": "# wheel\n\n> Throw pots on a wheel.\n\n- Display help:\n\n`wheel -h`\n",
        "runbooks/KilnOverheat.md": "# KilnOverheat\n\n## Meaning\n\nToo hot.\n\n## Mitigation\n\nVent it.\n",
        "guide/glaze.md": "# Glaze\n\nIntro.\n\n## Configuration\n\nSet cones.\n\n## Cone chart\n\nA table.\n",
        "guide/clay.md": "# Clay bodies\n\n## Configuration\n\nSet moisture.\n",
    }
    for rel, text in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_selfcheck_derives_queries_from_the_pages_shape(tmp_path: Path) -> None:
    queries = derive_queries(_selfcheck_corpus(tmp_path))

    def gold(path: str, line: int, heading: str) -> list[dict[str, object]]:
        return [{"path": path, "line": line, "heading": heading}]

    assert [(q["kind"], q["q"], q["gold"]) for q in queries] == [
        # one-section pages: the lead's first sentence without markup or the "More information" line
        ("summary", "firing utility for clay", gold("pages/kiln.md", 1, "kiln")),
        ("summary", "throw pots on a wheel", gold("pages/wheel.md", 1, "wheel")),
        ("summary+name", "kiln firing utility for clay", gold("pages/kiln.md", 1, "kiln")),
        ("summary+name", "wheel throw pots on a wheel", gold("pages/wheel.md", 1, "wheel")),
        # an item of three words or more, letters unbracketed; "Display help" is too short
        ("example", "start a firing schedule", gold("pages/kiln.md", 1, "kiln")),
        ("example+name", "kiln start a firing schedule", gold("pages/kiln.md", 1, "kiln")),
        ("alert", "KilnOverheat meaning", gold("runbooks/KilnOverheat.md", 3, "Meaning")),
        ("alert", "KilnOverheat mitigation", gold("runbooks/KilnOverheat.md", 7, "Mitigation")),
        # a sub-heading two pages share; "Cone chart" (one page) yields nothing
        ("title+heading", "Clay bodies Configuration", gold("guide/clay.md", 3, "Configuration")),
        ("title+heading", "Glaze Configuration", gold("guide/glaze.md", 5, "Configuration")),
    ]
    assert [q["id"] for q in queries][:3] == ["summary-0000", "summary-0001", "summary+name-0000"]


def test_selfcheck_drops_a_nameless_query_two_pages_share(tmp_path: Path) -> None:
    root = _selfcheck_corpus(tmp_path)
    (root / "pages" / "oven.md").write_text("# oven\n\n- Start a firing schedule:\n\n`oven go`\n", encoding="utf-8")
    queries = derive_queries(root)
    examples = sorted((q["kind"], q["q"]) for q in queries if q["kind"].startswith("example"))
    assert examples == [("example+name", "kiln start a firing schedule"),
                        ("example+name", "oven start a firing schedule")]


@pytest.mark.integration
def test_selfcheck_command_writes_json_lines(tmp_path: Path) -> None:
    out = tmp_path / "q.jsonl"
    proc = _bench("selfcheck", str(_selfcheck_corpus(tmp_path / "docs")), "--out", str(out), "--limit", "1")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [q["id"] for q in lines] == ["docs-summary-0000", "docs-summary+name-0000", "docs-example-0000",
                                        "docs-example+name-0000", "docs-alert-0000", "docs-title+heading-0000"]
    assert proc.stderr == ("selfcheck: 6 queries (summary 1, summary+name 1, example 1, example+name 1, alert 1, "
                           "title+heading 1)\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "a.md").write_text("just text\n", encoding="utf-8")
    failed = _bench("selfcheck", str(empty))
    assert (failed.returncode, failed.stderr) == (1, f"Error: {empty}: no page yields a query\n")


def test_mixed_scores_each_set_under_its_folder(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bench.mixed import main as mixed_main, prefix_of

    shared = tmp_path / "shared"
    (shared / "corpora" / "alpha").mkdir(parents=True)
    (shared / "devset" / "beta").mkdir(parents=True)
    (shared / "corpora" / "alpha" / "kiln.md").write_text("# Kiln\n\n## Glazing\n\nGlaze the pots at dusk.\n")
    (shared / "devset" / "beta" / "kiln.md").write_text("# Kiln\n\n## Firing\n\nFire the kiln slowly.\n")
    gold = {"alpha": ("glaze pots", "kiln.md", 3), "beta": ("fire slowly", "kiln.md", 3)}
    for name, (q, path, line) in gold.items():
        (shared / "devset" / f"{name}.queries.jsonl").write_text(json.dumps(
            {"id": f"{name}-1", "q": q, "gold": [{"path": path, "line": line, "heading": ""}], "kind": "natural"}) + "\n")
    # (both files are kiln.md: only the folder prefix tells the two sets' gold apart)
    assert prefix_of(shared / "devset" / "beta", [shared / "corpora" / "alpha", shared / "devset" / "beta"]) \
        == "devset/beta/"
    result = CliRunner().invoke(mixed_main, [str(shared), "--work", str(tmp_path / "w"), "--own"])
    assert result.exit_code == 0, result.output
    assert result.output.count("| | all | 1 | 1.000 / 1.000 |") == 4, result.output
    assert "mixed index: 4 sections" in result.output


HELDOUT = REPO / "bench" / "heldout"
KINDS = {"exact-token", "service", "heading", "natural", "paraphrase", "mixed"}


def test_heldout_sets_are_well_formed() -> None:
    """Each held-out set, and the kept-back next round, is the dev sets' format: unique ids, a
    known kind, gold with a path, a 1-based line and a heading."""
    files = sorted(HELDOUT.glob("*.queries.jsonl"))
    assert len(files) >= 4
    files += sorted((REPO / "bench" / "heldout-next").glob("*.queries.jsonl"))  # the kept-back round
    ids: set[str] = set()
    for f in files:
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            q = json.loads(line)
            assert q["id"] not in ids, f"{f.name}:{n}: duplicate id"
            ids.add(q["id"])
            assert q["kind"] in KINDS and q["q"].strip(), f"{f.name}:{n}"
            assert q["gold"], f"{f.name}:{n}: no gold"
            for g in q["gold"]:
                assert g["path"].endswith(".md") and not g["path"].startswith("/"), f"{f.name}:{n}"
                assert isinstance(g["line"], int) and g["line"] >= 1, f"{f.name}:{n}"
                assert g["heading"].strip(), f"{f.name}:{n}"


def test_dev_sets_pairs_each_query_file_with_its_corpus(tmp_path: Path) -> None:
    """A held-out folder's sets are scored over SHARED/corpora/NAME; a set whose corpus is
    absent is skipped, and the shared devset folder is not read."""
    from bench.devsets import dev_sets

    shared = tmp_path / "shared"
    (shared / "corpora" / "alpha").mkdir(parents=True)
    (shared / "devset").mkdir()
    (shared / "devset" / "dev.queries.jsonl").write_text("", encoding="utf-8")
    (shared / "devset" / "dev").mkdir()
    extra = tmp_path / "extra"
    extra.mkdir()
    for name in ("alpha", "beta"):
        (extra / f"{name}.queries.jsonl").write_text("", encoding="utf-8")
    assert dev_sets(shared, extra) == [("alpha", shared / "corpora" / "alpha", extra / "alpha.queries.jsonl")]
    assert [name for name, _, _ in dev_sets(shared)] == ["dev"]


def _fake_shared(tmp_path: Path, mdfts_hit1: float) -> Path:
    """A shared folder with one dev set and a run_eval.py that prints a fixed report."""
    shared = tmp_path / "shared"
    (shared / "corpora" / "alpha").mkdir(parents=True)
    (shared / "devset").mkdir()
    (shared / "devset" / "alpha.queries.jsonl").write_text("", encoding="utf-8")
    (shared / "eval").mkdir()
    report = {"systems": {s: {"kinds": {"all": {"n": 1, "hit1": h, "mrr10": h, "med_chars1": 1}}}
                          for s, h in (("mdfts", mdfts_hit1), ("fts5naive", 0.5), ("bm25s", 0.5))}}
    (shared / "eval" / "run_eval.py").write_text(f"print({json.dumps(report)!r})\n", encoding="utf-8")
    return shared


def test_devsets_exit_1_below_a_baseline_and_name_a_missing_eval_python(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bench.devsets import main as devsets_main

    ok = CliRunner().invoke(devsets_main, [str(_fake_shared(tmp_path / "a", 0.5))])
    assert ok.exit_code == 0 and ok.output.endswith("at or above fts5naive and bm25s overall on all 1 dev sets\n")
    low = CliRunner().invoke(devsets_main, [str(_fake_shared(tmp_path / "b", 0.25))])
    assert (low.exit_code, low.stderr) == (
        1, "Error: mdfts is below a baseline overall on: alpha (below fts5naive, bm25s)\n")
    nope = tmp_path / "nope" / "python"
    gone = CliRunner().invoke(devsets_main, [str(_fake_shared(tmp_path / "c", 0.5)), "--eval-python", str(nope)])
    assert (gone.exit_code, gone.stderr) == (
        1, f"Error: {nope}: cannot run (No such file or directory); set --eval-python\n")


def test_heldout_names_a_wrong_folder(tmp_path: Path) -> None:
    """--heldout at a folder that is not there, or holds no query sets, scored nothing and said
    nothing; so did bench signals' --heldout without --shared."""
    from click.testing import CliRunner

    from bench.devsets import main as devsets_main
    from bench.signals import main as signals_main

    shared = _fake_shared(tmp_path, 0.5)
    for folder, error in [(tmp_path / "nope", f"Directory '{tmp_path}/nope' does not exist."),
                          (shared / "corpora", f"{shared}/corpora: no NAME.queries.jsonl in it")]:
        for args in ([str(shared)], ["--shared", str(shared)]):
            command = devsets_main if len(args) == 1 else signals_main
            result = CliRunner().invoke(command, [*args, "--heldout", str(folder)])
            assert (result.exit_code, result.stdout) == (2, "")
            assert result.stderr.endswith(f"\nError: Invalid value for '--heldout': {error}\n")
    alone = CliRunner().invoke(signals_main, ["--heldout", str(REPO / "bench" / "heldout")])
    assert (alone.exit_code, alone.stdout) == (2, "")
    assert alone.stderr.endswith("\nError: --heldout needs --shared\n")


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize(
    ("made", "missing"),
    [([], "devset"), (["devset"], "eval/requirements.txt")],
    ids=["no-devset", "no-requirements"],
)
def test_make_eval_names_what_is_missing(tmp_path: Path, made: list[str], missing: str) -> None:
    """`make eval` skips the dev sets without the devset folder or the evaluator's requirements,
    and says which of the two is not there."""
    shared = tmp_path / "shared"
    for folder in made:
        (shared / folder).mkdir(parents=True)
    work = tmp_path / "work"  # the sample index goes to work/dist, not to the checkout's
    work.mkdir()
    for name in ("sample", "builder", "queries"):
        (work / name).symlink_to(REPO / name)
    venv = Path(sys.prefix)
    proc = subprocess.run(
        ["make", "-s", "-f", str(REPO / "Makefile"), "-o", str(venv / ".dev"), "eval",
         f"SHARED={shared}", f"VENV={venv}"],
        capture_output=True, text=True, timeout=120, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(f"no {shared}/{missing}: skipped the dev sets\n"), proc.stdout


def test_signals_rescoring_ranks_like_the_sql_ties_by_id_and_refits() -> None:
    import numpy as np

    from bench.signals import Labelled, hits, ranks, refit

    # one query, two candidates: the first holds signal a, the second (gold) signal b
    q = Labelled("s", np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([7, 3]), np.array([False, True]), False)
    w0 = np.array([1.0, 0.5])
    assert ranks([q], w0) == [2]
    assert ranks([q], np.array([1.0, 1.0])) == [1]  # a tie goes to the lower id, as in search.sql
    w = refit([q], w0)
    assert ranks([q], w) == [1] and list(w) != list(w0)
    assert hits([q], w, ["s", "t"]) == {"s": 1, "t": 0}


@pytest.mark.integration
def test_signals_report_checks_the_rescoring_against_the_sql() -> None:
    proc = _bench("signals", "--set", "sample", "sample/docs", "sample/queries.jsonl", "--no-refit")
    assert proc.returncode == 0, proc.stderr
    first = next(line for line in proc.stdout.splitlines() if line.startswith("| sample |"))
    cells = [c.strip() for c in first.strip("|").split("|")]
    assert cells[1] == "40" and cells[2] == cells[3]  # the rescored first hits are the SQL's
    assert int(cells[2]) > 0
    loo = [line for line in proc.stdout.splitlines() if line.startswith("| bm25 |") or line.startswith("| page |")]
    assert len(loo) == 2
    assert "Leave-one-set-out" not in proc.stdout


def test_samerows_finds_the_run_whose_rows_differ(fixture_db: Path, tmp_path: Path) -> None:
    sql = (REPO / "queries" / "search.sql").read_text(encoding="utf-8")
    (tmp_path / "same.sql").write_text(sql, encoding="utf-8")
    # a version whose explain column is another text: only the explain runs differ
    (tmp_path / "other.sql").write_text(sql.replace("'score', r.score,", "'score', r.score + 1,"), encoding="utf-8")
    (tmp_path / "q.jsonl").write_text('{"q": "rollback"}\n{"q": ""}\n', encoding="utf-8")
    argv = [sys.executable, "-m", "bench", "samerows", str(REPO / "queries" / "search.sql")]
    same = subprocess.run([*argv, str(tmp_path / "same.sql"), f"{fixture_db}={tmp_path / 'q.jsonl'}"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert same.returncode == 0, same.stderr
    assert same.stdout.splitlines()[-1].startswith("all: 6 runs, ") and same.stdout.endswith(" 0 differ\n")
    other = subprocess.run([*argv, str(tmp_path / "other.sql"), f"{fixture_db}={tmp_path / 'q.jsonl'}"],
                           capture_output=True, text=True, cwd=REPO, timeout=120)
    assert other.returncode == 1
    assert "  differs: 'rollback' (explain)\n" in other.stdout and other.stdout.endswith(" 1 differ\n")


def test_renamed_swaps_each_system_name_in_paths_text_and_queries(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bench.renamed import main as renamed_main, rename

    corpus = tmp_path / "docs"
    (corpus / "runbooks").mkdir(parents=True)
    (corpus / "runbooks" / "kiln-worker.md").write_text(
        "# Kiln Worker\n\n## Restart\n\nSet `KILN_WORKER_URL`, then restart kiln-worker. KilnWorkerDown fires"
        " when the kilns stop; see Glazebot.\n", encoding="utf-8")
    (corpus / "runbooks" / "glaze.md").write_text("# Glaze\n\n## Mixing\n\nStir the glaze twice.\n", encoding="utf-8")
    (corpus / "README.md").write_text("# Readme\n\nKiln and glaze runbooks.\n", encoding="utf-8")
    (corpus / ".git").mkdir()
    (corpus / ".git" / "HEAD").write_text("ref: refs/heads/kiln\n", encoding="utf-8")
    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join(json.dumps(q) for q in [
        {"id": "a", "q": "kiln-worker restart KILN_WORKER_URL", "kind": "mixed",
         "gold": [{"path": "runbooks/kiln-worker.md", "line": 3, "heading": "Restart"}]},
        {"id": "b", "q": "glaze mixing", "kind": "heading",
         "gold": [{"path": "runbooks/glaze.md", "line": 3, "heading": "Mixing"}]}]) + "\n", encoding="utf-8")
    root, renamed, new = rename(corpus, queries, tmp_path / "w", [("Glazebot", "Mixbot")])
    assert sorted(new) == ["glaze", "glazebot", "kiln"]
    kiln, glaze = new["kiln"], new["glaze"]
    assert kiln != glaze and kiln not in {"kiln", "glaze"}
    text = (root / "runbooks" / f"{kiln}-worker.md").read_text(encoding="utf-8")
    # (every form of a name, as a part of a longer one too; a longer word that holds it is kept)
    assert text == (f"# {kiln.capitalize()} Worker\n\n## Restart\n\nSet `{kiln.upper()}_WORKER_URL`, then restart"
                    f" {kiln}-worker. {kiln.capitalize()}WorkerDown fires when the kilns stop; see Mixbot.\n")
    assert (root / "README.md").read_text(encoding="utf-8") == f"# Readme\n\n{kiln.capitalize()} and {glaze} runbooks.\n"
    assert not (root / ".git").exists()  # (a checkout's hidden files are no part of the corpus)
    assert [json.loads(line)["q"] for line in renamed.read_text(encoding="utf-8").splitlines()] == \
        [f"{kiln}-worker restart {kiln.upper()}_WORKER_URL", f"{glaze} mixing"]
    assert json.loads(renamed.read_text(encoding="utf-8").splitlines()[0])["gold"][0]["path"] == \
        f"runbooks/{kiln}-worker.md"
    result = CliRunner().invoke(renamed_main, [str(corpus), str(queries), "--work", str(tmp_path / "w")])
    assert result.exit_code == 0, result.output
    assert "| all | 2 | 1.000 / 1.000 | 1.000 / 1.000 |" in result.output, result.output
    assert "ranks that differ from as written, search.sql: none" in result.output
    bad = CliRunner().invoke(renamed_main, [str(corpus), str(queries), "--work", str(tmp_path / "w"), "--map", "x"])
    assert bad.exit_code == 2 and "want OLD=NEW" in bad.output
