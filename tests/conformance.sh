#!/usr/bin/env bash
# Conformance runner: runs `vkhlo run` on every file of
# ../shared/conformance/testdata whose name matches PATTERN (an extended
# regex; default: the f32/i32/ui32/i1 files of the walking-skeleton issue),
# each under a time limit, and prints pass / fail / unsupported counts.
#
#   tests/conformance.sh VKHLO_BINARY [--pattern=RE] [--dir=DIR] [--passing=LIST]
#                        [--update] [--timeout=SECONDS] [--jobs=N]
#
# A file passes when vkhlo exits 0 (all its checks pass, no validation
# message); it is "unsupported" when vkhlo reports UNIMPLEMENTED (an op or
# element type it does not run yet); anything else fails: a failed check,
# another error, a crash (signal) or a hang (time limit).
# With --passing=LIST the run fails if a file listed there does not pass
# (a regression) or if any file crashes or hangs; --update rewrites LIST.
# Exits 77 (skipped) when the shared data is absent.
set -u
bin=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
dir="$here/../../shared/conformance/testdata"
pattern='_(float32|int32|uint32|bool)_'
passing=""
update=0
limit=120
jobs=$(nproc)
for a in "$@"; do
  case $a in
    --pattern=*) pattern=${a#*=} ;;
    --dir=*) dir=${a#*=} ;;
    --passing=*) passing=${a#*=} ;;
    --update) update=1 ;;
    --timeout=*) limit=${a#*=} ;;
    --jobs=*) jobs=${a#*=} ;;
    *) echo "conformance.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
if [ ! -d "$dir" ]; then
  echo "SKIPPED: conformance data not found at $dir (../shared is absent)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ls "$dir" | grep -E "$pattern" | grep -E '\.mlir$' | sort > "$out/files"
total=$(wc -l < "$out/files")

run_file() { # classify one file; prints "STATUS name"
  local f=$1 log="$out/$1.log" rc
  timeout -k 5 "$limit" "$bin" run "$dir/$f" --quiet >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then echo "pass $f"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "hang $f"
  elif [ $rc -gt 128 ]; then echo "crash $f"
  elif grep -qE 'unsupported|not supported|UNIMPLEMENTED' "$log" && [ $rc -eq 2 ]; then echo "unsupported $f"
  else echo "fail $f"
  fi
}
export -f run_file
export bin dir out limit
xargs -a "$out/files" -P "$jobs" -I{} bash -c 'run_file "$@"' _ {} > "$out/results"
sort -k2 "$out/results" -o "$out/results"

count() { grep -c "^$1 " "$out/results" || true; }
np=$(count pass); nf=$(count fail); nu=$(count unsupported); nc=$(count crash); nh=$(count hang)
for kind in fail unsupported crash hang; do
  grep "^$kind " "$out/results" | while read -r _ f; do
    printf '%-12s %s: %s\n' "$kind" "$f" "$(grep -v '^$' "$out/$f.log" | head -n 2 | tr '\n' ' ' | cut -c1-220)"
  done
done
pct=$(awk -v p="$np" -v t="$total" 'BEGIN { printf "%.1f", t ? 100 * p / t : 0 }')
echo "conformance ($pattern): $total files: $np pass ($pct%), $nf fail, $nu unsupported, $nc crash, $nh hang"

status=0
if [ -n "$passing" ]; then
  if [ $update -eq 1 ]; then
    grep '^pass ' "$out/results" | cut -d' ' -f2 > "$passing"
    echo "updated $passing ($np files)"
  elif [ -f "$passing" ]; then
    regressions=$(grep -vxF -f <(grep '^pass ' "$out/results" | cut -d' ' -f2) "$passing" | grep -xF -f "$out/files" || true)
    if [ -n "$regressions" ]; then
      echo "REGRESSIONS: these files are listed in $passing but do not pass:"
      echo "$regressions"
      status=1
    fi
  fi
fi
if [ "$nc" -gt 0 ] || [ "$nh" -gt 0 ]; then
  echo "FAILED: $nc crashes, $nh hangs"
  status=1
fi
passed_tests=$np
echo "$passed_tests passed, $((nf + nc + nh)) failed, $nu skipped"
exit $status
