# Phalanx: the two set-up commands of the README are `make demo` and `make test`.
# Everything else here is for developers; `make help` lists it.

JOBS         ?= $(shell nproc)
BUILD_DIR    ?= build
ASAN_DIR     ?= build-asan
FUZZ_DIR     ?= build-fuzz
BUILD_TYPE   ?= RelWithDebInfo
CMAKE_FLAGS  ?=
CTEST_FLAGS  ?=
# The Kubernetes-mode tests mostly wait on the apiserver and their own timeouts (about 0.3 of a
# core each), so they run three to a core after the rest: 150 s instead of 415 s on 2 cores.
K8S_TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 3 )))
FUZZ_SECONDS ?= 60

.PHONY: help deps configure build test long demo demo-k8s asan fuzz bench crash soak format \
        clean k8s-control-plane

help:
	@echo "make demo    install what is missing, build, run the main demo"
	@echo "make test    install what is missing, build, run every test (ctest, label 'slow' left out)"
	@echo "make demo-k8s  k8s/deploy/ on a real kube-apiserver: the Spark gangs, two replicas, a failover"
	@echo "make long    the long runs: storage crash points and bit flips, crash and soak tests"
	@echo "make asan    build and run the tests under AddressSanitizer + UBSan"
	@echo "make fuzz    build the libFuzzer harnesses with clang and fuzz each for FUZZ_SECONDS"
	@echo "make crash   the long crash tests: SIGKILLs and power cuts under load and churn, bit flips"
	@echo "make k8s-control-plane  build (or find cached) kube-apiserver 1.37.2, kube-scheduler, etcd 3.6"
	@echo "make bench   run the planner benchmark"
	@echo "make format  clang-format every source file"

deps:
	@./.ci/install-deps

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The Kubernetes-mode tests (label k8s) run against a real kube-apiserver and etcd: built once
# from Go modules (11-15 min on a fresh machine), then found in ~/.cache/phalanx in under a second.
# Both passes run even when the first fails, so one run reports every failure.
test: build k8s-control-plane
	cd $(BUILD_DIR) && status=0; \
	  ctest -j $(JOBS) --output-on-failure --timeout 600 -LE 'slow|k8s' $(CTEST_FLAGS) || status=1; \
	  ctest -j $(K8S_TEST_JOBS) --output-on-failure --timeout 600 -L k8s -LE slow $(CTEST_FLAGS) \
	    || status=1; \
	  exit $$status

long: build
	cd $(BUILD_DIR) && ctest -j $(JOBS) --output-on-failure -L slow $(CTEST_FLAGS)

# The long crash tests only (tests/crash/): 50 SIGKILLs under load, 30 SIGKILLs under a churn of
# names deleted and created again, 500 power-loss crash points under the whole runtime, 300 under
# the churn, 300 bit flips in a real data directory. One at a time: each is heavy.
crash: build
	cd $(BUILD_DIR) && ctest -j 1 --output-on-failure -L slow \
	  -R '^(SigkillUnderLoad|SigkillChurn|PowerLossUnderRuntime|PowerLossChurn|BitFlips)\.' \
	  $(CTEST_FLAGS)

demo: build
	./$(BUILD_DIR)/examples/phalanx-demo

# Kubernetes mode as installed from k8s/deploy/, on the test control plane (kube-apiserver 1.37,
# etcd 3.6; no kubelets): two phalanxd replicas as processes with the shipped ServiceAccount's
# token, the Spark gangs of `make demo`, the leader killed. Needs kubectl. Builds phalanxd only.
demo-k8s: configure k8s-control-plane
	cmake --build $(BUILD_DIR) -j $(JOBS) --target phalanxd
	./examples/demo/demo-k8s.sh $(BUILD_DIR)/actors/phalanxd

asan: deps
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPHALANX_SANITIZE=ON $(CMAKE_FLAGS)
	cmake --build $(ASAN_DIR) -j $(JOBS)
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest -j $(JOBS) --output-on-failure --timeout 1200 -LE 'nosan|slow' $(CTEST_FLAGS)

# libFuzzer needs clang; its runtime comes with Debian's clang package.
fuzz:
	@PHALANX_EXTRA_PACKAGES="clang" ./.ci/install-deps
	cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++ -DPHALANX_FUZZ=ON $(CMAKE_FLAGS)
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target fuzz_json fuzz_yaml fuzz_quantity fuzz_http
	for h in json yaml quantity http; do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$h && \
	  ./$(FUZZ_DIR)/api/fuzz/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	    $(FUZZ_DIR)/corpus/$$h api/fuzz/corpus/$$h || exit 1; \
	done

