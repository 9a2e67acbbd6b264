"""The GitHub workflows and the root action.yml: schema-valid, zizmor-clean, and the action's
shell steps run end to end on a real git repository, with a stand-in `gh` that logs its calls."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from mdfts.cli import cli

from gitrepo import git, isolate, make_repo

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
ACTION = REPO / "action.yml"
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml")) + sorted((REPO / "docs" / "examples").glob("*.yml"))
ZIZMOR_CONFIG = REPO / ".github" / "zizmor.yml"
BIN = Path(sys.executable).parent


def _ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(REPO).as_posix() for p in paths]


def _tool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, check=False)


# --- static checks -------------------------------------------------------------------------


def test_there_are_workflows_to_check() -> None:
    assert {"ci.yml", "docs-index.yml"} <= {p.name for p in WORKFLOWS}


@pytest.mark.parametrize("path", WORKFLOWS, ids=_ids(WORKFLOWS))
def test_workflow_matches_github_schema(path: Path) -> None:
    done = _tool(BIN / "check-jsonschema", "--builtin-schema", "vendor.github-workflows", path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_action_matches_github_schema() -> None:
    done = _tool(BIN / "check-jsonschema", "--builtin-schema", "vendor.github-actions", ACTION)
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_finds_nothing() -> None:
    done = _tool(BIN / "zizmor", "--offline", "--config", ZIZMOR_CONFIG, ACTION, *WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_linters_do_catch_problems(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on:\n  push:\n    paths: docs/**\n  workflow_dispatch:\n    inputs:\n      x: {type: string}\n"
        "jobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v7\n      - run: echo ${{ inputs.x }}\n"
    )
    schema = _tool(BIN / "check-jsonschema", "--builtin-schema", "vendor.github-workflows", bad)
    zizmor = _tool(BIN / "zizmor", "--offline", "--config", ZIZMOR_CONFIG, bad)
    assert "'docs/**' is not of type 'array'" in schema.stdout
    assert ("template-injection" in zizmor.stdout, "artipacked" in zizmor.stdout) == (True, True)


def _run_blocks(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "run" and isinstance(v, str)] + [
            r for k, v in node.items() for r in _run_blocks(v)]
    if isinstance(node, list):
        return [r for v in node for r in _run_blocks(v)]
    return []


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=_ids([ACTION, *WORKFLOWS]))
def test_run_blocks_take_values_through_env_only(path: Path) -> None:
    blocks = _run_blocks(yaml.safe_load(path.read_text()))
    assert blocks
    assert [b for b in blocks if "${{" in b] == []


@pytest.mark.parametrize("path", WORKFLOWS, ids=_ids(WORKFLOWS))
def test_workflows_grant_least_permissions(path: Path) -> None:
    flow = yaml.safe_load(path.read_text())
    checkouts = [s for job in flow["jobs"].values() for s in job["steps"]
                 if s.get("uses", "").startswith("actions/checkout@")]
    assert flow["permissions"] == {}
    assert all("permissions" in job for job in flow["jobs"].values())
    assert checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts)


# --- the composite action, run step by step ------------------------------------------------

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class ActionRun:
    """Runs action.yml's `run:` steps the way a runner does (bash -eo pipefail, a fresh
    GITHUB_OUTPUT per step, env from the step's `env:`), skipping `uses:` steps and the
    install step (the test's own venv stands in for it)."""

    def __init__(self, workspace: Path, tmp: Path, inputs: dict[str, str], event: str, ref: str) -> None:
        action = yaml.safe_load(ACTION.read_text())
        self.workspace, self.tmp = workspace, tmp
        sha = git(workspace, "rev-parse", "HEAD")
        self.github = {
            "event_name": event, "ref": ref, "ref_name": ref.split("/", 2)[-1], "sha": sha,
            "repository": "example/docs", "token": "fake-token", "event.repository.default_branch": "main",
        }
        self.inputs = {k: v.get("default", "") for k, v in action["inputs"].items()} | inputs
        self.inputs = {k: self._render(v) for k, v in self.inputs.items()}
        self.steps = action["runs"]["steps"]
        self.outputs: dict[str, dict[str, str]] = {}
        self.uses: list[tuple[str, dict[str, str]]] = []
        self.summary = tmp / "summary.md"
        self.gh_log = tmp / "gh.log"

    def _value(self, expr: str) -> str:
        scope, _, rest = expr.partition(".")
        if scope == "inputs":
            return self.inputs[rest]
        if scope == "github":
            return self.github[rest]
        if scope == "steps":
            step, _, name = rest.partition(".outputs.")
            return self.outputs.get(step, {}).get(name, "")
        raise AssertionError(f"expression the test runner does not know: {expr}")

    def _render(self, text: Any) -> str:
        if isinstance(text, bool):  # YAML `false` reaches the action as the string "false"
            return str(text).lower()
        return _EXPR.sub(lambda m: self._value(m.group(1)), str(text))

    def _condition(self, cond: str) -> bool:
        left, op, right = re.fullmatch(r"(\S+) (==|!=) '(.*)'", cond.strip()).groups()  # type: ignore[union-attr]
        return (self._value(left) == right) == (op == "==")

    def run(self, gh_view: str = "missing") -> subprocess.CompletedProcess[str] | None:
        """Runs every step; returns the failed step's process, or None when all passed."""
        fake_bin = self.tmp / "fake-bin"
        fake_bin.mkdir(exist_ok=True)
        gh = fake_bin / "gh"
        gh.write_text(
            f'#!/bin/sh\necho "$*" >> {self.gh_log}\n'
            'if [ "$1 $2" = "release view" ]; then\n'
            '  if [ "$FAKE_GH_VIEW" = missing ]; then echo "release not found" >&2; exit 1; fi\n'
            '  echo "$FAKE_GH_VIEW"\nfi\n'
        )
        gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
        base = {
            **os.environ, "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}", "FAKE_GH_VIEW": gh_view,
            "RUNNER_TEMP": str(self.tmp), "GITHUB_ACTION_PATH": str(REPO), "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_STEP_SUMMARY": str(self.summary), "GITHUB_EVENT_NAME": self.github["event_name"],
            "GITHUB_REF": self.github["ref"], "GITHUB_REF_NAME": self.github["ref_name"],
            "GITHUB_SHA": self.github["sha"], "GITHUB_REPOSITORY": self.github["repository"],
        }
        for n, step in enumerate(self.steps):
            if "if" in step and not self._condition(step["if"]):
                continue
            if "uses" in step:
                self.uses.append((step["uses"], {k: self._render(v) for k, v in step["with"].items()}))
                continue
            if step.get("id") == "install":
                self.outputs["install"] = {"mdfts": str(BIN / "mdfts"), "python": sys.executable}
                continue
            out = self.tmp / f"output-{n}"
            out.write_text("")
            env = base | {"GITHUB_OUTPUT": str(out)} | {k: self._render(v) for k, v in step.get("env", {}).items()}
            script = self.tmp / f"step-{n}.sh"
            script.write_text(step["run"])
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                                  cwd=self.workspace, env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                return done
            if "id" in step:
                self.outputs[step["id"]] = dict(line.split("=", 1) for line in out.read_text().splitlines())
        return None

    def gh_calls(self) -> list[str]:
        return self.gh_log.read_text().splitlines() if self.gh_log.exists() else []


HAS_CHECK = "check" in cli.commands  # `mdfts check` is built in another part of issue #5


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate(monkeypatch)
    make_repo(tmp_path / "ws")
    (tmp_path / "ws" / "queries.jsonl").write_text(json.dumps(
        {"id": "q1", "q": "rollback force-with-lease", "gold": [{"path": "index.md", "line": 5}], "kind": "flag"}) + "\n")
    (tmp_path / "runner").mkdir()
    return tmp_path / "ws"


def _action(workspace: Path, event: str = "pull_request", ref: str = "refs/pull/7/merge", **inputs: str) -> ActionRun:
    inputs = {"check": "true" if HAS_CHECK else "false", **inputs}
    return ActionRun(workspace, workspace.parent / "runner", inputs, event, ref)


def test_pull_request_builds_names_checksums_and_uploads_without_release(workspace: Path) -> None:
    run = _action(workspace, **{"eval-queries": "queries.jsonl", "min-hit1": "1"})
    sha = git(workspace, "rev-parse", "HEAD")

    assert run.run() is None

    build = run.outputs["build"]
    name = f"docs-index-20231114-{sha[:7]}.db"
    assert build["version"] == f"20231114+{sha[:7]}"
    assert (build["path"], build["sums-path"]) == (f"dist/{name}", "dist/SHA256SUMS")
    assert subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=workspace / "dist", capture_output=True).returncode == 0
    assert (workspace / "dist" / "SHA256SUMS").read_text() == f"{build['sha256']}  {name}\n"
    assert sorted(p.name for p in (workspace / "dist").iterdir()) == ["SHA256SUMS", name]
    assert run.uses == [("actions/upload-artifact@v7", {
        "path": f"dist/{name}", "archive": "false", "if-no-files-found": "error", "retention-days": "0"})]
    assert (run.outputs["release"], run.gh_calls()) == ({"tag": ""}, [])


