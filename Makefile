# `make test` and `make run` each build .venv from the project's own files first.
# `make run` is the quick reproduction: embedded data sets (no data directory), 3 splits,
# every method, the comparison table printed and written with the figures under out/.
# `make bench` runs the four performance benchmarks of BENCHMARKS.md on the letter data
# (DATA_DIR, default ../shared/datasets) and writes their records to benchmarks/results/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DATA_DIR ?= ../shared/datasets

.PHONY: test run bench venv clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,experiments]"
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q

run: $(STAMP)
	$(BIN)/convexagg reproduce --datasets digits,wine,iris --reps 3 --ecoc-candidates 2000 --jobs 2 --out out/quick
	$(BIN)/convexagg figures --quick --jobs 2 --out out/figures

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	for b in fit predict scaling end_to_end; do \
		$(BIN)/python benchmarks/bench_$$b.py --data-dir $(DATA_DIR) --out benchmarks/results/$$b.json || exit 1; \
	done

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache out
