# `make demo` and `make test` each build their own virtual environment.
PYTHON ?= python3
DEMO_VENV := .venv-demo
TEST_VENV := .venv-test
PIP_FLAGS := --quiet --disable-pip-version-check

.PHONY: demo test e2e clean

$(DEMO_VENV)/.done: pyproject.toml
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/pip install $(PIP_FLAGS) -e . "torch==2.13.0"
	touch $@

$(TEST_VENV)/.done: pyproject.toml
	$(PYTHON) -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/pip install $(PIP_FLAGS) -e ".[test]"
	touch $@

demo: $(DEMO_VENV)/.done
	$(DEMO_VENV)/bin/python bench/demo.py

test: $(TEST_VENV)/.done
	$(TEST_VENV)/bin/python -m pytest -q

clean:
	rm -rf $(DEMO_VENV) $(TEST_VENV) demo-out dist build
