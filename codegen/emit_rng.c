/*
 * rng_bit_generator (spec 'rng_bit_generator'), bit-exact with XLA.
 *
 * The spec leaves the bits implementation-defined; programs (and the
 * conformance expectations) come from XLA, so we reproduce XLA's
 * RngBitGeneratorExpander + prng library exactly.  The state operand is
 * ui64: state[0] is the key, the rest the counter.
 *
 *   THREE_FRY (state ui64[2]): Threefry-2x32 with 20 rounds.  Element with
 *     row-major position p of the counter shape encrypts the 64-bit counter
 *     state[1] + p (as two u32 words, low first) under key state[0].
 *     64-bit outputs: one block per element, value = lo | hi << 32; the new
 *     counter is state[1] + n.
 *     32-bit outputs: XLA splits the shape in two along split_dim (the first
 *     even dimension, else the largest one): the counter shape has
 *     ceil(d/2) there, block word 0 feeds even positions and word 1 odd
 *     ones; the new counter is state[1] + (elements of the half shape).
 *   PHILOX and DEFAULT (XLA's default is Philox; state ui64[3]):
 *     Philox-4x32 with 10 rounds, key state[0], 128-bit counter
 *     (state[1] low, state[2] high).  Block v encrypts counter + v; 32-bit
 *     outputs take element j from word j % 4 of block j / 4, 64-bit outputs
 *     from word pair j % 2 of block j / 2; the counter advances by the
 *     number of blocks.
 * Output element types: 32- and 64-bit (the bits reinterpreted as the
 * type, as bitcast_convert would); narrower types are UNIMPLEMENTED, as in
 * XLA's expander.
 *
 * One invocation per output element; invocation 0 also writes the new
 * state.  Needs native 64-bit integers (shaderInt64).
 */
#include "codegen/emit_internal.h"

#include <stdio.h>
#include <string.h>

#include "codegen/shaders.h"
#include "support/status.h"

enum { RNG_DEFAULT = 0, RNG_THREE_FRY = 1, RNG_PHILOX = 2 };

/* The generators' GLSL (vk_threefry2x32, vk_philox4x32) is shaders/rng.glsl. */

/* The output value of type |t| from bits |b| (uint or uint64_t). */
static void from_bits(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                      const char *b, el_name_t *out) {
  switch (t) {
    case HLO_F32: el_def(E, instr, t, false, out, "uintBitsToFloat(%s)", b); break;
    case HLO_S32: el_def(E, instr, t, false, out, "int(%s)", b); break;
    case HLO_F64: el_def(E, instr, t, false, out, "uint64BitsToDouble(%s)", b); break;
    case HLO_S64: el_def(E, instr, t, false, out, "int64_t(%s)", b); break;
    default: el_def(E, instr, t, false, out, "%s", b); break; /* ui32, ui64 */
  }
}

