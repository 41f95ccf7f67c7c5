# Causeway. `make demo` runs the whole flow; `make test` runs every test.
# Both install the Debian packages they need first (scripts/install-deps.sh).
JOBS ?= $(shell nproc)
RELEASE_DIR := build/release
# Where `make bench` writes its figures, one JSON line each (bench/record.sh).
BENCH_OUT := $(RELEASE_DIR)/bench-results.jsonl
TEST_DIR := build/asan

.PHONY: all deps test-deps build run demo test fuzz bench clean

all: build

deps:
	@scripts/install-deps.sh build

test-deps:
	@scripts/install-deps.sh test

$(RELEASE_DIR)/CMakeCache.txt:
	cmake -S . -B $(RELEASE_DIR) -DCMAKE_BUILD_TYPE=Release -DCAUSEWAY_TESTS=OFF -DCAUSEWAY_BENCH=ON

build: deps $(RELEASE_DIR)/CMakeCache.txt
	cmake --build $(RELEASE_DIR) -j $(JOBS)

# Starts the API server on 127.0.0.1:8080 with state in .data/.
run: build
	$(RELEASE_DIR)/causeway serve --listen 127.0.0.1:8080 --data-dir .data

# `make demo ARGS=--keep` leaves the server running afterwards.
demo: build
	@scripts/demo.sh $(RELEASE_DIR)/causeway $(ARGS)

# Tests build with AddressSanitizer and UndefinedBehaviorSanitizer.
$(TEST_DIR)/CMakeCache.txt:
	cmake -S . -B $(TEST_DIR) -DCMAKE_BUILD_TYPE=Debug -DCAUSEWAY_SANITIZE=ON -DCAUSEWAY_TESTS=ON -DCAUSEWAY_BENCH=OFF

# clang's -Wthread-safety checks the locking annotations (causeway/mutex.h);
# build_rules.sh checks that the launch protocol and the layers refuse what
# they forbid (docs/architecture.md);
# each fuzz target runs briefly first (FUZZ_SECONDS each, two at a time);
# `make fuzz` runs them longer.
FUZZ_SECONDS ?= 20
test: test-deps $(TEST_DIR)/CMakeCache.txt
	cmake --build $(TEST_DIR) -j $(JOBS)
	scripts/thread_safety.sh $(TEST_DIR)
	scripts/build_rules.sh $(TEST_DIR)
	scripts/fuzz.sh $(FUZZ_SECONDS)
	cd $(TEST_DIR) && ctest --output-on-failure -j $(JOBS)

# Every fuzz target for FUZZ_TIME seconds (default 600), e.g.
# `make fuzz FUZZ_TIME=60`, or one: `scripts/fuzz.sh 600 scim_filter`.
FUZZ_TIME ?= 600
fuzz: test-deps
	scripts/fuzz.sh $(FUZZ_TIME)

# Submit throughput through the HTTP API, scheduler decisions per second with
# the Alibaba 2023 trace replay, a reaper cycle, and a 10-million-row FOCUS
# import against DuckDB, requests through HAProxy managed by Causeway against
# HAProxy by hand, and jobs onto real Slurm and a real Kubernetes plane
# against their own CLIs and API (see bench/README.md).
bench: build
	@rm -f $(BENCH_OUT)
	bench/record.sh submit bench/submit/run.sh $(RELEASE_DIR)
	CAUSEWAY_SHARED_DATA=$${CAUSEWAY_SHARED_DATA:-../shared/data} bench/record.sh schedule $(RELEASE_DIR)/bench/schedule_bench
	CAUSEWAY_SHARED_DATA=$${CAUSEWAY_SHARED_DATA:-../shared/data} bench/record.sh plan $(RELEASE_DIR)/bench/plan_bench
	bench/record.sh forecast $(RELEASE_DIR)/bench/forecast_bench 300 examples
	bench/record.sh reaper $(RELEASE_DIR)/bench/reaper_bench
	bench/record.sh focus bench/focus/run.sh $(RELEASE_DIR)
	bench/record.sh audit_import bench/audit_import/run.sh $(RELEASE_DIR)
	bench/record.sh audit_verify $(RELEASE_DIR)/bench/verify_bench 1000000
	@if command -v rclone >/dev/null && [ -x "$${CAUSEWAY_MOTO_VENV:-$$HOME/.cache/causeway/moto-5.2.6}/bin/moto_server" ]; then bench/record.sh datasets bench/datasets/run.sh $(RELEASE_DIR); \
	else echo "bench/datasets skipped: needs rclone and moto (scripts/install-deps.sh test)"; fi
	@if [ "$$(id -u)" = 0 ] && command -v slurmctld >/dev/null; then bench/record.sh slurm_submit bench/slurm_submit/run.sh $(RELEASE_DIR) 100; \
	else echo "bench/slurm_submit skipped: needs root and Slurm (scripts/install-deps.sh test)"; fi
	@if command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ]; then bench/record.sh service bench/service/run.sh $(RELEASE_DIR); \
	else echo "bench/service skipped: needs HAProxy (scripts/install-deps.sh test)"; fi
	@if [ "$$(id -u)" = 0 ]; then bench/record.sh k8s_submit bench/k8s_submit/run.sh $(RELEASE_DIR) 500 10000; \
	else echo "bench/k8s_submit skipped: the plane's Kueue needs root (scripts/k8s/plane.sh)"; fi

clean:
	rm -rf build
