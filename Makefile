# perfkit — two commands: `make reproduce` and `make test`.
# Both bootstrap a local virtual environment (.venv) from pyproject.toml first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.perfkit-installed
QUICK  ?=
PYTEST_ARGS ?=
# test workers (pytest-xdist): one per core, at most 4 (each runs notebooks, fits and framework workers of its own);
# PYTEST_WORKERS=0 runs every test in one process
PYTEST_WORKERS ?= auto
# extra flags for `jupyter lab`, e.g. make lab LAB_ARGS="--no-browser --port 8899"
LAB_ARGS ?=

ifeq ($(QUICK),1)
REPRO_FLAGS := --quick --figures-dir build/quick/figures
endif
ifeq ($(NO_CACHE),1)
REPRO_FLAGS += --no-cache
endif

.PHONY: help setup frameworks reproduce course test lab clean collect collect-ch5 collect-frameworks collect-frameworks-ch4

help:
	@echo "make reproduce [QUICK=1] [NO_CACHE=1]  execute every chapter notebook (build/ + figures/; QUICK=1: build/quick/ + build/quick/figures/, never figures/); NO_CACHE=1 recomputes results"
	@echo "make course [QUICK=1] [SOLUTIONS=1] [UNIT=n]  execute the course's units headless (build/course/; quick: build/quick/course/; SOLUTIONS=1: the instructor's solution notebooks)"
	@echo "make test                 run the test suite"
	@echo "make lab [LAB_ARGS=...]   open JupyterLab on the repository: notebooks/ and the executed copies in build/ (as root: --allow-root)"
	@echo "make setup                only create .venv and install perfkit"
	@echo "make frameworks           build the TensorFlow, JAX and MXNet/Chainer environments under .envs/ (2.6 GB)"
	@echo "make collect              measure this machine: ch3, noise, epoch, ch4 (about 45 min on 2 cores)"
	@echo "make collect-frameworks   Chapter 3 phases + a short noise floor in TensorFlow, MXNet, Chainer and JAX"
	@echo "make collect-frameworks-ch4  Chapter 4 in TensorFlow, MXNet (1500 samples), Chainer and JAX (CH4_SMALL_SAMPLES)"
	@echo "make collect-ch5          Chapter 5: volume study, then 1500 3D-ResAttNet-18 samples (about 4 h on 2 cores)"

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "perfkit needs Python >= 3.11 (the pinned numpy/pandas/scipy/scikit-learn); $(PYTHON) is $$($(PYTHON) -V 2>&1). Use e.g. make setup PYTHON=python3.12" >&2; exit 1; }
	@echo "[setup] creating $(VENV) with $$($(PYTHON) -V 2>&1)"
	$(PYTHON) -m venv $(VENV)
	@echo "[setup] installing perfkit with its test and measure extras (versions from constraints.txt; a few minutes the first time)"
	$(PY) -m pip install -c constraints.txt -e '.[test,measure]'
	@echo "[setup] configuring the notebook filter (git) that strips outputs on git add"
	@# saving a notebook in JupyterLab must not dirty git: strip outputs and machine metadata on `git add`
	-git config filter.perfkit-nbclean.clean "$(CURDIR)/$(PY) -m perfkit.report.nbclean"
	-git config filter.perfkit-nbclean.smudge cat
	@touch $(STAMP)
	@echo "[setup] done: $(VENV) is ready"

setup: $(STAMP)

# Framework environments for `perfkit collect --framework tensorflow|jax|mxnet|chainer`, each from its pinned
# requirements (perfkit/measure/adapters/requirements/). PyTorch lives in .venv. MXNet 1.9.1 needs numpy 1.23.5,
# so MXNet and Chainer share a legacy environment; Chainer builds from source without build isolation.
REQ  := perfkit/measure/adapters/requirements
ENVS := .envs
FRAMEWORK_STAMPS := $(ENVS)/tensorflow/.installed $(ENVS)/jax/.installed $(ENVS)/legacy/.installed

$(ENVS)/tensorflow/.installed: $(REQ)/tensorflow.txt
	$(PYTHON) -m venv $(ENVS)/tensorflow
	$(ENVS)/tensorflow/bin/pip install --quiet -r $<
	@touch $@

$(ENVS)/jax/.installed: $(REQ)/jax.txt
	$(PYTHON) -m venv $(ENVS)/jax
	$(ENVS)/jax/bin/pip install --quiet -r $<
	@touch $@

$(ENVS)/legacy/.installed: $(REQ)/legacy.txt $(REQ)/legacy-sdist.txt
	$(PYTHON) -m venv $(ENVS)/legacy
	$(ENVS)/legacy/bin/pip install --quiet -r $(REQ)/legacy.txt
	$(ENVS)/legacy/bin/pip install --quiet --no-build-isolation -r $(REQ)/legacy-sdist.txt
	@touch $@

frameworks: $(FRAMEWORK_STAMPS)