vkhlo_status_t codegen_emit_rng_bit_generator(elemental_emitter_t *E,
                                              const hlo_instruction_t *instr, int64_t *out_total) {
  if (el_result_count(instr) != 2)
    return el_unimplemented(instr, "rng_bit_generator needs two results");
  const hlo_shape_t *ss = el_result_shape(instr, 0), *os = el_result_shape(instr, 1);
  hlo_element_type_t t = os->element_type;
  int width = hlo_element_type_bit_width(t);
  if (width != 32 && width != 64)
    return el_unimplemented(instr, "unsupported element type %s for stablehlo.rng_bit_generator",
                            hlo_element_type_name(t));
  if (!E->target->shader_int64)
    return el_unimplemented(instr, "stablehlo.rng_bit_generator needs shaderInt64");
  if (ss->element_type != HLO_U64 || ss->rank != 1)
    return el_unimplemented(instr, "rng_bit_generator with a %s state",
                            hlo_element_type_name(ss->element_type));
  int alg = instr->attrs.rng_algorithm == RNG_THREE_FRY ? RNG_THREE_FRY : RNG_PHILOX;
  int64_t state_n = ss->dimensions[0];
  if (state_n < 2)
    return el_unimplemented(instr, "rng_bit_generator with a state of %lld values",
                            (long long)state_n);
  E->features |= GLSL_FEATURE_INT64;
  const shaders_file_t *rng = shaders_find("rng.glsl");
  if (!rng) return VKHLO_INTERNAL("shaders/rng.glsl is not embedded in the library");
  strbuf_appendn(&E->functions, rng->text, rng->size_bytes);
  int64_t n = hlo_shape_element_count(os);

  el_name_t sidx, state[3];
  for (int k = 0; k < 3 && k < state_n; k++) {
    el_const_index(&sidx, k);
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, &sidx, &state[k]));
  }
  if (state_n < 3) el_def(E, instr, HLO_U64, false, &state[2], "uint64_t(0)");

  el_name_t index[HLO_MAX_RANK], counter, bits, value;
  el_line(E, instr, "int idx = int(gid);");
  el_delinearize(E, instr, os, "idx", index);
  int64_t advance; /* counter increment, in blocks */
  if (alg == RNG_THREE_FRY) {
    if (width == 64) {
      advance = n;
      el_def(E, instr, HLO_U64, false, &counter, "%s + uint64_t(idx)", state[1].s);
      el_def(E, instr, HLO_U64, false, &bits,
             "vk_u64_from_words(vk_threefry2x32(vk_u64_words(%s), vk_u64_words(%s)))", state[0].s,
             counter.s);
    } else {
      /* XLA's SplitShapeIntoHalves: the first even dimension, else the largest. */
      int d = -1;
      for (int i = 0; i < os->rank && d < 0; i++)
        if (os->dimensions[i] % 2 == 0) d = i;
      if (d < 0 && os->rank > 0) {
        d = 0;
        for (int i = 1; i < os->rank; i++)
          if (os->dimensions[i] > os->dimensions[d]) d = i;
      }
      hlo_shape_t half = *os;
      el_name_t hidx[HLO_MAX_RANK], word;
      if (d >= 0) {
        half.dimensions[d] = (os->dimensions[d] + 1) / 2;
        memcpy(hidx, index, sizeof(el_name_t) * (size_t)os->rank);
        el_fresh(E, "i", &hidx[d]);
        el_line(E, instr, "int %s = %s / 2;", hidx[d].s, index[d].s);
        el_fresh(E, "i", &word);
        el_line(E, instr, "int %s = %s %% 2;", word.s, index[d].s);
      } else {
        el_const_index(&word, 0);
      }
      advance = d >= 0 ? hlo_shape_element_count(&half) : 1;
      strbuf_t lin;
      strbuf_init(&lin, E->allocator);
      if (d >= 0) el_append_linear(&lin, &half, hidx);
      else strbuf_append(&lin, "0");
      el_def(E, instr, HLO_U64, false, &counter, "%s + uint64_t(%s)", state[1].s,
             lin.data ? lin.data : "0");
      bool failed = lin.failed;
      strbuf_free(&lin);
      if (failed) return VKHLO_NO_MEMORY();
      el_name_t block;
      el_fresh(E, "w", &block);
      el_line(E, instr, "uvec2 %s = vk_threefry2x32(vk_u64_words(%s), vk_u64_words(%s));",
              block.s, state[0].s, counter.s);
      el_def(E, instr, HLO_U32, false, &bits, "(%s == 0 ? %s.x : %s.y)", word.s, block.s,
             block.s);
    }
  } else {
    int per_block = width == 32 ? 4 : 2;
    advance = (n + per_block - 1) / per_block;
    el_name_t lo, hi, block;
    el_def(E, instr, HLO_U64, false, &lo, "%s + uint64_t(idx / %d)", state[1].s, per_block);
    el_def(E, instr, HLO_U64, false, &hi, "%s + (%s < %s ? uint64_t(1) : uint64_t(0))",
           state[2].s, lo.s, state[1].s);
    el_fresh(E, "w", &block);
    el_line(E, instr,
            "uvec4 %s = vk_philox4x32(vk_u64_words(%s), uvec4(vk_u64_words(%s), "
            "vk_u64_words(%s)));",
            block.s, state[0].s, lo.s, hi.s);
    if (width == 32)
      el_def(E, instr, HLO_U32, false, &bits, "%s[idx %% 4]", block.s);
    else
      el_def(E, instr, HLO_U64, false, &bits,
             "(idx %% 2 == 0 ? vk_u64_from_words(%s.xy) : vk_u64_from_words(%s.zw))", block.s,
             block.s);
  }
  from_bits(E, instr, t, bits.s, &value);
  glsl_scope_t in_range = el_open(E, instr, "if (idx < %lld) {", (long long)n);
  codegen_store_result(E, instr, 1, index, value.s);
  el_close(E, instr, in_range);

  /* The new state: the key, the advanced counter, anything else unchanged. */
  glsl_scope_t first = el_open(E, instr, "if (idx == 0) {");
  el_name_t nlo, nhi;
  el_def(E, instr, HLO_U64, false, &nlo, "%s + uint64_t(%lluul)", state[1].s,
         (unsigned long long)advance);
  el_def(E, instr, HLO_U64, false, &nhi, "%s + (%s < %s ? uint64_t(1) : uint64_t(0))",
         state[2].s, nlo.s, state[1].s);
  for (int64_t k = 0; k < state_n; k++) {
    el_name_t si, v;
    el_const_index(&si, k);
    if (k == 0) v = state[0];
    else if (k == 1) v = nlo;
    else if (k == 2 && alg == RNG_PHILOX) v = nhi;
    else VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, &si, &v));
    codegen_store_result(E, instr, 0, &si, v.s);
  }
  el_close(E, instr, first);
  *out_total = n > 0 ? n : 1;
  return NULL;
}