bench: build
	./$(BUILD_DIR)/loadtest/bench_planner --benchmark_filter=BM_PlaceGang

# ---- Load tests (loadtest/): the full-size runs of DESIGN.md section 9; JSON and HTML reports go
# to $(BUILD_DIR)/reports/. LOADTEST_DATA holds the real traces (philly/, pollux/, openb/).
LOADTEST_DATA ?= /work/shared/data
LOADTEST_RUN   = ./$(BUILD_DIR)/loadtest/phalanx-loadtest
LOADTEST_OUT   = $(BUILD_DIR)/reports
.PHONY: loadtest-build loadtest-inproc loadtest-push loadtest-replay loadtest-restart \
        loadtest-k8s-restart loadtest-k8s

loadtest-build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target phalanx-loadtest

loadtest-inproc: loadtest-build
	$(LOADTEST_RUN) inproc --nodes 5000 --podgroups 10000 \
	  --json $(LOADTEST_OUT)/inproc.json --html $(LOADTEST_OUT)/inproc.html

loadtest-push: loadtest-build
	$(LOADTEST_RUN) push --nodes 5000 --podgroups 10000 \
	  --json $(LOADTEST_OUT)/push.json --html $(LOADTEST_OUT)/push.html

# Pods created 30 s apart, as a job controller creates them one by one (with all pods at once
# pod-by-pod cannot deadlock); a starvation bound of 6 h, the default: on this trace shorter
# bounds make reservations that cost more than they save (docs/PERFORMANCE.md has the sweep).
loadtest-replay: loadtest-build
	$(LOADTEST_RUN) replay --trace $(LOADTEST_DATA)/philly/philly_5000.csv \
	  --cluster-from-vc $(LOADTEST_DATA)/philly/vc_nodes.csv --vc-scale 0.5 \
	  --pod-interval 30s --starvation-bound 6h \
	  --json $(LOADTEST_OUT)/replay-philly.json --html $(LOADTEST_OUT)/replay-philly.html

loadtest-restart: loadtest-build
	$(LOADTEST_RUN) restart --pods 150000 --podgroups 20000 --nodes 5000 \
	  --json $(LOADTEST_OUT)/restart.json --html $(LOADTEST_OUT)/restart.html

# Kubernetes mode on the test control plane: 5,000 nodes and 140,000 bound pods (about 3 min to
# create), then phalanxd's first start, a restart after a short outage and one after the
# apiserver's restart (410, relist), each timed to the first new bind.
loadtest-k8s-restart: loadtest-build k8s-control-plane
	$(LOADTEST_RUN) k8s-restart --nodes 5000 --pods 140000 \
	  --json $(LOADTEST_OUT)/k8s-restart.json --html $(LOADTEST_OUT)/k8s-restart.html

# Phalanx, kube-scheduler and a do-nothing binder side by side on the test control plane, the
# same 5,000 nodes and pods: plain pods created while each runs and created before it starts
# (--backlog), then gangs of 1-64 pods. The basic runs take about 5 min each on two cores; the
# gang run creates about 325,000 pods per scheduler (docs/PERFORMANCE.md has runs of 1,000
# PodGroups, a tenth of it).
loadtest-k8s: loadtest-build k8s-control-plane
	$(LOADTEST_RUN) k8s --workload basic --nodes 5000 --pods 10000 \
	  --json $(LOADTEST_OUT)/k8s-basic.json --html $(LOADTEST_OUT)/k8s-basic.html
	$(LOADTEST_RUN) k8s --workload basic --nodes 5000 --pods 10000 --backlog \
	  --json $(LOADTEST_OUT)/k8s-basic-backlog.json --html $(LOADTEST_OUT)/k8s-basic-backlog.html
	$(LOADTEST_RUN) k8s --workload gang --nodes 5000 --podgroups 10000 \
	  --json $(LOADTEST_OUT)/k8s-gang.json --html $(LOADTEST_OUT)/k8s-gang.html

# kube-apiserver, kube-scheduler and etcd for the Kubernetes-mode tests (k8s/testing/README.md),
# built from Go modules at pinned versions and cached outside the clone.
k8s-control-plane:
	./k8s/testing/build-control-plane.sh

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(FUZZ_DIR)

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i
