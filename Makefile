# Two commands for a fresh machine: `make run` (the lab) and `make test` (the whole suite).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The torch build to install when the venv has none. torch==2.13.0 is the CPU build on a
# machine that carries that wheel locally, and the default (CUDA on Linux) build from the
# package index elsewhere. For a specific CUDA version pass that index, see README.
TORCH ?= torch==2.13.0
PRESET ?= skewed_mul

.PHONY: run test install install-test clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.torch: | $(VENV)/bin/python
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q $(TORCH)
	touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.torch
	$(PY) -m pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

run: install
	$(VENV)/bin/grok-tui --preset $(PRESET)

test: install-test
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info
