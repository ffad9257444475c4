# Set-up and checks. `make demo` and `make test` are the two commands of the README.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

# llama.cpp must be built for a portable CPU target: a build tuned to the build machine's CPU
# ("native") crashes at the first decode on some virtual machines. pip caches the wheel.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF
export FORCE_CMAKE ?= 1

.PHONY: demo test check lint typecheck install install-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install 'torch==2.13.0'
	$(BIN)/pip install -e '.[test,transformers,inspect,ray,pyrit]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

## Audit the embedded LLM judge and the profanity classifier on the demo data; compare them.
demo: install
	$(BIN)/judgeprobe demo

lint: install-test
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: install-test
	$(BIN)/mypy

## Lint, type-check and run the whole test suite (doctests included).
test: lint typecheck
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) judgeprobe-demo judgeprobe-out .pytest_cache .mypy_cache .ruff_cache
