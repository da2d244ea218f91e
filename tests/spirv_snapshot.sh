#!/usr/bin/env bash
# Writes the SPIR-V (disassembled) of every kernel vkhlo generates for each
# file of the conformance guard list, the interpret guard list's files and
# the examples, one file OUTDIR/NAME.spvasm per program, so that two
# builds can be compared with `diff -r`: a refactor that should change no
# kernel must leave the two snapshots identical.
#
#   tests/spirv_snapshot.sh VKHLO_BINARY OUTDIR [--restricted]
#
# Needs ../shared (exits 77, skipped, without it).
set -u
bin=$(realpath "$1"); out=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
shared="$here/../../shared/conformance"
[ -d "$shared" ] || { echo "SKIPPED: ../shared is absent"; exit 77; }
[ "${1:-}" = --restricted ] && export VKHLO_RESTRICTED=1
mkdir -p "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
one() { # FILE NAME
  local d="$tmp/$2"
  mkdir -p "$d"
  "$bin" compile "$1" --dump-dir="$d" >/dev/null 2>"$d/err" || cp "$d/err" "$out/$2.error"
  cat "$d"/*.spvasm > "$out/$2.spvasm" 2>/dev/null
  rm -rf "$d"
}
export -f one; export bin out tmp
{
  sed "s|^|$shared/testdata/|" "$here/conformance_passing.txt"
  cut -d: -f1 "$here/interpret_passing.txt" | sort -u | sed "s|^|$shared/interpret/|"
  ls "$here"/../examples/*.mlir "$here"/ops/*.mlir
} | while read -r f; do echo "$f"; done | xargs -P "$(nproc)" -I{} bash -c 'f={}; n=$(basename "$(dirname "$f")")_$(basename "$f" .mlir); one "$f" "$n"'
echo "spirv_snapshot: $(ls "$out"/*.spvasm | wc -l) programs written to $out"
