# The README's commands. `make run` and `make test` each create .venv on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run serve cli test lint format typecheck pytest seed clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# The CPU build of torch first, pinned: anything looser pulls a multi-GB CUDA build.
	$(BIN)/pip install --disable-pip-version-check torch==2.13.0
	$(BIN)/pip install --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

# The Gradio app on 127.0.0.1:7860 (flags via ARGS, e.g. ARGS="--port 8080 --mcp").
run: $(STAMP)
	$(BIN)/python app.py $(ARGS)

# The whole set on this machine: N app workers behind nginx, one Chroma server, one data folder
# (deploy/serve.py; needs nginx: apt-get install nginx). Ctrl-C stops all of it. Ports and
# worker count: ARGS="--workers 2 --port 7860" or GPU_ADVISOR_WORKERS, GPU_ADVISOR_PORT, ...
serve: $(STAMP)
	$(BIN)/python -m deploy.serve $(ARGS)

# The command line, e.g. make cli ARGS="estimate --model llama-3.1-8b --method qlora".
cli: $(STAMP)
	$(BIN)/gpu-advisor $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test: lint typecheck pytest

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Regenerate the shipped seed vectors after editing knowledge/docs/ (incremental; commit
# knowledge/data/).
seed: $(STAMP)
	$(BIN)/python -m knowledge.seed_cache

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
