#!/usr/bin/env bash
# vhlo_upstream.sh BYTECODE_COMPARE [STABLEHLO_DIR]
#
# Reads the portable artifacts of StableHLO's own serialization tests, one
# per VHLO version from 0.9.0 to the newest (stablehlo/tests/vhlo/
# stablehlo_legalize_to_vhlo.*.mlir.bc, each written by
# `stablehlo-translate --serialize` from the .mlir beside it), and checks
# with bytecode_compare that every function the parser accepts in the text
# is parsed to the same module from the artifact.  STABLEHLO_DIR (or
# $VKHLO_STABLEHLO_DIR) is a checkout of github.com/openxla/stablehlo;
# without one the test is skipped (exit 77): the repository does not carry
# those files.
set -uo pipefail
compare=$1
dir=${2:-${VKHLO_STABLEHLO_DIR:-}}
if [ -z "$dir" ] || [ ! -d "$dir/stablehlo/tests/vhlo" ]; then
  echo "vhlo_upstream: no StableHLO checkout (set VKHLO_STABLEHLO_DIR): skipped"
  exit 77
fi
files=0 failed=0
for bc in "$dir"/stablehlo/tests/vhlo/stablehlo_legalize_to_vhlo.*.mlir.bc; do
  files=$((files + 1))
  "$compare" "${bc%.bc}" "$bc" | tail -n 40 || failed=$((failed + 1))
done
echo "vhlo_upstream: $files artifacts, $failed with failures"
[ "$files" -gt 0 ] && [ "$failed" -eq 0 ]