def test_eval_below_threshold_fails_the_action(workspace: Path) -> None:
    (workspace / "queries.jsonl").write_text(json.dumps(
        {"id": "q1", "q": "rollback", "gold": [{"path": "guides/releases.md", "line": 1}], "kind": "x"}) + "\n")
    run = _action(workspace, **{"eval-queries": "queries.jsonl", "min-hit1": "0.5"})

    failed = run.run()

    assert failed is not None and "Error: Hit@1 0.000 (0 of 1) is below --min-hit1 0.5" in failed.stderr
    assert "release" not in run.outputs


def test_push_to_main_publishes_draft_then_attaches_then_publishes(workspace: Path) -> None:
    run = _action(workspace, event="push", ref="refs/heads/main", **{"release-on": "tags, main"})
    sha = git(workspace, "rev-parse", "HEAD")

    assert run.run() is None

    tag = f"docs-index-20231114-{sha[:7]}"
    assert run.outputs["release"] == {"tag": tag}
    assert run.gh_calls() == [
        f"release view {tag} --json isDraft --jq .isDraft",
        f"release create {tag} --draft --target {sha} --title {tag} --notes "
        f"Docs index version 20231114+{sha[:7]}, built from {sha} by mdfts.",
        f"release upload {tag} dist/{tag}.db dist/SHA256SUMS",
        f"release edit {tag} --draft=false",
    ]


