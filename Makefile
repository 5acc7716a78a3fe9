# RLX front door. `make demo` and `make test` are all a newcomer needs on Debian 12.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
export CCACHE_DIR ?= $(HOME)/.cache/rlx-ccache
# Paths inside the checkout enter ccache's hashes relative to it, so every clone — CI's fresh one
# at any path included — shares one cache.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= true

# Every Debian package the build and the tests need (installed with --no-install-recommends).
PACKAGES := build-essential cmake ninja-build ccache pkg-config git \
  libgtest-dev nlohmann-json3-dev libopenblas-dev libdnnl-dev libhwy-dev \
  libutf8proc-dev libpcre2-dev zlib1g-dev libpng-dev dataset-fashion-mnist

# src/formats tests: the numpy reference decoder and the clang libFuzzer + sanitizer build.
PACKAGES += python3-numpy clang libclang-rt-14-dev

# python/: `import rlx` (pybind11 for Debian's /usr/bin/python3, DLPack headers, pytest).
PACKAGES += pybind11-dev python3-pybind11 python3-dev libdlpack-dev python3-pytest

# src/serve: `rlx serve` on cpp-httplib; tests/serve drives it with the official `openai` npm
# client (installed below into $(NPM_DIR); the test skips without it).
PACKAGES += libcpp-httplib-dev

# tests/llm: Debian's PyTorch trains the small Qwen3 the quantization tests compare (once per
# build tree, ~10 s; the test skips without it) and regenerates tests/fixtures/qwen3.
PACKAGES += python3-torch

# src/codegen/cortexm: the exported Cortex-M programs are built with arm-none-eabi-gcc and newlib
# and run under qemu-system-arm (tests/cli/cortexm.sh; the test skips without them).
PACKAGES += gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm

# src/codegen/fpga: the exported SystemVerilog is simulated by its Verilator testbench and taken
# to an iCE40 UP5K bitstream by yosys, nextpnr-ice40 and icepack (tests/cli/fpga.sh; skips without).
PACKAGES += verilator yosys nextpnr-ice40 fpga-icestorm

# src/dist: communicators over Gloo (TCP; ibverbs built) and Open MPI; `rlx launch` starts the
# ranks (tests/cli/dist.sh, on loopback).
PACKAGES += libgloo-dev libopenmpi-dev openmpi-bin

# src/science and the linear algebra ops: LAPACKE (cpu factorizations), FFTW, SuiteSparse; SciPy
# for the side-by-side parity and speed checks (bench/linalg_peers.py).
PACKAGES += liblapacke-dev libfftw3-dev libsuitesparse-dev python3-scipy

# src/science/splat: rendered images are written as PNG through libpng.
PACKAGES += libpng-dev

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

# ---- src/formats: independent references and fuzzing ----
# npm packages the format tests use as independent references, kept outside the clone.
NPM_DIR ?= $(HOME)/.cache/rlx-npm
setup: npm-packages
npm-packages:
	@if command -v npm >/dev/null; then \
	  [ -f $(NPM_DIR)/node_modules/@huggingface/gguf/package.json ] || \
	  npm install --silent --no-audit --no-fund --prefix $(NPM_DIR) @huggingface/gguf || \
	  echo "make setup: npm could not install @huggingface/gguf; its test will skip"; \
	else echo "make setup: no npm; the @huggingface/gguf test will skip"; fi

# Every reader under AddressSanitizer + UBSan with clang's libFuzzer: the malformed-file catalogue
# and every format test, then each fuzz target for FUZZ_TIME seconds. `make fuzz FUZZ_TIME=600`
# fuzzes longer; `make test` runs the readers that need no more than src/formats and src/text
# briefly (fuzz-smoke; the others run there under the gcc replay driver instead, and here).
FUZZ_BUILD ?= build-fuzz
FUZZ_TIME ?= 120
FUZZ_FORMAT_TARGETS := fuzz_safetensors fuzz_gguf fuzz_hf_config fuzz_safetensors_index fuzz_npy fuzz_chat_template fuzz_tokenizer_json fuzz_gguf_tokenizer
FUZZ_LIBRARY_TARGETS := fuzz_ir_text fuzz_onnx_import fuzz_rten fuzz_server_request
FUZZ_TARGETS ?= $(FUZZ_FORMAT_TARGETS) $(FUZZ_LIBRARY_TARGETS)
setup: npm-openai
npm-openai:
	@if command -v npm >/dev/null; then \
	  [ -f $(NPM_DIR)/node_modules/openai/package.json ] || \
	  npm install --silent --no-audit --no-fund --prefix $(NPM_DIR) openai || \
	  echo "make setup: npm could not install openai; the server's client test will skip"; \
	else echo "make setup: no npm; the server's client test will skip"; fi

