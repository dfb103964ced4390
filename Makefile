# One Makefile: CI runs what a developer runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: chat test docs lint bench lock clean

# constraints.txt pins every version, so `make test` here and in CI installs the same set.
$(STAMP): pyproject.toml constraints.txt setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

chat: $(STAMP)
	$(BIN)/agentbot chat

test: $(STAMP)
	$(BIN)/ruff check agent adapters bots tests docs
	$(BIN)/mypy
	$(BIN)/lint-imports
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	$(BIN)/pytest

# The documentation site, served with live reload while you edit docs/ (make test builds it with --strict).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

bench: $(STAMP)
	$(BIN)/agentbot bench

# Re-resolve pyproject's ranges to the newest releases and pin them; review the diff, then `make test`.
lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/pip install --quiet '.[dev]'
	{ sed -n '1,2p' constraints.txt; .venv-lock/bin/pip freeze --exclude-editable | grep -iv '^agentbot'; } > constraints.new
	mv constraints.new constraints.txt
	rm -rf .venv-lock build

clean:
	rm -rf $(VENV) var build dist site
