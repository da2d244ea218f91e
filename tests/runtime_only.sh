#!/usr/bin/env bash
# runtime_only.sh SO ARCHIVE [COMPILER_ARCHIVE]
#
# Proves that the runtime library holds and needs no compiler:
#  SO       libvkhlo_runtime.so, linked with --no-undefined (so every symbol
#           it uses is inside it or in a library it names as NEEDED):
#           no compiler symbol in its symbol table (nm, locals included) or
#           its dynamic undefined symbols, only C system libraries NEEDED
#           (no libstdc++, glslang or SPIRV-Tools), and only vkhlo_*
#           exported;
#  ARCHIVE  libvkhlo_runtime.a: no compiler symbol defined by or referenced
#           from any of its members;
#  COMPILER_ARCHIVE (full builds: libvkhlo.a, the compiler on top of the
#           runtime): the same check must FIND compiler symbols there (so
#           the pattern is not vacuous), and none of the symbols it defines
#           may appear, defined or undefined, in the runtime.
# "Compiler symbols": the IR (hlo_*), codegen (codegen_*, emit*, el_*,
# glsl_*, emu64_*, shaders_*, lowering_*), the compile path of api/
# (exe_lower*, exe_schedule*, buffer assignment, in-place decisions,
# context_compiler, vkhlo_executable_compile, vkhlo_portable_artifact_to_text,
# exe_compile, tuning
# (exe_tune_compile, exe_tuning_report, context_tuning_load,
# context_tuned_target), vkhlo_context_register_custom_call), glslang (glslang_*), SPIRV-Tools
# (spv*, spirv_*) and any C++ symbol (_Z*).
# Also prints the stripped size of the .so (strip --strip-unneeded of a
# copy) and fails above $VKHLO_RUNTIME_MAX_BYTES (default 300 KB; "none":
# report only, for sanitized or unoptimized builds).
set -euo pipefail
so=$1 archive=$2 compiler=${3:-}
max=${VKHLO_RUNTIME_MAX_BYTES:-307200}

forbidden='^(glslang|spv|spirv_|hlo_|codegen_|emit|el_|glsl_|emu64_|shaders_|lowering_|exe_lower|exe_schedule|exe_assign_buffers|exe_buffer_limits|exe_decide_inplace|exe_alias_loop_state|exe_select_inplace_kernels|exe_inplace_candidate|exe_alias_operand|exe_verify_buffer_assignment|exe_liveness_lower_bound|exe_temp_bytes|exe_tensor_type_from_shape|context_compiler$|vkhlo_executable_compile$|vkhlo_portable_artifact_to_text$|exe_compile$|exe_tune_compile$|exe_tuning_report$|context_tuning_load$|context_tuned_target$|vkhlo_context_register_custom_call$|_Z|kDefaultMaxIdBound)'
failed=0
fail() { echo "runtime_only: FAIL: $*" >&2; failed=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# symbols of an object file or archive: "NAME KIND" (kind U = undefined)
symbols() { nm -A "$1" 2>/dev/null | awk '{n = NF; print $n, (NF >= 3 ? $(n-1) : "U")}' | sort -u; }

# --- the shared library
nm "$so" | awk '{print $NF}' | sort -u >"$tmp/so_all"
nm -D --undefined-only "$so" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/so_undef"
nm -D --defined-only "$so" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/so_exported"
for must in vkhlo_context_create vkhlo_buffer_create vkhlo_executable_execute vkhlo_executable_destroy; do
  grep -qx "$must" "$tmp/so_exported" || fail "$so does not export $must (wrong file?)"
done
if grep -E "$forbidden" "$tmp/so_all" >"$tmp/bad"; then fail "$so holds compiler symbols: $(head -20 "$tmp/bad" | tr '\n' ' ')"; fi
if grep -E "$forbidden" "$tmp/so_undef" >"$tmp/bad"; then fail "$so needs compiler symbols: $(tr '\n' ' ' <"$tmp/bad")"; fi
if grep -v '^vkhlo_' "$tmp/so_exported" >"$tmp/bad"; then fail "$so exports more than vkhlo_*: $(head -20 "$tmp/bad" | tr '\n' ' ')"; fi
readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$tmp/needed"
if grep -Ev '^(libc|libm|libdl|libpthread|libasan|libubsan|libgcc_s|ld-linux.*)\.so' "$tmp/needed" >"$tmp/bad"; then
  fail "$so needs libraries beyond the C runtime: $(tr '\n' ' ' <"$tmp/bad")"
fi

# --- the static archive: defined and undefined
symbols "$archive" >"$tmp/a_syms"
grep -q '^vkhlo_context_create T$' "$tmp/a_syms" || fail "$archive does not define vkhlo_context_create (wrong file?)"
if awk '{print $1}' "$tmp/a_syms" | grep -E "$forbidden" >"$tmp/bad"; then
  fail "$archive defines or references compiler symbols: $(sort -u "$tmp/bad" | head -20 | tr '\n' ' ')"
fi
awk '$2 != "U" {print $1}' "$tmp/a_syms" | sort -u >"$tmp/a_def"
awk '$2 == "U" {print $1}' "$tmp/a_syms" | sort -u | comm -23 - "$tmp/a_def" >"$tmp/a_unresolved"

# --- the compiler archive, when there is one
if [ -n "$compiler" ]; then
  symbols "$compiler" >"$tmp/c_syms"
  awk '$2 ~ /^[TDRB]$/ {print $1}' "$tmp/c_syms" | sort -u >"$tmp/c_def"
  n=$(grep -cE "$forbidden" "$tmp/c_def" || true)
  [ "$n" -ge 100 ] || fail "the pattern finds only $n compiler symbols in $compiler (it must find them there)"
  grep -qx 'hlo_parse' "$tmp/c_def" || fail "$compiler does not define hlo_parse (wrong file?)"
  # no symbol the compiler defines is defined or needed by the runtime
  if comm -12 "$tmp/c_def" "$tmp/so_all" >"$tmp/bad" && [ -s "$tmp/bad" ]; then
    fail "$so holds symbols of $compiler: $(head -20 "$tmp/bad" | tr '\n' ' ')"
  fi
  if awk '{print $1}' "$tmp/a_syms" | sort -u | comm -12 "$tmp/c_def" - >"$tmp/bad" && [ -s "$tmp/bad" ]; then
    fail "$archive defines or references symbols of $compiler: $(head -20 "$tmp/bad" | tr '\n' ' ')"
  fi
fi

# --- size
cp "$so" "$tmp/stripped.so"
strip --strip-unneeded "$tmp/stripped.so"
size=$(stat -c %s "$tmp/stripped.so")
echo "runtime_only: $(basename "$so") stripped: $size bytes ($((size / 1024)) KB; limit: $max bytes)," \
     "exports $(wc -l <"$tmp/so_exported") vkhlo_* symbols, NEEDED: $(tr '\n' ' ' <"$tmp/needed")"
echo "runtime_only: $(basename "$archive") leaves unresolved (libc/libm/libdl): $(tr '\n' ' ' <"$tmp/a_unresolved")"
[ "$max" = none ] || [ "$size" -le "$max" ] || fail "stripped size $size bytes is over $max"

if [ "$failed" -ne 0 ]; then exit 1; fi
echo "runtime_only: no compiler symbol in $(basename "$so") or $(basename "$archive")"