def test_tag_push_releases_that_tag_with_its_name_as_version(workspace: Path) -> None:
    git(workspace, "tag", "v1.0.0")
    run = _action(workspace, event="push", ref="refs/tags/v1.0.0", name="handbook")

    assert run.run() is None

    assert (run.outputs["build"]["version"], run.outputs["release"]) == ("v1.0.0", {"tag": "v1.0.0"})
    assert run.gh_calls()[1].startswith("release create v1.0.0 --draft --verify-tag --target ")
    assert run.gh_calls()[2] == "release upload v1.0.0 dist/handbook-v1.0.0.db dist/SHA256SUMS"


@pytest.mark.parametrize(("state", "last_call"), [("true", "release edit v2 --draft=false"),
                                                  ("false", "release upload v2 dist/docs-index-v2.db dist/SHA256SUMS --clobber")],
                         ids=["draft-left-by-a-failed-run", "published-by-hand"])
def test_existing_release_gets_the_files(workspace: Path, state: str, last_call: str) -> None:
    git(workspace, "tag", "v2")
    run = _action(workspace, event="push", ref="refs/tags/v2")

    assert run.run(gh_view=state) is None

    assert not any(c.startswith("release create") for c in run.gh_calls())
    assert run.gh_calls()[-1] == last_call


