#!/usr/bin/env bash
# Interpret-suite runner: splits every file of ../shared/conformance/interpret
# on "// -----" lines (each split keeps its line numbers), runs each split
# with `vkhlo run` under a time limit, and prints pass / fail / unsupported
# counts.  Split names are FILE:LINE (the split's first line).
#
#   tests/interpret.sh VKHLO_BINARY [--passing=LIST] [--update] [--timeout=S] [--jobs=N]
#
# With --passing=LIST the run fails when a listed split does not pass, or
# when any split crashes or hangs; --update rewrites LIST.  Exits 77
# (skipped) when the shared data is absent.
set -u
bin=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
dir="$here/../../shared/conformance/interpret"
passing=""; update=0; limit=120; jobs=$(nproc)
for a in "$@"; do
  case $a in
    --passing=*) passing=${a#*=} ;;
    --update) update=1 ;;
    --timeout=*) limit=${a#*=} ;;
    --jobs=*) jobs=${a#*=} ;;
    --dir=*) dir=${a#*=} ;;
    *) echo "interpret.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
if [ ! -d "$dir" ]; then
  echo "SKIPPED: interpret data not found at $dir (../shared is absent)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Write each non-empty split to $out/splits/FILE__LINE.mlir, earlier lines blanked.
mkdir -p "$out/splits"
for f in "$dir"/*.mlir; do
  base=$(basename "$f" .mlir)
  awk -v base="$base" -v dst="$out/splits" '
    function flush() {
      if (body ~ /[^ \t\n]/ && body ~ /func\.func/) {
        name = dst "/" base "__" start ".mlir"
        printf "%s", pad body > name
        close(name)
      }
    }
    BEGIN { start = 1; pad = ""; body = "" }
    /^\/\/ -----/ { flush(); pad = pad blank body "\n"; gsub(/[^\n]/, "", pad); body = ""; blank = ""; start = NR + 1; next }
    { body = body $0 "\n" }
    END { flush() }' "$f"
done
ls "$out/splits" | sort > "$out/list"
total=$(wc -l < "$out/list")

run_split() {
  local s=$1 log="$out/$1.log" rc
  timeout -k 5 "$limit" "$bin" run "$out/splits/$s" --quiet >"$log" 2>&1
  rc=$?
  local name=${s%.mlir}; name="${name%__*}.mlir:${name##*__}"
  if [ $rc -eq 0 ]; then echo "pass $name"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "hang $name"
  elif [ $rc -gt 128 ]; then echo "crash $name"
  elif [ $rc -eq 2 ] && grep -qE 'unsupported|not supported|UNIMPLEMENTED|unknown op' "$log"; then echo "unsupported $name"
  else echo "fail $name"
  fi
}
export -f run_split
export bin out limit
xargs -a "$out/list" -P "$jobs" -I{} bash -c 'run_split "$@"' _ {} > "$out/results"
sort -k2 -V "$out/results" -o "$out/results"
count() { grep -c "^$1 " "$out/results" || true; }
np=$(count pass); nf=$(count fail); nu=$(count unsupported); nc=$(count crash); nh=$(count hang)
grep -vE '^pass ' "$out/results" | while read -r kind name; do
  f=${name%:*}; l=${name##*:}; log="$out/${f%.mlir}__$l.mlir.log"
  printf '%-12s %s: %s\n' "$kind" "$name" "$(grep -v '^$' "$log" | head -n 2 | tr '\n' ' ' | sed 's|/tmp/[^ ]*/splits/||g' | cut -c1-200)"
done
pct=$(awk -v p="$np" -v t="$total" 'BEGIN { printf "%.1f", t ? 100 * p / t : 0 }')
echo "interpret: $total splits: $np pass ($pct%), $nf fail, $nu unsupported, $nc crash, $nh hang"
status=0
if [ -n "$passing" ]; then
  if [ $update -eq 1 ]; then
    grep '^pass ' "$out/results" | cut -d' ' -f2 > "$passing"
    echo "updated $passing ($np splits)"
  elif [ -f "$passing" ]; then
    regressions=$(grep -vxF -f <(grep '^pass ' "$out/results" | cut -d' ' -f2) "$passing" || true)
    if [ -n "$regressions" ]; then
      echo "REGRESSIONS: listed in $passing but not passing:"; echo "$regressions"; status=1
    fi
  fi
fi
if [ "$nc" -gt 0 ] || [ "$nh" -gt 0 ]; then echo "FAILED: $nc crashes, $nh hangs"; status=1; fi
echo "$np passed, $((nf + nc + nh)) failed, $nu skipped"
exit $status