# A full run also refreshes the generated blocks of README.md and docs/ (perfkit docs --write) from the new figures/.
reproduce: $(STAMP)
	$(VENV)/bin/perfkit reproduce $(REPRO_FLAGS)
ifneq ($(QUICK),1)
	$(VENV)/bin/perfkit docs --write
endif

# The course (notebooks/course/, not chapters: they write no figures/), each unit executed headless with
# live=False into build/course/ (QUICK=1: build/quick/course/; SOLUTIONS=1: the instructor's solution notebooks,
# built from notebooks/course/instructor/solutions/, into .../course/solutions/; UNIT=n: one unit)
SOLUTIONS ?=
UNIT ?=
course: $(STAMP)
	$(PY) -m perfkit.course.run $(if $(QUICK),--quick) $(if $(SOLUTIONS),--solutions) $(foreach u,$(UNIT),--unit $(u))

# The adapter tests run every framework for real: make test builds their environments first, and a missing
# one fails the run instead of skipping its tests (PERFKIT_REQUIRE_FRAMEWORKS=1). Likewise the browser test of the
# course's widgets fails without /usr/bin/chromium and /usr/bin/chromedriver (PERFKIT_REQUIRE_BROWSER=1; Debian:
# apt-get install chromium chromium-driver, which .ci/run does).
test: $(STAMP)
	$(MAKE) --no-print-directory -j3 frameworks
	PERFKIT_REQUIRE_FRAMEWORKS=1 PERFKIT_REQUIRE_BROWSER=1 PERFKIT_CELL_TIMEOUT=1800 $(PY) -m pytest \
	  -n $(PYTEST_WORKERS) --maxprocesses 4 $(PYTEST_ARGS)

# Measured datasets for this machine (resumable: re-run after an interruption).
FRAMEWORK ?= pytorch
DEVICE    ?= cpu
collect: $(STAMP)
	$(VENV)/bin/perfkit collect ch3   --framework $(FRAMEWORK) --device $(DEVICE)
	$(VENV)/bin/perfkit collect noise --framework $(FRAMEWORK) --device $(DEVICE)
	$(VENV)/bin/perfkit collect epoch --framework $(FRAMEWORK) --device $(DEVICE)
	$(VENV)/bin/perfkit collect ch4   --framework $(FRAMEWORK) --device $(DEVICE)

# Chapter 3 across frameworks: phase timing and a short noise floor for every framework beside PyTorch
# (resumable; about 40 min on 2 cores). One framework at a time: two collections at once disturb each other.
OTHER_FRAMEWORKS ?= tensorflow mxnet chainer jax
collect-frameworks: $(STAMP) $(FRAMEWORK_STAMPS)
	set -e; for fw in $(OTHER_FRAMEWORKS); do \
	  $(VENV)/bin/perfkit collect ch3   --framework $$fw --device $(DEVICE); \
	  $(VENV)/bin/perfkit collect noise --framework $$fw --device $(DEVICE) --samples 20 --rounds 3; \
	done

# Chapter 4 across frameworks: the same configurations as PyTorch's (same sampler and seed), one framework at a
# time (resumable: re-run after an interruption; a larger --samples later extends a file with the same samples).
# TensorFlow and MXNet take 1500 samples (66 and 28 min here on 2 cores); Chainer and JAX CH4_SMALL_SAMPLES
# (Chainer 14 min here; JAX about 50 min for 500).
CH4_SMALL_SAMPLES ?= 500
collect-frameworks-ch4: $(STAMP) $(FRAMEWORK_STAMPS)
	set -e; for fw in tensorflow mxnet; do \
	  $(VENV)/bin/perfkit collect ch4 --framework $$fw --device $(DEVICE); \
	done; \
	for fw in chainer jax; do \
	  $(VENV)/bin/perfkit collect ch4 --framework $$fw --device $(DEVICE) --samples $(CH4_SMALL_SAMPLES); \
	done; \
	for fw in tensorflow mxnet chainer jax; do \
	  $(VENV)/bin/perfkit collect epoch --framework $$fw --device $(DEVICE); \
	done

# Chapter 5. On a GPU pass VOLUME=181x217x181 for full-size volumes (the volume study keeps its own sizes).
VOLUME ?= 48x56x48
collect-ch5: $(STAMP)
	$(VENV)/bin/perfkit collect ch5vol --framework $(FRAMEWORK) --device $(DEVICE)
	$(VENV)/bin/perfkit collect ch5    --framework $(FRAMEWORK) --device $(DEVICE) --volume $(VOLUME)

# JupyterLab refuses to start as root without --allow-root: added when `id -u` is 0 (unless LAB_ARGS has it).
LAB_ROOT_FLAG = $(if $(filter --allow-root,$(LAB_ARGS)),,$(if $(filter 0,$(shell id -u)),--allow-root))
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" --LabApp.default_url=/lab/tree/notebooks $(LAB_ROOT_FLAG) $(LAB_ARGS)

clean:
	rm -rf build .pytest_cache
