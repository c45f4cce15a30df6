# Two commands for a fresh machine: `make run` (the lab) and `make test` (the whole suite).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The torch build to install when the venv has none: the package index's default build (on Linux
# that is the CUDA build; where pip is set up with a local CPU wheel of this version, 2.13.0+cpu,
# that one wins, as a local version label sorts above the index's plain 2.13.0). On a
# Linux machine without a GPU pass PyTorch's own CPU wheel index as TORCH_INDEX to skip the
# multi-GB CUDA download; for a specific CUDA version pass that CUDA index (README, "Install").
TORCH ?= torch==2.13.0
TORCH_INDEX ?=
PRESET ?= skewed_mul

.PHONY: run test install install-test wheels clean screenshots

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.torch: | $(VENV)/bin/python
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) $(TORCH)
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

# The suite in TEST_WORKERS pytest-xdist workers (one per core, at most 4): each test is its own
# process's business (tmp_path, no fixed port or shared file), so they run in any order on any worker.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))
test: install-test
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

# The docs' SVG screenshots of the lab (README.md, docs/TUI.md): a seeded skewed_mul run held at
# step SHOT_STEP, then the compare view; a few minutes on the CPU (bench/screenshots.py).
SHOT_STEP ?= 1500
screenshots: install
	$(PY) bench/screenshots.py --step $(SHOT_STEP) --out docs/screens

# Every dependency but torch, as wheels in wheels/, for a GPU box with its own CUDA torch and no
# package index (bench/gpu_check.sh installs from there). WHEELS_FOR picks that box's Python and
# platform, e.g. WHEELS_FOR="--python-version 3.12 --platform manylinux2014_x86_64".
WHEELS_FOR ?=
wheels: | $(VENV)/bin/python
	$(PY) -m pip download -q -d wheels --only-binary=:all: $(WHEELS_FOR) $$($(PY) -c "import tomllib; \
	p = tomllib.load(open('pyproject.toml', 'rb')); \
	print(' '.join(d for d in p['build-system']['requires'] + p['project']['dependencies'] \
	if not d.startswith('torch')))")

# Switching torch builds (CPU <-> CUDA) needs a fresh venv: `make clean` first.
clean:
	rm -rf $(VENV) build *.egg-info
