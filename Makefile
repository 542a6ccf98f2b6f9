# `make test` and `make run` each build .venv from the project's own files first.
# `make run` is the quick reproduction: embedded data sets (no data directory), 3 splits,
# every method, the comparison table printed and written with the figures under out/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test run venv clean

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

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache out
