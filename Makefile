# The two commands a new user needs: `make demo` and `make test`.
BUILD_DIR ?= build
JOBS ?= 2
# ON: a compiler warning in pipetwin's own code fails the build (CI sets it).
WERROR ?= OFF

.PHONY: deps configure build demo test bench format clean sanitize-configure sanitize tsan fuzz-configure fuzz

deps:
	@tools/install_deps.sh

configure:
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DPIPETWIN_WERROR=$(WERROR) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j$(JOBS)

demo: deps build
	$(BUILD_DIR)/pipetwin simulate --trace $(BUILD_DIR)/quickstart.trace.json

test: deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

bench: deps build
	$(BUILD_DIR)/pipetwin_bench

# Reliability (docs/reliability.md), at -O1 with line tables and asserts on, no CUDA:
#  - build-asan: AddressSanitizer + UndefinedBehaviorSanitizer with GCC (the compiler Debian's
#    LibTorch is built with; clang-14 cannot read LibTorch 1.13's headers in C++20), for every
#    test, the LibTorch ranks included: their threads, sockets and child processes run sanitized.
#  - build-tsan: ThreadSanitizer with GCC and LibTorch, for the tests of concurrent code: the
#    LibTorch ranks (lane threads beside Gloo's, the launcher and its children), the lane runner,
#    the fork pool and the sweeps over it, UMPIPE's and the PipeDream planner's threads.
#  - build-fuzz: ASan + UBSan with clang-14, for the libFuzzer harnesses: every library carries
#    libFuzzer's coverage hooks (fuzzer-no-link). No LibTorch: no harness reaches it.
# LibTorch and Gloo themselves are not instrumented; what is reported inside them alone is
# suppressed in tools/sanitizer-suppressions/, each entry with its reason.
# The libraries compile as unity builds there (eight files per unit; a unit of the simulator
# took 21 s against 32 s for its files one by one), the tests file by file.
# SimGrid runs its actors on threads in these builds (sim/simgrid/engine_arguments.cpp).
SANITIZE_DIR ?= build-asan
FUZZ_DIR ?= build-fuzz
TSAN_DIR ?= build-tsan
FUZZ_SECONDS ?= 60
# Set, each harness runs this many inputs from seed FUZZ_SEED and the committed seeds alone, as
# much fuzzing on a slow machine as on a fast one (FUZZ_SECONDS caps it); unset, it runs for
# FUZZ_SECONDS.
FUZZ_RUNS ?=
FUZZ_SEED ?= 1
SANITIZER_CMAKE = -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
                  -DCMAKE_UNITY_BUILD=ON -DPIPETWIN_WITH_CUDA=OFF -DPIPETWIN_WITH_PYTHON=OFF \
                  -DPIPETWIN_WERROR=$(WERROR)
ASAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_FLAGS = -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined \
             -fno-omit-frame-pointer
SUPPRESSIONS = $(CURDIR)/tools/sanitizer-suppressions
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1:suppressions=$(SUPPRESSIONS)/asan.supp \
           LSAN_OPTIONS=suppressions=$(SUPPRESSIONS)/lsan.supp \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$(SUPPRESSIONS)/ubsan.supp
# The concurrent code: the LibTorch ranks (every real-rank test), the launcher, the lane runner,
# the fork pool and the sweeps over it, UMPIPE's population evaluated on threads (the search and
# `plan --threads`), the PipeDream planner's level-0 DPs on threads.
TSAN_TEST_FILES = (backend/torch/[a-z_]+|backend/common/(lane_runner|local_launcher|real_backend)|backend/run/real_run_driver|cli/run_(command|repeat)|sim/sweep/sweep|sim/umpipe/plan_evaluator|cli/plan_command|sim/planner/pipedream_planner)_test\.cpp$$
# LibTorch and Gloo are not instrumented: ThreadSanitizer sees the memory their calls to its
# interceptors touch (free, memcpy, a condition variable destroyed) but not the atomics that
# order those calls, and reported each such call as a race (a tensor whose last reference
# dropped on a Gloo worker, c10d's Work signalled after its unlock). ignore_noninstrumented_modules
# leaves those accesses unchecked and keeps their locks; pipetwin's own code is checked whole.
TSAN_ENV = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$(SUPPRESSIONS)/tsan.supp

sanitize-configure: deps
	@CC=gcc CXX=g++ cmake -S . -B $(SANITIZE_DIR) $(SANITIZER_CMAKE) \
	  -DPIPETWIN_WITH_TORCH=ON -DCMAKE_CXX_FLAGS="$(ASAN_FLAGS)" > /dev/null

# Every test under AddressSanitizer + UndefinedBehaviorSanitizer, the real ranks included.
sanitize: sanitize-configure
	cmake --build $(SANITIZE_DIR) -j$(JOBS) --target pipetwin_tests
	cd $(SANITIZE_DIR) && $(ASAN_ENV) ctest --output-on-failure -j$(JOBS)

# The concurrent tests under ThreadSanitizer, the real ranks included: every test of the files
# TSAN_TEST_FILES names (only they are compiled).
tsan: deps
	@CC=gcc CXX=g++ cmake -S . -B $(TSAN_DIR) $(SANITIZER_CMAKE) \
	  -DPIPETWIN_WITH_TORCH=ON -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
	  -DPIPETWIN_TEST_FILES='$(TSAN_TEST_FILES)' > /dev/null
	cmake --build $(TSAN_DIR) -j$(JOBS) --target pipetwin_tests
	cd $(TSAN_DIR) && $(TSAN_ENV) ctest --output-on-failure -j$(JOBS)

fuzz-configure: deps
	@CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_DIR) $(SANITIZER_CMAKE) \
	  -DPIPETWIN_WITH_TORCH=OFF -DPIPETWIN_FUZZ=ON -DCMAKE_CXX_FLAGS="$(FUZZ_FLAGS)" > /dev/null

# Each libFuzzer harness of fuzz/ for FUZZ_SECONDS (or FUZZ_RUNS inputs), JOBS at a time;
# fails on any finding.
fuzz: fuzz-configure
	cmake --build $(FUZZ_DIR) -j$(JOBS) --target fuzzers
	FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_SEED=$(FUZZ_SEED) \
	  fuzz/run_fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(JOBS)

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR) $(FUZZ_DIR) $(TSAN_DIR)
