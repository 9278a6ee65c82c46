# The two commands of the README. Both install what is missing (Debian packages, idempotent),
# configure and build with CMake; `run` then runs cdma-vp on the embedded default, `test` runs
# the whole GoogleTest suite through ctest.
PRESET ?= default
ARGS ?=

.PHONY: run test build deps asan-test clean

deps:
	scripts/install-deps

build: deps
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET)

run: build
	./build/platform/cdma-vp run $(ARGS)

test: build
	SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 ctest --preset $(PRESET)

asan-test:
	$(MAKE) test PRESET=asan

clean:
	rm -rf build build-asan