# The webgpu device's Dawn (npm webgpu: dawn.node, run by Node); its tests skip without it.
setup: npm-webgpu
npm-webgpu:
	@if command -v npm >/dev/null; then \
	  [ -f $(NPM_DIR)/node_modules/webgpu/package.json ] || \
	  npm install --silent --no-audit --no-fund --prefix $(NPM_DIR) webgpu || \
	  echo "make setup: npm could not install webgpu; the webgpu device's tests will skip"; \
	else echo "make setup: no npm; the webgpu device's tests will skip"; fi

# Long-run stability (not in make test): one compiled model from 8 threads, then the server under
# 8 loopback clients, SOAK_SECONDS each; every result stable, no request failed, RSS growth <= 1%
# after warm-up.
SOAK_SECONDS ?= 1800
.PHONY: soak
soak: build
	build/bin/rlx bench soak --seconds $(SOAK_SECONDS) --callers 8
	build/bin/rlx bench serve-soak --seconds $(SOAK_SECONDS) --clients 8

.PHONY: fuzz fuzz-smoke npm-packages npm-openai npm-webgpu
fuzz: setup
	@if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then \
	  echo "make fuzz: skipped: needs clang and libclang-rt-14-dev (make setup installs them)"; exit 0; fi; \
	set -e; \
	$(FUZZ_CONFIGURE); \
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target rlx_format_tests $(FUZZ_TARGETS); \
	$(FUZZ_BUILD)/bin/rlx_format_tests --gtest_brief=1; \
	for t in $(FUZZ_TARGETS); do \
	  case $$t in \
	    fuzz_ir_text) seeds=tests/ir_fuzz/corpus;; fuzz_onnx_import) seeds=tests/onnx/fuzz/corpus;; \
	    fuzz_rten) seeds=tests/onnx/fuzz/rten_corpus;; fuzz_server_request) seeds=tests/serve/fuzz/corpus;; \
	    *) seeds=tests/fuzz/corpus/$$t;; \
	  esac; \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  if $(FUZZ_BUILD)/bin/$$t -max_total_time=$(FUZZ_TIME) -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
	      -artifact_prefix=$(FUZZ_BUILD)/ $(FUZZ_BUILD)/corpus/$$t $$seeds > $(FUZZ_BUILD)/$$t.log 2>&1; then \
	    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" $(FUZZ_BUILD)/$$t.log | sed "s/^/$$t: /"; \
	  else tail -40 $(FUZZ_BUILD)/$$t.log; echo "make fuzz: $$t failed (log and crash input in $(FUZZ_BUILD)/)"; exit 1; fi; \
	done

fuzz-smoke:
	$(MAKE) fuzz FUZZ_TIME=10 FUZZ_TARGETS="$(FUZZ_FORMAT_TARGETS)"

# The clang + ASan + UBSan (+ LeakSanitizer) tree that `make fuzz` and `make sanitize` share.
FUZZ_CONFIGURE = cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRLX_SANITIZE=ON -DRLX_FUZZ=ON -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link >/dev/null

# The whole `make test` suite built with AddressSanitizer, UBSan and LeakSanitizer (the fuzz
# targets as libFuzzer binaries; CUDA is off in sanitizer builds, so docs_current — which compares
# the op table of the devices built — is left to `make test`, and so is `python`: an ASan-built
# extension needs the sanitizer runtime preloaded into the interpreter). Not in `make test`: it builds
# everything a second time and runs ~3x slower. Suppressions: tests/sanitize/.
SANITIZE_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitize/lsan.supp:print_suppressions=0 \
	SOAK_MAX_GROWTH=1  # ASan's quarantine keeps freed memory: RSS is not the program's there
.PHONY: sanitize
sanitize: setup
	@command -v clang++ >/dev/null || { echo "make sanitize: needs clang (make setup installs it)"; exit 1; }
	$(FUZZ_CONFIGURE)
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	cd $(FUZZ_BUILD) && $(SANITIZE_ENV) ctest --output-on-failure $(if $(SANITIZE_TESTS),-R '$(SANITIZE_TESTS)') -E '^(docs_current|python)$$' --timeout 3600

test: fuzz-smoke