@pytest.mark.parametrize(("event", "ref", "release_on"), [
    ("push", "refs/heads/main", "tags"),
    ("push", "refs/tags/v1", "main"),
    ("push", "refs/heads/feature", "tags main"),
    ("pull_request", "refs/pull/3/merge", "tags main"),
    ("push", "refs/tags/v1", "never"),
], ids=["main-not-wanted", "tag-not-wanted", "other-branch", "pull-request", "never"])
def test_no_release_unless_wanted(workspace: Path, event: str, ref: str, release_on: str) -> None:
    run = _action(workspace, event=event, ref=ref, **{"release-on": release_on})

    assert run.run() is None

    assert (run.outputs["release"], run.gh_calls()) == ({"tag": ""}, [])


def test_release_on_given_one_a_line_is_read_as_a_list(workspace: Path) -> None:
    run = _action(workspace, event="push", ref="refs/heads/main", **{"release-on": "tags\nmain\n"})

    assert run.run() is None

    assert run.outputs["release"]["tag"].startswith("docs-index-")


def test_an_unknown_release_on_word_is_an_annotated_error(workspace: Path) -> None:
    # `tag` for `tags` would otherwise never release, and say nothing.
    run = _action(workspace, event="push", ref="refs/tags/v1", **{"release-on": "tag"})

    failed = run.run()

    assert failed is not None and "::error::release-on: 'tag' is none of tags, main, never" in failed.stdout
    assert run.gh_calls() == []


