#!/usr/bin/env bash
# Round trip through compiled executables: for every file of LIST (default
# tests/conformance_passing.txt, files of ../shared/conformance/testdata),
#   vkhlo compile F -o F.vkx
#   vkhlo run F.vkx --stats --output=@v0.bin ...   (must compile 0 shaders)
#   vkhlo run F     --output=@d0.bin ...
# and the two runs must exit alike and write byte-identical results (cmp).
# Inputs, where a program has parameters, are --random-inputs=7 both ways.
#
#   tests/vkx_roundtrip.sh VKHLO_BINARY [--list=FILE] [--sample=N] [--jobs=N]
#
# --sample=N takes every N-th file of the list (a fixed sample, for ctest).
# Prints the counts; exits 1 on any mismatch, 77 (skipped) when the shared
# data is absent.
set -u
bin=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
dir="$here/../../shared/conformance/testdata"
list="$here/conformance_passing.txt"
sample=1
jobs=$(nproc)
for a in "$@"; do
  case $a in
    --list=*) list=${a#*=} ;;
    --sample=*) sample=${a#*=} ;;
    --jobs=*) jobs=${a#*=} ;;
    --dir=*) dir=${a#*=} ;;
    *) echo "vkx_roundtrip.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
if [ ! -d "$dir" ]; then
  echo "SKIPPED: conformance data not found at $dir (../shared is absent)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
awk -v n="$sample" 'NR % n == 1 || n == 1' "$list" > "$out/files"
total=$(wc -l < "$out/files")

roundtrip() { # prints "STATUS name [detail]"
  local f=$1 w="$out/w.$1" outs_v=() outs_d=() i
  mkdir -p "$w"
  for i in $(seq 0 15); do outs_v+=("--output=@$w/v$i.bin"); outs_d+=("--output=@$w/d$i.bin"); done
  if ! timeout -k 5 120 "$bin" compile "$dir/$f" -o "$w/p.vkx" >"$w/compile.log" 2>&1; then
    echo "compile-fail $f $(head -c 200 "$w/compile.log" | tr '\n' ' ')"; return
  fi
  timeout -k 5 120 "$bin" run "$w/p.vkx" --quiet --stats --random-inputs=7 "${outs_v[@]}" >"$w/v.log" 2>&1
  local rv=$?
  timeout -k 5 120 "$bin" run "$dir/$f" --quiet --random-inputs=7 "${outs_d[@]}" >"$w/d.log" 2>&1
  local rd=$?
  if [ $rv -ne $rd ]; then echo "exit-differs $f vkx=$rv direct=$rd $(grep -v ': ' "$w/v.log" | head -c 200 | tr '\n' ' ')"; rm -rf "$w"; return; fi
  if ! grep -q '^spirv_compiled: 0$' "$w/v.log"; then echo "compiled-shaders $f"; rm -rf "$w"; return; fi
  local n=0
  for i in $(seq 0 15); do
    if [ -e "$w/d$i.bin" ] || [ -e "$w/v$i.bin" ]; then
      if ! cmp -s "$w/d$i.bin" "$w/v$i.bin"; then echo "output-differs $f result $i"; rm -rf "$w"; return; fi
      n=$((n + 1))
    fi
  done
  echo "same $f $n results, exit $rv, $(stat -c %s "$w/p.vkx") bytes"
  rm -rf "$w"
}
export -f roundtrip
export bin dir out
xargs -a "$out/files" -P "$jobs" -I{} bash -c 'roundtrip "$@"' _ {} > "$out/results"
sort -k2 "$out/results" -o "$out/results"

count() { grep -c "^$1 " "$out/results" || true; }
ns=$(count same); nc=$(count compile-fail); ne=$(count exit-differs); nz=$(count compiled-shaders); no=$(count output-differs)
grep -v '^same ' "$out/results" || true
results=$(awk '$1 == "same" { s += $3 } END { print s + 0 }' "$out/results")
echo "vkx round trip: $total files: $ns identical ($results results compared byte for byte), $nc compile failures, $ne exit-status differences, $nz compiled shaders at load, $no output differences"
[ "$ns" -eq "$total" ]
