#!/bin/sh
# ctest embed.install_build_run: installs the cdma_vp package from a build tree into a fresh
# temporary prefix, builds examples/embed against it with find_package(cdma_vp), runs it, and
# builds + runs a second program with pkg-config alone.
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

cmake -S "$src/examples/embed" -B "$work/example" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
cmake --build "$work/example" -j2 >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
if grep -q "warning:" "$work/build.log"; then cat "$work/build.log"; echo "warnings in the example build"; exit 1; fi
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/example/cdma_embed"

PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export PKG_CONFIG_PATH
# shellcheck disable=SC2046,SC2086
c++ $cxxflags $(pkg-config --cflags cdma_vp) "$src/examples/embed/pkgconfig_check.cpp" \
    -o "$work/pkgconfig_check" $(pkg-config --libs cdma_vp)
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/pkgconfig_check"
rm -rf "$work"
