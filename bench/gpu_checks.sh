#!/usr/bin/env bash
# gpu_checks.sh: the checks and measurements a machine with a GPU is wanted
# for, in one run, each step's output in a log of its own.  No session of
# this project has had a GPU for long, and never twice the same one, so
# the whole list runs from one command, built elsewhere (the binaries need
# only libvulkan.so.1 and the GPU's Vulkan driver).
#
#   bench/gpu_checks.sh BUILD_DIR OUT_DIR [--shared=DIR] [--quick]
#
# On the default Vulkan device ($VKHLO_DEVICE picks another), in order:
#   devices.log      vkhlo --list-devices
#   e2e.log          every e2e_* test program of BUILD_DIR/tests (on a GPU
#                    they run the GPU kernels: gemm_gpu.comp, conv_gpu.glsl)
#   conformance.log  tests/conformance.sh over DIR/conformance/testdata
#                    (--shared=DIR, default ../shared beside the repo) with
#                    the passing list: a file that passes on lavapipe and
#                    fails here is reported as a regression
#   kernels.log      bench_kernels (--big: the 4096^3 rows too)
#   kernels_whole_k.log  the skinny row with VKHLO_SPLIT_K=0 (split-K's baseline)
#   fusion.log       bench_fusion (the elementwise chain against a copy)
#   fusion_serial.log  bench_fusion with VKHLO_REDUCE=serial (the subgroup
#                    reductions' baseline)
#   conv.log         bench_conv (conv_gpu.glsl against the per-element
#                    kernel, every ResNet-50 layer in both layouts)
#   overhead.log     bench_overhead (host time per execution; the scan's
#                    loop counted, read back per step, and batched)
#   models.log       bench_models (chess-9M from DIR/models when present,
#                    the generated ResNet-50s and BERT-bases)
#   xla.log          bench/xla_gpu.py on the same model files, where jax
#                    imports (XLA in the same run, for the ratios)
# --quick: one repeat each, small rows only, the add_* conformance files
# (a smoke test of this script, e.g. on lavapipe).  A step that fails is noted in summary.log and the
# next one runs; the exit status is 0 when every step ran and passed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: gpu_checks.sh BUILD_DIR OUT_DIR [--shared=DIR] [--quick]}
out=${2:?usage: gpu_checks.sh BUILD_DIR OUT_DIR [--shared=DIR] [--quick]}
shift 2
shared="$here/../shared"
quick=0
for a in "$@"; do
  case $a in
    --shared=*) shared=${a#*=} ;;
    --quick) quick=1 ;;
    *) echo "gpu_checks.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd) || exit 2
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
: > "$out/summary.log"
status=0

# step NAME COMMAND...: runs COMMAND with its output in NAME.log
step() {
  local name=$1 t0 rc
  shift
  t0=$(date +%s)
  echo "== $name: $*" | tee -a "$out/summary.log"
  "$@" > "$out/$name.log" 2>&1
  rc=$?
  echo "   exit $rc after $(($(date +%s) - t0)) s; last line: $(tail -n 1 "$out/$name.log")" | tee -a "$out/summary.log"
  [ $rc -eq 0 ] || status=1
}

e2e_all() {
  local rc=0 t
  for t in "$build"/tests/e2e_*; do
    [ -x "$t" ] || continue
    echo "-- $(basename "$t")"
    "$t" || { echo "FAILED: $(basename "$t")"; rc=1; }
  done
  return $rc
}

models_dir="$build/bench/models"
chess="$shared/models/searchless_chess_9m.mlir"
step devices "$build/vkhlo" --list-devices
step e2e e2e_all
if [ -d "$shared/conformance/testdata" ]; then
  step conformance "$here/tests/conformance.sh" "$build/vkhlo" --pattern="$([ $quick -eq 1 ] && echo '^add_' || echo .)" \
    --dir="$shared/conformance/testdata" --passing="$here/tests/conformance_passing.txt"
else
  echo "== conformance: skipped, $shared/conformance/testdata is absent" | tee -a "$out/summary.log"
fi
if [ $quick -eq 1 ]; then
  step kernels "$build/bench/bench_kernels" --rounds=1 gemm_1024
  step fusion "$build/bench/bench_fusion" 1 layer_norm
  step conv "$build/bench/bench_conv" 1 "s4 1x1 512->2048"
  step models "$build/bench/bench_models" --repeat=1 --dir="$models_dir" resnet50_nhwc
else
  step kernels "$build/bench/bench_kernels" --rounds=3 --big
  # same-run baselines of the GPU-only paths: products kept whole (no
  # split-K) and reductions one invocation per output (no subgroups)
  step kernels_whole_k env VKHLO_SPLIT_K=0 "$build/bench/bench_kernels" --rounds=3 skinny
  step fusion "$build/bench/bench_fusion" 5
  step fusion_serial env VKHLO_REDUCE=serial "$build/bench/bench_fusion" 5
  step conv "$build/bench/bench_conv" 5
  step overhead "$build/bench/bench_overhead" 21
  if [ -f "$chess" ]; then
    step models "$build/bench/bench_models" --repeat=20 --dir="$models_dir" --chess="$chess" chess_9m resnet bert decoder
  else
    step models "$build/bench/bench_models" --repeat=20 --dir="$models_dir" resnet bert decoder
  fi
fi
if python3 -c "import jax" > /dev/null 2>&1; then
  files=("$models_dir"/resnet50_nchw.mlir "$models_dir"/resnet50_nhwc.mlir "$models_dir"/bert_base.mlir
         "$models_dir"/decoder_w4.mlir)
  [ -f "$chess" ] && files=("$chess" "${files[@]}")
  [ $quick -eq 1 ] && files=("${files[0]}")
  step xla python3 "$here/bench/xla_gpu.py" --repeat=$([ $quick -eq 1 ] && echo 2 || echo 20) "${files[@]}"
else
  echo "== xla: skipped, jax does not import here" | tee -a "$out/summary.log"
fi
echo "gpu_checks.sh: exit $status" | tee -a "$out/summary.log"
exit $status
