# perfkit — two commands: `make reproduce` and `make test`.
# Both bootstrap a local virtual environment (.venv) from pyproject.toml first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.perfkit-installed
QUICK  ?=
PYTEST_ARGS ?=

ifeq ($(QUICK),1)
REPRO_FLAGS := --quick --figures-dir build/quick/figures
endif

.PHONY: help setup reproduce test lab clean collect collect-ch5

help:
	@echo "make reproduce [QUICK=1]  execute every chapter notebook (build/ + figures/)"
	@echo "make test                 run the test suite"
	@echo "make lab                  open JupyterLab on the repository: notebooks/ and the executed copies in build/"
	@echo "make setup                only create .venv and install perfkit"
	@echo "make collect              measure this machine: ch3, noise, epoch, ch4 (about 45 min on 2 cores)"
	@echo "make collect-ch5          Chapter 5: volume study, then 1500 3D-ResAttNet-18 samples (about 4 h on 2 cores)"

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,measure]'
	@# saving a notebook in JupyterLab must not dirty git: strip outputs and machine metadata on `git add`
	-git config filter.perfkit-nbclean.clean "$(CURDIR)/$(PY) -m perfkit.report.nbclean"
	-git config filter.perfkit-nbclean.smudge cat
	@touch $(STAMP)

setup: $(STAMP)

reproduce: $(STAMP)
	$(VENV)/bin/perfkit reproduce $(REPRO_FLAGS)

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

# Measured datasets for this machine (resumable: re-run after an interruption).
FRAMEWORK ?= pytorch
DEVICE    ?= cpu
collect: $(STAMP)
	$(VENV)/bin/perfkit collect ch3   --framework $(FRAMEWORK) --device $(DEVICE)
	$(VENV)/bin/perfkit collect noise --framework $(FRAMEWORK) --device $(DEVICE)
	$(VENV)/bin/perfkit collect epoch --framework $(FRAMEWORK) --device $(DEVICE)
	$(VENV)/bin/perfkit collect ch4   --framework $(FRAMEWORK) --device $(DEVICE)

# Chapter 5. On a GPU pass VOLUME=181x217x181 for full-size volumes (the volume study keeps its own sizes).
VOLUME ?= 48x56x48
collect-ch5: $(STAMP)
	$(VENV)/bin/perfkit collect ch5vol --framework $(FRAMEWORK) --device $(DEVICE)
	$(VENV)/bin/perfkit collect ch5    --framework $(FRAMEWORK) --device $(DEVICE) --volume $(VOLUME)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" --LabApp.default_url=/lab/tree/notebooks

clean:
	rm -rf build .pytest_cache
