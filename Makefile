# acdc: two commands do all set-up. `make run` serves the app; `make test` runs every test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
REPO ?= $(CURDIR)
PORT ?= 8000
STAMP := $(VENV)/.installed

.PHONY: run test lint bench chromium bubblewrap clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Exactly the tested versions, checked against their hashes, then acdc itself (editable).
$(STAMP): requirements/lock.txt pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements/lock.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/acdc serve "$(REPO)" --port $(PORT)

chromium:
	@bash scripts/ensure-chromium

bubblewrap:
	@bash scripts/ensure-bubblewrap

# PYTEST_ARGS: more for pytest (.ci/run asks for the slowest tests). Exit 5 is pytest's
# "no test selected", which a pass that selects by what tests use may meet: not a failure.
PYTEST_ARGS ?=
# Both cores: with pytest-xdist installed and two or more CPUs, two workers; the browser
# tests are one group (tests/passes.py), run by one worker while the other runs the rest.
# PYTEST_WORKERS=0 runs every test in this one process.
PYTEST_WORKERS ?= $(shell [ "$$(nproc 2>/dev/null || echo 1)" -ge 2 ] && echo 2 || echo 0)
XDIST = $(shell [ "$(PYTEST_WORKERS)" != 0 ] && $(BIN)/python -c "import xdist" 2>/dev/null \
  && echo "-n $(PYTEST_WORKERS) --dist loadgroup")
test: $(STAMP) chromium bubblewrap
	status=0; $(BIN)/python -m pytest $(XDIST) $(PYTEST_ARGS) || status=$$?; \
	  if [ $$status -eq 5 ]; then echo "make test: no test was selected"; exit 0; fi; exit $$status

lint: $(STAMP)
	$(BIN)/ruff check acdc chat history contextcore bench tests

bench: $(STAMP)
	$(BIN)/acdc bench all

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
