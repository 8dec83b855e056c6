# Makefile - the two entry points of the README: `make demo` and `make test`.
# Both install what is missing (Debian packages with apt-get, Python test tooling into .venv),
# build, and then run the demo or every test. CMake does the actual build.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
JOBS ?= $(shell nproc)
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build
BUILD_ASAN := build-asan
BUILD_FUZZ := build-fuzz
BUILD_EMU := build-emu
FUZZ_SECONDS ?= 60
OUT := out
DOCS := build-docs

DEB_PACKAGES := cmake make gcc pkg-config protobuf-c-compiler libprotobuf-c-dev libcmocka-dev \
	libxxhash-dev libsleef-dev libmicrohttpd-dev libcjson-dev \
	clang libclang-rt-14-dev xz-utils python3 python3-venv fonts-dejavu-core libsimde-dev python3-dev ninja-build \
	libb64-0d

.PHONY: all deps venv build build-asan demo test unit emulated conformance cli server models fuzz python docs clean deploy-check realmodels

all: build

# Installs the Debian packages that are missing (needs root, as on the project's machines).
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# rapidocr_onnxruntime only for the PP-OCR .onnx models it ships (bench/accuracy): --no-deps keeps opencv & co. out.
$(VENV)/.stamp: tools/requirements.txt tools/requirements-nodeps.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r tools/requirements.txt
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps rapidocr_onnxruntime==1.4.4
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps -r tools/requirements-nodeps.txt
	touch $@

venv: deps $(VENV)/.stamp

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DTC_SANITIZE=ON >/dev/null
	cmake --build $(BUILD_ASAN) -j $(JOBS)

# Unit tests (cmocka, one process each) under AddressSanitizer + UndefinedBehaviorSanitizer.
unit: build-asan
	cd $(BUILD_ASAN) && ctest --output-on-failure -j $(JOBS)

