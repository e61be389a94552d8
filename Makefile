# Two entry points: `make studio` (GUI on the embedded sample) and `make test` (the whole suite).
# Both build .venv from nothing on first use and reuse it afterwards.
PY := .venv/bin/python
STAMP := .venv/.installed

.PHONY: studio test venv lint

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3.11 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	# the CPU build of torch lies on local disk; install it before anything can ask for another one
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

studio: $(STAMP)
	.venv/bin/streamlit run app/studio.py --server.address localhost

test: $(STAMP)
	.venv/bin/ruff check .
	$(PY) -m pytest -q

lint: $(STAMP)
	.venv/bin/ruff check .
