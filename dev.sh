#!/usr/bin/env bash
# vkhlo developer entry point, for a fresh Debian 12 machine.
#
#   ./dev.sh example   install what is missing, build, run examples/mlp.mlir
#   ./dev.sh test      install what is missing, build, run the whole test suite
#                      (unit, end-to-end and conformance tests with the Khronos
#                      validation layer on, then the unit tests and the
#                      in-process end-to-end tests under ASan+UBSan)
#   ./dev.sh arm64     also install the aarch64 cross compiler and qemu-user,
#                      unpack an arm64 sysroot (cmake/aarch64-sysroot.sh),
#                      cross-build into build-aarch64 and run tests/arm64.sh
#                      --full under qemu with arm64 lavapipe
#   ./dev.sh fuzz [S]  also install clang, build the libFuzzer target
#                      fuzz_compile into build-fuzz and fuzz the compiler for
#                      S seconds (default 600) from the shared programs; new
#                      crashes land in build-fuzz/crashes (README "Fuzzing")
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(build-essential cmake pkg-config libvulkan-dev libvulkan-volk-dev glslang-dev
          glslang-tools spirv-tools mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
          libcmocka-dev libopenblas-dev python3)

# `./dev.sh fuzz` only: clang with its libFuzzer and sanitizer runtimes.
FUZZ_PACKAGES=(clang libclang-rt-14-dev)

# Host packages for `./dev.sh arm64` only (the arm64 libraries themselves go
# into a sysroot, never onto the host).
ARM64_PACKAGES=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user debian-archive-keyring)

install_deps() { # install_deps [package...]  (default: PACKAGES)
  local missing=() want=("$@")
  [ ${#want[@]} -eq 0 ] && want=("${PACKAGES[@]}")
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "dev.sh: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
  fi
}

build() { # build DIR [cmake args...]
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
}

case "${1:-}" in
  example)
    install_deps
    build build
    ./build/vkhlo run examples/mlp.mlir --input=2x4xf32=1,2,3,4,-1,0.5,0.25,2
    ;;
  test)
    install_deps
    build build
    # Every test runs with VK_LAYER_KHRONOS_validation (any message fails it)
    # and with the buffer-assignment checker on every compiled program.
    (cd build && VKHLO_VALIDATION=1 VKHLO_CHECK_BUFFERS=1 ctest --output-on-failure --timeout 3000)
    build build-asan -DVKHLO_SANITIZE=ON
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/../tests/lsan.supp \
       VKHLO_VALIDATION=1 VKHLO_CHECK_BUFFERS=1 ctest --output-on-failure -L '^(unit|api)$' --timeout 1200)
    ;;
  arm64)
    install_deps
    install_deps "${ARM64_PACKAGES[@]}"
    [ -f build-aarch64-sysroot/packages.txt ] || cmake/aarch64-sysroot.sh build-aarch64-sysroot
    build build
    build build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
      -DVKHLO_AARCH64_SYSROOT="$PWD/build-aarch64-sysroot" -DVKHLO_BUILD_TESTS=OFF -DVKHLO_BUILD_BENCH=OFF
    VKHLO_VALIDATION=1 VKHLO_CHECK_BUFFERS=1 tests/arm64.sh --full --x86=build/vkhlo --build-dir=build-aarch64
    ;;
  fuzz)
    install_deps
    install_deps "${FUZZ_PACKAGES[@]}"
    CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKHLO_FUZZ=ON \
      -DVKHLO_BUILD_BENCH=OFF >/dev/null
    cmake --build build-fuzz -j"$(nproc)" --target fuzz_compile
    mkdir -p build-fuzz/corpus build-fuzz/crashes
    seeds=(tests/ops tests/fuzz/regressions)
    [ -d ../shared/conformance/testdata ] && seeds+=(../shared/conformance/testdata)
    ASAN_OPTIONS=allocator_may_return_null=1 build-fuzz/tests/fuzz_compile build-fuzz/corpus "${seeds[@]}" \
      -fork="$(nproc)" -ignore_crashes=1 -max_len=8192 -timeout=10 -max_total_time="${2:-600}" \
      -artifact_prefix=build-fuzz/crashes/
    ;;
  *)
    echo "usage: ./dev.sh example | test | arm64 | fuzz [seconds]" >&2
    exit 2
    ;;
esac