def test_two_clones_give_the_same_checksum(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere" / "clone"
    git(tmp_path, "clone", "-q", str(workspace), str(other))
    (tmp_path / "runner2").mkdir()
    first, second = _action(workspace), ActionRun(other, tmp_path / "runner2", {"check": "false"},
                                                  "pull_request", "refs/pull/7/merge")

    assert (first.run(), second.run()) == (None, None)

    assert first.outputs["build"]["sha256"] == second.outputs["build"]["sha256"]


def test_explicit_version_and_unsafe_characters_in_the_file_name(workspace: Path) -> None:
    run = _action(workspace, version="2024.1+docs/x", name="team docs")

    assert run.run() is None

    assert (run.outputs["build"]["version"], run.outputs["build"]["path"]) == (
        "2024.1+docs/x", "dist/team-docs-2024.1-docs-x.db")


def test_no_version_outside_git_is_an_annotated_error(workspace: Path, tmp_path: Path) -> None:
    # The workflow's own repository is a git checkout, but the docs folder lives outside it.
    shutil.move(workspace / "docs", tmp_path / "plain-docs")
    run = _action(workspace, **{"docs-path": str(tmp_path / "plain-docs")})

    failed = run.run()

    assert failed is not None
    assert failed.stdout.strip() == ("::error::no artifact version: set the action's version input, "
                                     "or build from a git checkout")
    assert not (workspace / "dist" / ".mdfts-build.db").exists()


@pytest.mark.integration
def test_github_sources_are_read_with_the_job_token(workspace: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from fakegithub import Clock, FakeGitHub

    for name in ("http_proxy", "HTTP_PROXY", "GITHUB_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fake = FakeGitHub(workspace, Clock(), owner="example", name="docs").start()
    try:
        monkeypatch.setenv("GITHUB_API_URL", fake.api_url)  # a runner sets it for the job
        (workspace / "local").mkdir()
        (workspace / "local" / "extra.md").write_text("# Extra\n")
        run = _action(workspace, **{"docs-path": "github:example/docs:docs\n  local  \n", "max-wait": "0"})
        assert run.run() is None
    finally:
        fake.stop()
    sha = git(workspace, "rev-parse", "HEAD")
    assert run.outputs["build"]["version"] == f"20231114+{sha[:7]}"
    assert [(s.host, s.auth) for s in fake.seen] == [
        ("127.0.0.1", "Bearer fake-token"), ("127.0.0.1", "Bearer fake-token"), ("localhost", None)]
    done = subprocess.run([BIN / "mdfts", "info", workspace / run.outputs["build"]["path"], "--json"],
                          capture_output=True, text=True, check=True)
    meta = json.loads(done.stdout)["meta"]
    assert (meta["source"], str(meta["documents"])) == ("github:example/docs, local", "4")


def test_a_name_starting_with_a_dash_is_a_file_not_an_option(workspace: Path) -> None:
    """`sha256sum -docs-….db` read the file name as options and failed the step."""
    run = _action(workspace, name="-docs", version="1")

    assert run.run() is None

    assert (workspace / "dist" / "SHA256SUMS").read_text() == f"{run.outputs['build']['sha256']}  -docs-1.db\n"


def test_a_blank_docs_path_is_an_annotated_error(workspace: Path) -> None:
    """It failed on bash's "sources[0]: unbound variable" instead."""
    run = _action(workspace, **{"docs-path": " \n\n"})

    failed = run.run()

    assert failed is not None
    assert failed.stdout.strip() == "::error::docs-path names no source: give folders or github: sources, one a line"
    assert not (workspace / "dist").exists()


# --- the example workflow's diff step, run on its own ----------------------------------------

EXAMPLE = REPO / "docs" / "examples" / "docs-index.yml"


def test_outputs_the_examples_read_are_outputs_of_the_action() -> None:
    """A workflow reads `steps.<id>.outputs.X` of the mdfts step: X must be one the action declares."""
    declared = set(yaml.safe_load(ACTION.read_text())["outputs"])
    flow = yaml.safe_load(EXAMPLE.read_text())
    ids = {s["id"] for job in flow["jobs"].values() for s in job["steps"]
           if "id" in s and s.get("uses", "").startswith("OWNER/mdfts@")}
    read = set(re.findall(rf"steps\.(?:{'|'.join(ids)})\.outputs\.([\w-]+)", EXAMPLE.read_text()))
    assert "mdfts" in read and read <= declared


def _diff_step(tmp_path: Path, base: Path | None, new: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """Runs the example's pull-request diff step with a stand-in `gh` that "downloads" `base`
    (or finds no release when it is None); returns the process and the job summary."""
    [step] = [s for s in yaml.safe_load(EXAMPLE.read_text())["jobs"]["preview"]["steps"]
              if "diff" in s.get("run", "")]
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir(parents=True)
    gh = fake_bin / "gh"
    gh.write_text('#!/bin/sh\n[ "$1 $2" = "release download" ] || exit 2\n'
                  '[ -n "$FAKE_BASE" ] || { echo "release not found" >&2; exit 1; }\n'
                  'while [ "$1" != --dir ]; do shift; done\ncp "$FAKE_BASE" "$2/docs-index-1.db"\n')
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "runner").mkdir()
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}", "FAKE_BASE": str(base or ""),
           "RUNNER_TEMP": str(tmp_path / "runner"), "GITHUB_STEP_SUMMARY": str(summary),
           "GITHUB_REPOSITORY": "example/docs", "GH_TOKEN": "fake-token", "MDFTS": str(BIN / "mdfts"), "NEW": str(new)}
    assert set(step["env"]) <= {"GH_TOKEN", "MDFTS", "NEW"}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                          env=env, capture_output=True, text=True, check=False)
    return done, summary.read_text() if summary.exists() else ""


def test_the_examples_pull_request_diff_goes_to_the_job_summary(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nRun `deploy --canary`.\n")
    assert run_cli_ok("build", docs, "-o", tmp_path / "old.db")
    (docs / "a.md").write_text("# A\n\nRun `deploy --canary --wait`.\n")
    assert run_cli_ok("build", docs, "-o", tmp_path / "new.db")

    done, summary = _diff_step(tmp_path, tmp_path / "old.db", tmp_path / "new.db")
    assert done.returncode == 0, done.stderr
    assert summary.startswith("### Docs index changes\n") and "| `--wait` | cli_flag | `a.md:1` |" in summary

    first, summary = _diff_step(tmp_path / "first", None, tmp_path / "new.db")
    assert first.returncode == 0, first.stderr
    assert summary == "No release to compare with yet: a push to the default branch makes the first one.\n"


def run_cli_ok(*args: str | Path) -> bool:
    return _tool(BIN / "mdfts", *args, "-q").returncode == 0
