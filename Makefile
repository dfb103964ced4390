# One Makefile: CI runs what a developer runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: chat test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

chat: $(STAMP)
	$(BIN)/agentbot chat

test: $(STAMP)
	$(BIN)/ruff check agent adapters bots tests
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/agentbot bench

clean:
	rm -rf $(VENV) var
