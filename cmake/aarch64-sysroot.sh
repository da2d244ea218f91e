#!/usr/bin/env bash
# Builds an arm64 (aarch64) sysroot for cmake/aarch64-linux-gnu.cmake from
# Debian 12's own arm64 packages, without touching the host's dpkg state:
# a private apt configuration (arm64 only, its own lists and an empty status
# file) resolves the packages' dependencies, `apt-get download` fetches the
# .debs and `dpkg -x` unpacks each into DIR.  Nothing is installed.
#
#   cmake/aarch64-sysroot.sh [DIR]      (default: build-aarch64-sysroot)
#
# DIR then holds the headers, static libraries and CMake configs the build
# uses (glslang-dev, spirv-tools, libvulkan-dev, libvulkan-volk-dev; the
# glslang-tools binaries only because glslang's CMake config names them) and
# what the programs load at run time under qemu-aarch64 -L DIR (libc6,
# libvulkan1, mesa-vulkan-drivers with lavapipe, vulkan-validationlayers).
# DIR/packages.txt lists the exact versions unpacked.  About 60 MB of
# downloads, 300 MB unpacked (most of it LLVM, which lavapipe needs).
set -euo pipefail
cd "$(dirname "$0")/.."

dir=$(realpath -m "${1:-build-aarch64-sysroot}")
work="$dir.apt"
suite=bookworm
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# What the sysroot is made of; their Depends are added (not Recommends).
roots=(libc6 libstdc++6 libvulkan1 libvulkan-dev libvulkan-volk-dev glslang-dev glslang-tools
       spirv-tools mesa-vulkan-drivers vulkan-validationlayers)
# Dependencies that only packages' maintainer scripts or tools use: never
# loaded by the library, the CLI or lavapipe.
skip='^(perl|perl-base|perl-modules-.*|libperl.*|python3.*|libpython3.*|dpkg|tar|install-info|mime-support|mailcap|media-types|readline-common)$'

mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
: > "$work/status"
cat > "$work/sources.list" <<EOF
deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/debian $suite main
deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/debian $suite-updates main
deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/debian-security $suite-security main
EOF
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State=$work" -o "Dir::State::Lists=$work/lists"
          -o "Dir::State::status=$work/status" -o "Dir::Cache=$work/cache"
          -o APT::Architecture=arm64 -o APT::Architectures::=arm64
          -o Debug::NoLocking=1 -o APT::Sandbox::User=root)

echo "aarch64-sysroot: package lists (arm64, $suite)"
apt-get "${apt_opts[@]}" -qq update
mapfile -t pkgs < <(apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests \
                      --no-conflicts --no-breaks --no-replaces --no-enhances "${roots[@]}" |
                    grep -v '^[ <]' | sort -u | grep -Ev "$skip")
echo "aarch64-sysroot: downloading ${#pkgs[@]} packages"
(cd "$work/debs" && rm -f ./*.deb && apt-get "${apt_opts[@]}" -qq download "${pkgs[@]/%/:arm64}")

rm -rf "$dir"
mkdir -p "$dir"
for deb in "$work"/debs/*.deb; do
  dpkg -x "$deb" "$dir"
done
for deb in "$work"/debs/*.deb; do
  dpkg-deb -f "$deb" Package Version | paste -sd' '
done > "$dir/packages.txt"

echo "aarch64-sysroot: $dir ($(wc -l < "$dir/packages.txt") packages)"
