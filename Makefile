# The two commands of the README. Both install what is missing (Debian packages, idempotent),
# configure and build with CMake; `run` builds cdma-vp alone and runs it on the embedded default,
# `test` builds everything (models, tests, benchmarks) and runs the whole suite through ctest.
PRESET ?= default
ARGS ?=

.PHONY: run test build deps asan-test clean

deps:
	scripts/install-deps

build: deps
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET)

# `run` builds the simulator alone (not the tests and benchmarks: new-user trial s20 F1).
run: deps
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET) --target cdma-vp
	./build/platform/cdma-vp run $(ARGS)

test: build
	SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 ctest --preset $(PRESET)

asan-test:
	$(MAKE) test PRESET=asan

clean:
	rm -rf build build-asan