# The AVX-512 (F/BW/VL/DQ, VNNI, BF16, FP16) and AMX kernels on a CPU that lacks them: a build whose AVX-512 files
# take SIMDe's portable intrinsics and whose AMX tiles are C (TC_ISA_EMULATION, isa_emulation.h), under the
# sanitizers; the unit and conformance tests then choose those tactics wherever the real ISA would. Correctness
# only; on a CPU without AVX2 it adds nothing.
emulated: venv
	cmake -S . -B $(BUILD_EMU) -DCMAKE_BUILD_TYPE=Debug -DTC_SANITIZE=ON -DTC_ISA_EMULATION=ON >/dev/null
	cmake --build $(BUILD_EMU) -j $(JOBS)
	cd $(BUILD_EMU) && ctest --output-on-failure -j $(JOBS)
	node_dir=$$($(PY) -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/node"))'); \
	ASAN_OPTIONS=detect_leaks=1 $(BUILD_EMU)/tests/tc_conformance "$$node_dir" --jobs $(JOBS)

# ONNX backend node tests shipped in the onnx package, run under the sanitizers.
conformance: venv build-asan
	node_dir=$$($(PY) -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/node"))'); \
	ASAN_OPTIONS=detect_leaks=1 $(BUILD_ASAN)/tests/tc_conformance "$$node_dir" --jobs $(JOBS)

# Real and generated models against onnxruntime (release build; ../shared/models when present):
# through build -> plan -> load -> run, then through the reference executor.
models: venv build
	$(PY) tests/models/run_model_tests.py --tailcut $(BUILD)/tailcut --work $(OUT)/models --path plan
	$(PY) tests/models/run_model_tests.py --tailcut $(BUILD)/tailcut --work $(OUT)/models --path reference

# The command line: bench (JSON, trace, profile) and bench/compare.py on a tiny generated model;
# the AVX-512, AVX2 and portable kernel paths end to end (TAILCUT_MAX_ISA) and the refusal of a
# plan whose ISA the machine (or the cap) lacks; malformed shape/profile/thread options refused with messages;
# input files of another dtype than the model's (float64, int64 for float32) refused by run/compare/calibrate/bench;
# tailcut compare and its --per-layer SQNR; INT8 (calibrate, build --int8, QDQ models against onnxruntime's
# quantize_static); FP16 and BF16 (build --fp16, --bf16); and the accuracy of a real pretrained model
# (PP-OCR direction classifier, FP32, INT8, FP16 and BF16) on rendered text.
cli: venv build
	bash tests/cli/test_bench_cli.sh $(BUILD) $(PY)
	bash tests/cli/test_isa_cap.sh $(BUILD) $(PY)
	bash tests/cli/test_cli_options.sh $(BUILD) $(PY)
	bash tests/cli/test_input_dtype.sh $(BUILD) $(PY)
	bash tests/cli/test_cpu_budget.sh $(BUILD) $(PY)
	bash tests/cli/test_plan_shapes.sh $(BUILD) $(PY)
	bash tests/cli/test_dynamic_anchors.sh $(BUILD) $(PY)
	bash tests/cli/test_declared_shapes.sh $(BUILD) $(PY)
	bash tests/cli/test_fold_first.sh $(BUILD) $(PY)
	bash tests/cli/test_if_runtime.sh $(BUILD) $(PY)
	bash tests/cli/test_loop_unroll.sh $(BUILD) $(PY)
	bash tests/cli/test_lrn_einsum.sh $(BUILD) $(PY)
	bash tests/cli/test_rnn_ort.sh $(BUILD) $(PY)
	bash tests/cli/test_compare.sh $(BUILD) $(PY)
	bash tests/cli/test_compare_layers.sh $(BUILD) $(PY)
	bash tests/cli/test_int8.sh $(BUILD) $(PY)
	bash tests/cli/test_half.sh $(BUILD) $(PY)
	bash tests/cli/test_qdq.sh $(BUILD) $(PY)
	bash tests/cli/test_progress.sh $(BUILD) $(PY)
	bash bench/accuracy/test_ocr_cls.sh $(BUILD) $(PY)

# tailcut serve over real HTTP on 127.0.0.1 (endpoints, JSON and binary inference vs tailcut run, errors,
# slow connections, SIGTERM), its scheduler (batch formation, queue bound, timeouts, priorities, instances,
# drain) and tailcut loadgen against it, sanitizer build; then a 20,000-request soak with an RSS bound on
# the release build (ASan's quarantine would grow RSS by design); real clients (tritonclient, perf_analyzer, the
# KServe v2 spec) on the release build too, so that perf_analyzer's load levels stay within a minute.
server: venv build-asan build
	timeout 600 $(PY) tests/server/test_server.py --tailcut $(BUILD_ASAN)/tailcut
	timeout 600 $(PY) tests/server/test_batching.py --tailcut $(BUILD_ASAN)/tailcut
	timeout 600 $(PY) tests/server/test_loadgen.py --tailcut $(BUILD_ASAN)/tailcut
	timeout 600 $(PY) tests/server/test_soak.py --tailcut $(BUILD)/tailcut
	timeout 600 $(PY) tests/server/test_clients.py --tailcut $(BUILD)/tailcut

# deploy/ offline: manifests against the Kubernetes and vendored KServe schemas and each other, tailcut serve started
# with each manifest's arguments, the Dockerfile (hadolint, sources, runtime libraries), the Grafana dashboard's metrics.
deploy-check: venv build
	timeout 300 $(PY) deploy/check_deploy.py --tailcut $(BUILD)/tailcut

# Pretrained models from PyPI packages (silero-vad: LSTM, 16 kHz streaming with the state carried; PP-OCR detector,
# recognizer, classifier) through libtailcut against onnxruntime, each with a dynamic profile run inside and outside.
realmodels: venv build
	$(PY) tests/realmodels/run_realmodels.py --lib $(BUILD)/libtailcut.so

# libFuzzer targets, FUZZ_SECONDS each, when clang is present.
fuzz: deps
	@if command -v clang >/dev/null; then \
	  CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=Debug -DTC_FUZZ=ON -DTC_TESTS=ON >/dev/null && \
	  cmake --build $(BUILD_FUZZ) -j $(JOBS) --target $$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$$//') && \
	  for f in tests/fuzz/fuzz_*.c; do \
	    name=$$(basename $$f .c); corpus=tests/fuzz/corpus_$${name#fuzz_}; work=$(BUILD_FUZZ)/corpus_$$name; \
	    mkdir -p $$work; echo "fuzzing $$name for $(FUZZ_SECONDS) s"; \
	    $(BUILD_FUZZ)/tests/$$name -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $$work $$( [ -d $$corpus ] && echo $$corpus ) 2>&1 | tail -n 3 || exit 1; \
	  done; \
	else echo "clang not found: fuzz targets skipped"; fi

# The Python package (python/): one wheel, built with its own libtailcut (CPU backend) in build-py, installed into
# .venv for the pytest suite (python/tests: against onnxruntime, errors, threads, calibration, compare); the suite
# also installs that wheel into a fresh venv and imports it from another folder.
PY_WHEELS := $(OUT)/wheel
python: venv
	rm -rf $(PY_WHEELS)
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(VENV)/bin/pip wheel -q --disable-pip-version-check --no-build-isolation \
	  --no-deps -w $(PY_WHEELS) -C build-dir=../build-py ./python
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps --force-reinstall $(PY_WHEELS)/tailcut-*.whl
	cd python/tests && TAILCUT_WHEEL=$$(ls $(CURDIR)/$(PY_WHEELS)/tailcut-*.whl) $(CURDIR)/$(PY) -m pytest -q -p no:cacheprovider .

# The documentation site (mkdocs, Material theme; tools/docs/requirements.txt): docs/ plus the reference pages
# generated from the code, built with --strict, then every internal link and anchor checked (tools/docs/build.sh);
# first the generators' own tests (tests/docs).
$(VENV)/.docs-stamp: tools/docs/requirements.txt $(VENV)/.stamp
	$(VENV)/bin/pip install -q --disable-pip-version-check -r tools/docs/requirements.txt
	touch $@

docs: venv build python $(VENV)/.docs-stamp
	$(PY) tests/docs/test_docs_tools.py
	bash tools/docs/build.sh $(BUILD)/tailcut $(PY) $(DOCS)

test: unit emulated conformance cli server models fuzz realmodels python deploy-check docs
	@echo "make test: all test suites passed"

demo: venv build
	bash tools/demo.sh $(BUILD)/tailcut $(PY) $(OUT)/demo

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ) $(OUT) build-py $(DOCS)
