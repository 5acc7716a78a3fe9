# RLX front door. `make demo` and `make test` are all a newcomer needs on Debian 12.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
export CCACHE_DIR ?= $(HOME)/.cache/rlx-ccache

# Every Debian package the build and the tests need (installed with --no-install-recommends).
PACKAGES := build-essential cmake ninja-build ccache pkg-config git \
  libgtest-dev nlohmann-json3-dev libopenblas-dev libdnnl-dev libhwy-dev \
  libutf8proc-dev libpcre2-dev zlib1g-dev libpng-dev dataset-fashion-mnist

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup configure build test demo docs clean

setup:
	@missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "make setup: installing$$(echo $$missing | sed 's/^/ /')"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	else echo "make setup: every package is installed"; fi

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: setup configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && RLX_VERIFY=2 ctest --output-on-failure -j $(JOBS)

demo: build
	$(BUILD)/bin/rlx demo

docs: build
	$(BUILD)/bin/rlx --list-flags --markdown > docs/flags.md
	$(BUILD)/bin/test_backend_ops --mode support --output docs/ops.md

clean:
	rm -rf $(BUILD)
