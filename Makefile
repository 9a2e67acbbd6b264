# Thin targets; CI (.ci/run) and the README call these.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
SHARED ?= ../shared
# The evaluator's own venv (its requirements: rank-bm25, bm25s, PyStemmer, ...); made when missing.
EVALVENV ?= $(SHARED)/../evalvenv

.PHONY: setup sample test quick lint cli-docs bench eval stress clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# `make sample` needs the package alone: a plain install of it (an editable one of this
# layout makes setuptools print a boxed warning), unless an editable install is there. The
# build runs in the tree: build/lib goes first, or a module deleted since would ship again.
$(BIN)/mdfts: pyproject.toml $(shell find builder queries -type f -not -path "*/__pycache__/*") | $(BIN)/python
	@if [ -f $(VENV)/.dev ] || ls $(VENV)/lib/python*/site-packages/__editable__*mdfts* >/dev/null 2>&1; \
	then touch $@; else rm -rf build/lib && $(BIN)/python -m pip install --quiet . && touch $@; fi

# Everything else: editable, with the test, Datasette, bench and agent extras.
$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,datasette,bench,mcp,llm]'
	@touch $@ $(BIN)/mdfts

setup: $(VENV)/.dev

sample: $(BIN)/mdfts  ## build the bundled sample docs, show the index, run one search
	$(BIN)/mdfts build sample/docs -o dist/sample-docs.db
	$(BIN)/mdfts info dist/sample-docs.db
	$(BIN)/mdfts search dist/sample-docs.db "payments rollback PAYMENTS_DB_URL" -k 3

test: setup  ## the whole test suite (what CI runs)
	$(BIN)/python -m pytest -q

quick: setup  ## the fast subset for the edit loop: no slow, integration, packaging or browser tests; one worker a core
	$(BIN)/python -m pytest -q -n auto -m "not slow and not integration and not packaging and not browser"

lint: setup  ## ruff; workflows and action.yml (offline linters); mypy --strict on the package, bench/, tools/
	$(BIN)/python -m ruff check builder bench tests tools
	$(BIN)/python -m pytest -q tests/test_workflows.py
	rm -rf build/mypy && mkdir -p build/mypy && ln -s ../../builder build/mypy/mdfts
	MYPYPATH=build/mypy $(BIN)/python -m mypy -p mdfts -p bench -p tools

cli-docs: setup  ## regenerate docs/cli.md from --help (after any CLI change; a test checks it)
	$(BIN)/python tools/cli_docs.py docs/cli.md

eval: setup  ## retrieval quality: the bundled sample, then every ../shared/devset set next to fts5naive and bm25s
	$(BIN)/mdfts build sample/docs -o dist/sample-docs.db -q
	$(BIN)/mdfts eval dist/sample-docs.db sample/queries.jsonl
	@if [ ! -d $(SHARED)/devset ]; then echo "no $(SHARED)/devset: skipped the dev sets"; \
	elif [ ! -f $(SHARED)/eval/requirements.txt ]; then echo "no $(SHARED)/eval/requirements.txt: skipped the dev sets"; \
	else \
	  [ -x $(EVALVENV)/bin/python ] || { $(PYTHON) -m venv $(EVALVENV) && \
	    $(EVALVENV)/bin/pip install --quiet -r $(SHARED)/eval/requirements.txt; } && \
	  $(BIN)/python -m bench devsets $(SHARED) --eval-python $(EVALVENV)/bin/python --mdfts-cmd $(BIN)/mdfts \
	    --heldout bench/heldout; \
	fi
	@for c in $(SHARED)/devset/opsdocs $(SHARED)/corpora/*/; do \
	  if [ -d $$c ]; then \
	    $(BIN)/mdfts build $$c -o dist/corpus-check.db -q && \
	    $(BIN)/python -m bench check-corpus $$c dist/corpus-check.db | tail -1 || exit 1; \
	  fi; done
	@for c in openshift-runbooks prometheus-operator-runbooks; do \
	  if [ -d $(SHARED)/corpora/$$c ]; then \
	    echo "== $$c: <AlertName> <heading> spot checks" && \
	    $(BIN)/mdfts build $(SHARED)/corpora/$$c -o dist/$$c.db -q && \
	    $(BIN)/python -m bench alert-queries dist/$$c.db > dist/$$c.queries.jsonl && \
	    $(BIN)/mdfts eval dist/$$c.db dist/$$c.queries.jsonl; \
	  fi; done

bench: setup  ## speed, size and memory, side by side (writes docs/benchmarks.md); BENCH_ARGS="--quick" for a smoke test
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench speed $(BENCH_ARGS)

stress: setup  ## build memory, pathological markdown, huge queries; the #16 hostile corpus (docs/bad-input.md)
	$(BIN)/python -m bench stress $(or $(STRESS_ARGS),sample/docs $(foreach c,$(wildcard $(SHARED)/corpora/*/),--with-corpus $(c)))

clean:
	rm -rf dist build *.egg-info .pytest_cache .hypothesis