# The concurrency tests under ThreadSanitizer (`build-tsan/`, clang; not in `make test`): the
# server and its continuous-batching engine, one compiled model run from many threads, the thread
# pool, Gloo pipeline/data-parallel ranks in threads, first lookups of the registry; then both
# soaks for TSAN_SOAK_SECONDS each. The GPU-API devices are left out of this tree (their drivers'
# threads are not instrumented; they run under ASan in `make sanitize`). Suppressions:
# tests/sanitize/tsan.supp (third-party code only).
TSAN_BUILD ?= build-tsan
TSAN_SOAK_SECONDS ?= 30
TSAN_UNIT_FILTER ?= Session.*:RegistryDeathTest.*:Pipeline*:Communicator.*:TrainStep.*:ThreadPool.*
TSAN_ENV = TSAN_OPTIONS=halt_on_error=1:ignore_noninstrumented_modules=1:second_deadlock_stack=1:history_size=4:suppressions=$(CURDIR)/tests/sanitize/tsan.supp
# TSan's shadow memory grows with what the program touches: RSS there is not the program's
TSAN_SOAK = --max-growth 1
.PHONY: tsan
tsan: setup
	@command -v clang++ >/dev/null || { echo "make tsan: needs clang (make setup installs it)"; exit 1; }
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DCMAKE_C_FLAGS="-O1 -gline-tables-only" -DRLX_TSAN=ON -DRLX_BACKEND_VULKAN=OFF -DRLX_BACKEND_OPENGL=OFF \
	  -DRLX_BACKEND_OPENCL=OFF -DRLX_BACKEND_WEBGPU=OFF -DRLX_BACKEND_DIRECTX=OFF >/dev/null
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target rlx_cli rlx_unit_tests rlx_serve_tests
	$(TSAN_ENV) $(TSAN_BUILD)/bin/rlx_unit_tests --gtest_brief=1 --gtest_filter='$(TSAN_UNIT_FILTER)'
	$(TSAN_ENV) $(TSAN_BUILD)/bin/rlx_serve_tests --gtest_brief=1
	$(TSAN_ENV) $(TSAN_BUILD)/bin/rlx bench soak --seconds $(TSAN_SOAK_SECONDS) --callers 8 $(TSAN_SOAK)
	$(TSAN_ENV) $(TSAN_BUILD)/bin/rlx bench serve-soak --seconds $(TSAN_SOAK_SECONDS) --clients 8 $(TSAN_SOAK)

# ---- src/frontends/onnx: ONNX import, the backend conformance suite, PyTorch → ONNX parity ----
# libonnx/protobuf to build the importer; the backend test data and python3-onnx for its tests.
PACKAGES += libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
# The vulkan device: headers, lavapipe (CI's Vulkan), glslc for shaders compiled at build time and
# static shaderc/glslang/SPIRV-Tools for the kernels generated at run time.
PACKAGES += libvulkan-dev mesa-vulkan-drivers glslc libshaderc-dev glslang-dev spirv-tools spirv-headers
# The opengl device: EGL and GL headers (libEGL is opened at run time), Mesa's EGL and llvmpipe
# (CI's OpenGL 4.5, no display needed).
PACKAGES += libegl-dev libgl-dev libegl-mesa0 libgl1-mesa-dri
# the gpu device (OpenCL): the ICD loader, PoCL as the CI driver, the headers
PACKAGES += ocl-icd-libopencl1 pocl-opencl-icd opencl-c-headers
# the webgpu export's page is tested in headless Chromium (its WebGPU on the SwiftShader it ships)
PACKAGES += chromium
# the rocm device (built, not run: no AMD GPU): hipcc builds its exports for gfx90a and gfx1030
PACKAGES += hipcc
# .rten models: the FlatBuffers compiler and headers for the reader (src/frontends/rten).
PACKAGES += flatbuffers-compiler libflatbuffers-dev
ONNX_DATA ?= /usr/share/libonnx-testdata/data
ONNX_DEVICE ?= cpu
ONNX_PARITY_DIR ?= $(BUILD)/onnx-parity
.PHONY: onnx-suite onnx-parity npm-onnxruntime fpga-timing
setup: npm-onnxruntime
npm-onnxruntime:
	@if command -v npm >/dev/null; then \
	  [ -f $(NPM_DIR)/node_modules/onnxruntime-node/package.json ] || \
	  ONNXRUNTIME_NODE_INSTALL=skip npm install --silent --no-audit --no-fund --prefix $(NPM_DIR) onnxruntime-node || \
	  echo "make setup: npm could not install onnxruntime-node; make onnx-parity will skip"; \
	else echo "make setup: no npm; make onnx-parity will skip"; fi

# tests/cli/fpga.sh with the jet tagger's timing estimate (yosys synth_xilinx + sta of its ~4,000
# constant multipliers: about a quarter of an hour on 2 cores).
fpga-timing: build
	tests/cli/fpga.sh $(BUILD)/bin/rlx --timing

# The ONNX backend test data (node, pytorch-converted, pytorch-operator, simple): one line per
# failing or skipped test with its reason, then `N passed, M failed, K skipped` per folder.
onnx-suite: build
	@for d in node pytorch-converted pytorch-operator simple; do \
	  echo "== $$d ($(ONNX_DEVICE))"; $(BUILD)/bin/rlx onnx-suite $(ONNX_DATA)/$$d --device $(ONNX_DEVICE) || true; \
	done

# rlx run vs onnxruntime-node on torchvision resnet18/mobilenet_v2/squeezenet and a small BERT
# exported by Debian's PyTorch (installed on demand: ~600 MB).
onnx-parity: build
	@$(MAKE) --no-print-directory setup PACKAGES="python3-torch python3-torchvision python3-numpy"
	tests/onnx/parity/parity.sh $(BUILD)/bin/rlx $(ONNX_PARITY_DIR) $(NPM_DIR)
