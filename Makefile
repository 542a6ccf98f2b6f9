# `make test` and `make run` each build .venv from the project's own files first: the
# package with its test extra, what a contributor installs (so a test dependency missing
# from that extra fails here, not only on a machine that happens to have it).
# `make test` runs the suite but the tests marked slow; `make test-slow` runs those alone,
# stopped after SLOW_TIMEOUT seconds in all (CI runs both, in this order).
# `make run` is the quick reproduction: embedded data sets (no data directory), 3 splits,
# every method, the comparison table printed and written with the figures under out/.
# Without a data directory the quick reproduction's data sets are not the paper's: its
# tables say "no paper value" and Fig. 3 is drawn on digits instead of vowel (it says so).
# `make bench` runs every benchmark of BENCHMARKS.md's table with the table's command, on the
# data sets in DATA_DIR (default ../shared/datasets), and writes their records to
# benchmarks/results/ (hours in all: the table gives each one's time). `make bench QUICK=1`
# runs each entry point's plumbing run instead (--quick: small sizes, one repetition; a few
# minutes in all), its records under out/bench-quick/ (benchmarks/results/ untouched).
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

# the entry points benchmarks/bench_<name>.py (bench_quality runs apart: its --out is a folder)
BENCHMARKS := fit predict end_to_end cv scaling large_n dask_out_of_core gpu cli_csv \
	loader_crafted model_files onnx decisions batched
BENCH := $(BIN)/python benchmarks
BENCH_DATA := --data-dir $(DATA_DIR)
RESULTS := benchmarks/results
QUICK_OUT := out/bench-quick

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
ifdef QUICK
	for b in $(BENCHMARKS); do \
		$(BENCH)/bench_$$b.py --quick $(BENCH_DATA) --out $(QUICK_OUT)/$$b.json || exit 1; \
	done
	for s in ten kull; do \
		$(BENCH)/bench_quality.py --suite $$s --quick $(BENCH_DATA) --out $(QUICK_OUT)/quality_$$s \
			|| exit 1; \
	done
else
	$(BENCH)/bench_fit.py $(BENCH_DATA) --out $(RESULTS)/fit.json
	$(BENCH)/bench_predict.py $(BENCH_DATA) --out $(RESULTS)/predict.json
	$(BENCH)/bench_end_to_end.py $(BENCH_DATA) --repeat 2 --n-jobs 1 --out $(RESULTS)/end_to_end.json
	$(BENCH)/bench_cv.py $(BENCH_DATA) --repeat 1 --out $(RESULTS)/cv.json
	$(BENCH)/bench_scaling.py $(BENCH_DATA) --out $(RESULTS)/scaling.json
	$(BENCH)/bench_large_n.py --rows 10000000 --modes recomputed --out $(RESULTS)/large_n_1e7.json
	$(BENCH)/bench_dask_out_of_core.py --rows 10000000 --out $(RESULTS)/dask_out_of_core_1e7.json
	$(BENCH)/bench_gpu.py --skip-without-gpu --out $(RESULTS)/gpu.json
	$(BENCH)/bench_cli_csv.py --out $(RESULTS)/cli_csv.json
	$(BENCH)/bench_loader_crafted.py --out $(RESULTS)/loader_crafted.json
	$(BENCH)/bench_model_files.py --repeat 5 --out $(RESULTS)/model_files.json
	$(BENCH)/bench_onnx.py $(BENCH_DATA) --out $(RESULTS)/onnx.json
	$(BENCH)/bench_decisions.py $(BENCH_DATA) --out $(RESULTS)/decisions.json
	$(BENCH)/bench_batched.py $(BENCH_DATA) --repeat 3 --out $(RESULTS)/batched.json
	$(BENCH)/bench_quality.py $(BENCH_DATA) --out $(RESULTS)/quality
	$(BENCH)/bench_quality.py --suite kull $(BENCH_DATA) --out $(RESULTS)/quality/kull
endif

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
