#!/bin/sh
# ctest embed.install_build_run: installs the cdma_vp package from a build tree into a fresh
# temporary prefix, builds examples/embed and examples/chain against it with
# find_package(cdma_vp) (with -Wpedantic: the installed headers must compile without a warning
# in a strict user build), runs them (chain in LT, and in AT with protocol checkers), and
# builds + runs a second program with pkg-config alone; then builds and runs examples/embed
# against the build tree itself (-Dcdma_vp_DIR=<build>/cmake, no install).
#   install_build_run.sh <cdma-vp build dir> <cdma-vp source dir> <scratch dir> [CXXFLAGS] [build type]
# CXXFLAGS and the build type are those of the cdma-vp build (e.g. the sanitizer preset), so the
# example is compiled and linked the same way as the installed library.
set -eu
build=$1
src=$2
work=$3
cxxflags=${4:-}
build_type=${5:-Release}
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" --component cdma_vp_devel >/dev/null
test -f "$prefix/lib/cmake/cdma_vp/cdma_vpConfig.cmake"
test -f "$prefix/lib/pkgconfig/cdma_vp.pc"
test -f "$prefix/include/cdma_vp/tlm/cdma/cdma_engine.h"
# The docs, laid out as in the source tree: the pages' relative links resolve.
test -f "$prefix/share/doc/cdma_vp/README.md"
test -f "$prefix/share/doc/cdma_vp/docs/user-guide.md"
test -f "$prefix/share/doc/cdma_vp/docs/cdma_registers.md"
test -f "$prefix/share/doc/cdma_vp/docs/dev/workloads-log.md"
test -f "$prefix/share/doc/cdma_vp/examples/chain/main.cpp"

# build_example <name>: configures and builds examples/<name> in $work/<name>; any warning fails.
build_example() {
  cmake -S "$src/examples/$1" -B "$work/$1" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_CXX_FLAGS="$cxxflags -Wpedantic" -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
  cmake --build "$work/$1" -j2 >"$work/$1.log" 2>&1 || { cat "$work/$1.log"; exit 1; }
  if grep -q "warning:" "$work/$1.log"; then cat "$work/$1.log"; echo "warnings in the $1 build"; exit 1; fi
}
build_example embed
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/embed/cdma_embed"
build_example chain
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/chain/cdma_chain" lt
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/chain/cdma_chain" at check

PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export PKG_CONFIG_PATH
# shellcheck disable=SC2046,SC2086
c++ $cxxflags $(pkg-config --cflags cdma_vp) "$src/examples/embed/pkgconfig_check.cpp" \
    -o "$work/pkgconfig_check" $(pkg-config --libs cdma_vp)
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/pkgconfig_check"

# The build tree as a package (no install): its config and targets file are in <build>/cmake.
test -f "$build/cmake/cdma_vpTargets.cmake"
cmake -S "$src/examples/embed" -B "$work/embed_bt" -Dcdma_vp_DIR="$build/cmake" \
      -DCMAKE_CXX_FLAGS="$cxxflags -Wpedantic" -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
cmake --build "$work/embed_bt" -j2 >"$work/embed_bt.log" 2>&1 || { cat "$work/embed_bt.log"; exit 1; }
if grep -q "warning:" "$work/embed_bt.log"; then cat "$work/embed_bt.log"; echo "warnings in the build-tree build"; exit 1; fi
# Linked against the build tree's library (not an installed copy).
grep -qF "$build/tlm/libcdma_tlm.a" "$work/embed_bt/CMakeFiles/cdma_embed.dir/link.txt"
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/embed_bt/cdma_embed"
rm -rf "$work"
