# `make test` and `make run` each build .venv from the project's own files first: the
# package with its test extra, what a contributor installs (so a test dependency missing
# from that extra fails here, not only on a machine that happens to have it).
# `make test` runs the suite but the tests marked slow; `make test-slow` runs those alone,
# stopped after SLOW_TIMEOUT seconds in all (CI runs both, in this order).
# `make run` is the quick reproduction: embedded data sets (no data directory), 3 splits,
# every method, the comparison table printed and written with the figures under out/.
# Without a data directory the quick reproduction's data sets are not the paper's: its
# tables say "no paper value" and Fig. 3 is drawn on digits instead of vowel (it says so).
# `make bench` runs the four performance benchmarks of BENCHMARKS.md on the letter data
# (DATA_DIR, default ../shared/datasets) and writes their records to benchmarks/results/.
# `make docs` installs the docs extra and builds the site into docs/_build/html, running
# every gallery example, with warnings as errors; `make docs-noplot` builds it without
# running the examples (what CI does).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.docs-installed
DATA_DIR ?= ../shared/datasets
SPHINXOPTS ?=
SPHINX := $(BIN)/python -m sphinx -W --keep-going -b html $(SPHINXOPTS)

SLOW_TIMEOUT ?= 300

.PHONY: test test-slow run bench venv clean docs docs-noplot

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

test-slow: $(STAMP)
	timeout $(SLOW_TIMEOUT) $(BIN)/python -m pytest -q -m slow

run: $(STAMP)
	$(BIN)/convexagg reproduce --datasets digits,wine,iris --reps 3 --ecoc-candidates 2000 --jobs 2 --out out/quick
	$(BIN)/convexagg figures --quick --jobs 2 --out out/figures

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	for b in fit predict scaling end_to_end; do \
		$(BIN)/python benchmarks/bench_$$b.py --data-dir $(DATA_DIR) --out benchmarks/results/$$b.json || exit 1; \
	done

$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(SPHINX) docs docs/_build/html

docs-noplot: $(DOCS_STAMP)
	$(SPHINX) -D plot_gallery=0 docs docs/_build/html-noplot

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache out
	rm -rf docs/_build docs/generated docs/auto_examples docs/sg_execution_times.rst
