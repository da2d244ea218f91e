#!/usr/bin/env bash
# CLI behaviour: the README example runs and prints probabilities; inputs
# from .npy round-trip through --output; a malformed program fails with
# exit status 2 and a file:line:col message; a program with a dynamic shape
# runs for its inputs' types; a cut-off portable artifact fails with its
# byte offset; --profile counts every dispatch;
# the same program from two paths gives the same kernels and hits the
# SPIR-V cache; --help/--version/--list-devices work.
set -u
bin=$1 src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$("$bin" run "$src/examples/mlp.mlir" --input=2x4xf32=1,2,3,4,-1,0.5,0.25,2) || fail "example exited $?"
echo "$out" | head -n 1 | grep -qx 'tensor<2x3xf32>' || fail "example printed: $out"
# each row of a softmax sums to 1
sums=$(echo "$out" | tail -n +2 | tr -d '[],' | awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%.5f\n", s }')
[ "$(echo "$sums" | sort -u)" = "1.00000" ] || fail "softmax rows sum to $sums"

"$bin" run "$src/examples/mlp.mlir" --input=2x4xf32=1,2,3,4,-1,0.5,0.25,2 --output=@"$tmp/y.npy" || fail "--output"
[ -s "$tmp/y.npy" ] || fail "no npy written"
head -c 6 "$tmp/y.npy" | od -c | grep -q 'N   U   M   P   Y' || fail "bad npy magic"

printf 'func.func @main(%%a: tensor<4xf32>) -> tensor<4xf32> {\n  %%0 = stablehlo.add %%a, %%a : tensor<4xi32>\n  return %%0 : tensor<4xf32>\n}\n' > "$tmp/bad.mlir"
"$bin" run "$tmp/bad.mlir" --input=4xf32=1,2,3,4 > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "bad program exited $rc"
grep -qE "bad.mlir:[0-9]+:[0-9]+: " "$tmp/out" || fail "no location in: $(cat "$tmp/out")"

"$bin" run "$src/examples/mlp.mlir" --input=2x4xf32=1,2,3 > "$tmp/out" 2>&1 && fail "short input accepted"
grep -q "has 3 values" "$tmp/out" || fail "short input message: $(cat "$tmp/out")"

# portable artifacts: deserialize refuses text; a cut-off artifact is a located error
"$bin" deserialize "$tmp/bad.mlir" > "$tmp/out" 2>&1 && fail "deserialize accepted text"
grep -q "bad.mlir: not MLIR bytecode" "$tmp/out" || fail "deserialize message: $(cat "$tmp/out")"
printf 'ML\xefR\x0dproducer\x00\x01' > "$tmp/cut.mlirbc"
"$bin" run "$tmp/cut.mlirbc" > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "cut-off artifact exited $rc"
grep -q "cut.mlirbc: bytecode offset 15: unexpected end of data" "$tmp/out" || fail "cut-off artifact message: $(cat "$tmp/out")"

# a program with a dynamic batch: compiled for the --input types, refused (located) without them
printf 'func.func @main(%%a: tensor<?x2xf32>) -> tensor<?x2xf32> {\n  %%0 = stablehlo.add %%a, %%a : tensor<?x2xf32>\n  return %%0 : tensor<?x2xf32>\n}\n' > "$tmp/dyn.mlir"
out=$("$bin" run "$tmp/dyn.mlir" --input=3x2xf32=1,2,3,4,5,6) || fail "dynamic program exited $?"
[ "$(echo "$out" | head -n 1)" = "tensor<3x2xf32>" ] || fail "dynamic program printed: $out"
echo "$out" | tr -d '[],\n ' | grep -qx 'tensor<3x2xf32>24681012' || fail "dynamic program values: $out"
"$bin" run "$tmp/dyn.mlir" --random-inputs > "$tmp/out" 2>&1 && fail "dynamic program without types accepted"
grep -q "dyn.mlir:1:17: parameter 0 of '@main' has the dynamic type tensor<?x2xf32>" "$tmp/out" ||
  fail "dynamic program message: $(cat "$tmp/out")"

: > "$tmp/empty.mlir"
"$bin" run "$tmp/empty.mlir" > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "empty file exited $rc"
grep -q "empty.mlir:1:1: no program" "$tmp/out" || fail "empty file message: $(cat "$tmp/out")"
"$bin" run "$tmp" > "$tmp/out" 2>&1 && fail "a directory was accepted"
grep -q "is a directory" "$tmp/out" || fail "directory message: $(cat "$tmp/out")"

# --profile: every dispatch of each --repeat run counted, per kernel
"$bin" run "$src/examples/mlp.mlir" --input=2x4xf32=1,2,3,4,-1,0.5,0.25,2 --repeat=3 --profile > "$tmp/out" 2>&1 ||
  fail "--profile exited $?"
grep -qE '^wall: [0-9.]+ ms per execution \(median of 3.*device [0-9.]+ ms per execution' "$tmp/out" ||
  fail "--repeat wall/device line: $(cat "$tmp/out")"
n=$(sed -n 's/^profile: \([0-9]*\) dispatches, .* ms of device time$/\1/p' "$tmp/out")
k=$("$bin" compile "$src/examples/mlp.mlir" --stats | sed -n 's/^dispatches: //p')
[ -n "$n" ] && [ -n "$k" ] && [ "$n" -eq $((3 * k)) ] || fail "--profile counted '$n' dispatches for 3 runs of $k: $(cat "$tmp/out")"
[ "$(grep -cE '^ +[0-9.]+ +[0-9.]+% +3 +[A-Za-z_0-9]+$' "$tmp/out")" -eq "$k" ] || fail "--profile rows: $(cat "$tmp/out")"

# Where a program lies changes no kernel: the same program under a folder
# named "returnx" and under another gets the same SPIR-V (every line of the
# GLSL names the source file in a comment), and the second compile finds
# every kernel in the SPIR-V cache.
mkdir -p "$tmp/returnx" "$tmp/other"
cp "$src/examples/mlp.mlir" "$tmp/returnx/m.mlir"
cp "$src/examples/mlp.mlir" "$tmp/other/m.mlir"
VKHLO_CACHE_DIR="$tmp/cache" "$bin" compile "$tmp/returnx/m.mlir" --stats --dump-dir="$tmp/d1" > "$tmp/s1" ||
  fail "compile under returnx/"
VKHLO_CACHE_DIR="$tmp/cache" "$bin" compile "$tmp/other/m.mlir" --stats --dump-dir="$tmp/d2" > "$tmp/s2" ||
  fail "compile under other/"
nk=$(ls "$tmp/d1"/*.spvasm | wc -l)
[ "$nk" -gt 0 ] || fail "no kernels dumped"
for f in "$tmp/d1"/*.spvasm; do
  cmp -s "$f" "$tmp/d2/$(basename "$f")" || fail "$(basename "$f") differs between returnx/ and other/"
done
grep -q "returnx/m.mlir" "$tmp/d1"/*.comp || fail "the GLSL no longer names the source file (test premise)"
[ "$(sed -n 's/^spirv_cache_hits: //p' "$tmp/s2")" = "$nk" ] || fail "second path: $(cat "$tmp/s2")"
[ "$(sed -n 's/^spirv_compiled: //p' "$tmp/s2")" = 0 ] || fail "second path recompiled: $(cat "$tmp/s2")"

# interpreter.print: the value printed where the program reaches it, not a check
printf 'func.func @main() -> tensor<2xi32> {\n  %%0 = stablehlo.iota dim = 0 : tensor<2xi32>\n  interpreter.print %%0 : tensor<2xi32>\n  return %%0 : tensor<2xi32>\n}\n' > "$tmp/print.mlir"
"$bin" run "$tmp/print.mlir" > "$tmp/out" 2>&1 || fail "interpreter.print exited $?: $(cat "$tmp/out")"
grep -q "^print at .*print.mlir:3:3: tensor<2xi32>" "$tmp/out" || fail "interpreter.print printed: $(cat "$tmp/out")"
[ "$(grep -c '^\[0, 1\]$' "$tmp/out")" = 2 ] || fail "the printed value and the result: $(cat "$tmp/out")"
grep -q "checks passed" "$tmp/out" && fail "a print counted as a check: $(cat "$tmp/out")"

"$bin" --version | grep -q '^vkhlo ' || fail "--version"
"$bin" --help | grep -q 'usage: vkhlo run' || fail "--help"
"$bin" --list-devices | grep -q '^0: ' || fail "--list-devices"
echo "cli tests passed"
