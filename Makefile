# The two commands a fresh machine needs: `make run` and `make test`.
# Each creates .venv when missing and installs what it needs first.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The install stamp is named after pyproject.toml's checksum: editing it reinstalls.
STAMP := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)

.PHONY: run test lint clean

# A test worker per core, each given whole files (a module's fixtures are made once), in the
# order they are collected: the files marked `long` first (tests/conftest.py), so no long file
# is left running alone at the end.
PYTEST_WORKERS ?= --numprocesses auto --dist loadfile --no-loadscope-reorder

# Festival speaks voice-overs; its SLT voice is a package with no command, named by its folder.
VOICE := text2wave:festival /usr/share/festival/voices/us/cmu_us_slt_arctic_hts:festvox-us-slt-hts

run: $(STAMP)
	@$(MAKE) --no-print-directory system-deps NEED="ffprobe:ffmpeg $(VOICE)"
	$(BIN)/spotforge serve

test: $(STAMP) lint
	@$(MAKE) --no-print-directory system-deps NEED="ffprobe:ffmpeg ffmpeg:ffmpeg chromium:chromium pg_ctlcluster:postgresql $(VOICE)"
	$(BIN)/pytest $(PYTEST_WORKERS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	rm -f $(VENV)/.installed-*
	touch $@

# Programs that come from the system, as command:debian-package pairs (or path:package for a
# package without a command). As root on Debian or Ubuntu the missing ones are installed;
# elsewhere this names them and stops.
.PHONY: system-deps
system-deps:
	@missing=""; \
	for pair in $(NEED); do \
	  command -v $${pair%%:*} >/dev/null || [ -e $${pair%%:*} ] || missing="$$missing $${pair##*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing system packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	      apt-get install -y -qq --no-install-recommends $$missing fonts-dejavu-core >/dev/null; \
	  else \
	    echo "missing system packages:$$missing (install them with your package manager)"; \
	    exit 1; \
	  fi; \
	fi

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
