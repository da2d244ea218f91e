/*
 * scatter (spec 'scatter'), and at the end the two kernels of a
 * select_and_scatter (codegen/expand.c).
 *
 * The caller has copied each input into its result buffer (kernel.h); the
 * kernel walks every update element in row-major order of the updates
 * tensor, computes its result index per the spec
 *   update_scatter_index = update_index[dims not in update_window_dims]
 *   start_index = scatter_indices[update_scatter_index with ':' at
 *                 index_vector_dim]
 *   full_start_index[scatter_dims_to_operand_dims[k]] = start_index[k]
 *   full_batching_index[input_batching_dims[i]] =
 *       update_scatter_index[scatter_indices_batching_dims[i] (-1 past ivd)]
 *   full_window_index = update_index[update_window_dims] with 0 inserted at
 *                       inserted_window_dims and input_batching_dims
 *   result_index = full_start_index + full_batching_index + full_window_index
 * and applies results[result_index] = update_computation(results[...],
 * updates[...]).  Like XLA, an update window whose start would put any part
 * of the window out of bounds is skipped as a whole.
 *
 * Updates are applied in that order, so any update computation (not just
 * commutative ones) and duplicate indices give the deterministic in-order
 * result.  Where the window's start index is 0 along every input
 * dimension the window spans more than 1 of (the scatter indices pick
 * rows, batches, inserted dimensions: an embedding's gradient, x.at[i] +=
 * rows), two different window elements never meet in one result element,
 * and each result element is only ever updated at one window position:
 * then an invocation per window element loops over the scatter positions
 * in row-major order, and every result element sees its updates in the
 * sequential order (bit-identical).  Otherwise one invocation loops over
 * every update element.  (lavapipe, 512 rows of 768 added into 32000 x
 * 768: refused before, the one invocation's loop past its 65535
 * iterations.)
 */
#include <string.h>

#include "codegen/emit_internal.h"
#include "codegen/emulate64.h"

#include "support/status.h"

/* The window's size along each input dimension into wsize[]; false when
 * update_window_dims is too short. */
static bool window_sizes(const hlo_instruction_t *instr, int64_t *wsize) {
  const hlo_attrs_t *a = &instr->attrs;
  const hlo_shape_t *is = &instr->operands[0]->shape;
  const hlo_shape_t *us = &instr->operands[instr->operand_count - 1]->shape;
  int wi = 0;
  for (int d = 0; d < is->rank; d++) {
    if (hlo_dims_contains(a->inserted_window_dims, d) || hlo_dims_contains(a->input_batching_dims, d)) {
      wsize[d] = 1;
    } else {
      if (wi >= a->update_window_dims.count) return false;
      wsize[d] = us->dimensions[a->update_window_dims.data[wi++]];
    }
  }
  return true;
}

bool codegen_scatter_parallel(const hlo_instruction_t *instr) {
  int64_t wsize[HLO_MAX_RANK];
  if (instr->operand_count < 3 || !window_sizes(instr, wsize)) return false;
  for (int d = 0; d < instr->operands[0]->shape.rank; d++)
    if (wsize[d] > 1 && hlo_dims_contains(instr->attrs.scatter_dims_to_operand_dims, d)) return false;
  return true;
}

vkhlo_status_t codegen_emit_scatter(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                    int64_t *out_total) {
  const hlo_attrs_t *a = &instr->attrs;
  int n = (instr->operand_count - 1) / 2;
  if (n < 1 || instr->operand_count != 2 * n + 1 || n > EL_MAX_RESULTS / 2)
    return el_unimplemented(instr, "scatter with %d operands", instr->operand_count);
  if (instr->called_count < 1) return el_unimplemented(instr, "scatter without update computation");
  const hlo_shape_t *is = &instr->operands[0]->shape;
  const hlo_shape_t *ss = &instr->operands[n]->shape;
  const hlo_shape_t *us = &instr->operands[n + 1]->shape;
  int64_t ivd = a->index_vector_dim;
  *out_total = 1;

  /* window size along each input dimension */
  int64_t wsize[HLO_MAX_RANK];
  if (!window_sizes(instr, wsize)) return el_unimplemented(instr, "scatter: update_window_dims too short");
  /* race-free over the window (see the top) */
  bool parallel = codegen_scatter_parallel(instr);
  el_name_t u[HLO_MAX_RANK];
  glsl_scope_t loops[HLO_MAX_RANK];
  int nloops = us->rank;
  if (parallel) { /* an invocation per window element, the scatter positions looped */
    int64_t wd[HLO_MAX_RANK], sd[HLO_MAX_RANK];
    int nw = 0, ns = 0;
    for (int d = 0; d < us->rank; d++)
      if (hlo_dims_contains(a->update_window_dims, d)) wd[nw++] = us->dimensions[d];
      else sd[ns++] = us->dimensions[d];
    hlo_shape_t ws;
    memset(&ws, 0, sizeof ws);
    hlo_shape_init(&ws, us->element_type, nw, wd);
    el_name_t wv[HLO_MAX_RANK], sv[HLO_MAX_RANK];
    el_line(E, instr, "int idx = int(gid);");
    el_delinearize(E, instr, &ws, "idx", wv);
    el_open_loops(E, instr, 1, ns, sd, sv, loops);
    nloops = ns;
    for (int d = 0, iw = 0, is_ = 0; d < us->rank; d++) u[d] = hlo_dims_contains(a->update_window_dims, d) ? wv[iw++] : sv[is_++];
    *out_total = hlo_shape_element_count(&ws);
  } else {
    el_open_loops(E, instr, 1, us->rank, us->dimensions, u, loops);
  }
  el_name_t usi[HLO_MAX_RANK];
  int nsi = 0;
  for (int d = 0; d < us->rank; d++)
    if (!hlo_dims_contains(a->update_window_dims, d)) usi[nsi++] = u[d];

  el_name_t si[HLO_MAX_RANK];
  int b = 0;
  for (int d = 0; d < ss->rank; d++) {
    if (d == ivd) el_const_index(&si[d], 0);
    else if (b < nsi) si[d] = usi[b++];
    else el_const_index(&si[d], 0);
  }
  el_name_t start[HLO_MAX_RANK];
  for (int d = 0; d < is->rank; d++) el_const_index(&start[d], 0);
  hlo_element_type_t st = ss->element_type;
  const char *ct = glsl_compute_type(st);
  for (int k = 0; k < a->scatter_dims_to_operand_dims.count; k++) {
    int64_t od = a->scatter_dims_to_operand_dims.data[k];
    if (od < 0 || od >= is->rank) return el_unimplemented(instr, "bad scatter_dims_to_operand_dims");
    if (ivd < ss->rank) el_const_index(&si[ivd], k);
    el_name_t v;
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, n, si, &v));
    /* clamp into [-1, dim] first so the int conversion cannot wrap into range */
    if (glsl_type_is_emulated64(E->target, st)) {
      emu64_index(E, instr, st, v.s, -1, is->dimensions[od], &start[od]);
      continue;
    }
    el_fresh(E, "i", &start[od]);
    if (hlo_element_type_is_signed_int(st))
      el_line(E, instr, "int %s = int(clamp(%s, %s(-1), %s(%lld)));", start[od].s, v.s, ct, ct,
              (long long)is->dimensions[od]);
    else if (hlo_element_type_is_unsigned_int(st))
      el_line(E, instr, "int %s = int(min(%s, %s(%lld)));", start[od].s, v.s, ct,
              (long long)is->dimensions[od]);
    else return el_unimplemented(instr, "scatter indices of type %s", hlo_element_type_name(st));
  }
  for (int i = 0; i < a->input_batching_dims.count; i++) {
    int64_t od = a->input_batching_dims.data[i];
    int64_t sd = i < a->scatter_indices_batching_dims.count ? a->scatter_indices_batching_dims.data[i] : 0;
    int64_t bi = (ivd < ss->rank && sd > ivd) ? sd - 1 : sd;
    if (bi < 0 || bi >= nsi) return el_unimplemented(instr, "bad scatter_indices_batching_dims");
    el_name_t t;
    el_fresh(E, "i", &t);
    el_line(E, instr, "int %s = %s + %s;", t.s, start[od].s, usi[bi].s);
    start[od] = t;
  }
  el_name_t valid;
  el_fresh(E, "b", &valid);
  el_line(E, instr, "bool %s = true;", valid.s);
  for (int d = 0; d < is->rank; d++)
    el_line(E, instr, "%s = %s && %s >= 0 && %s <= %lld;", valid.s, valid.s, start[d].s,
            start[d].s, (long long)(is->dimensions[d] - wsize[d]));
  glsl_scope_t inside = el_open(E, instr, "if (%s) {", valid.s);
  el_name_t ri[HLO_MAX_RANK];
  int wi = 0;
  for (int d = 0; d < is->rank; d++) {
    if (hlo_dims_contains(a->inserted_window_dims, d) || hlo_dims_contains(a->input_batching_dims, d)) {
      ri[d] = start[d];
    } else {
      int64_t ud = a->update_window_dims.data[wi++];
      el_fresh(E, "i", &ri[d]);
      el_line(E, instr, "int %s = %s + %s;", ri[d].s, start[d].s, u[ud].s);
    }
  }
  el_name_t args[EL_MAX_RESULTS], res[EL_MAX_RESULTS];
  for (int k = 0; k < n; k++) codegen_load_result(E, instr, k, ri, &args[k]);
  for (int k = 0; k < n; k++) VKHLO_RETURN_IF_ERROR(el_operand(E, instr, n + 1 + k, u, &args[n + k]));
  el_name_t fn;
  VKHLO_RETURN_IF_ERROR(el_function(E, instr, instr->called_computations[0], &fn));
  strbuf_t call;
  strbuf_init(&call, E->allocator);
  for (int k = 0; k < n; k++) {
    hlo_element_type_t t = el_result_shape(instr, k)->element_type;
    el_fresh(E, "v", &res[k]);
    el_line(E, instr, "%s %s;", glsl_compute_type_on(E->target, t), res[k].s);
  }
  strbuf_printf(&call, "%s(", fn.s);
  for (int k = 0; k < 2 * n; k++) strbuf_printf(&call, "%s%s", k ? ", " : "", args[k].s);
  for (int k = 0; k < n; k++) strbuf_printf(&call, ", %s", res[k].s);
  strbuf_append(&call, ");");
  if (call.failed) {
    strbuf_free(&call);
    return VKHLO_NO_MEMORY();
  }
  el_line(E, instr, "%s", call.data);
  strbuf_free(&call);
  for (int k = 0; k < n; k++) codegen_store_result(E, instr, k, ri, res[k].s);
  el_close(E, instr, inside);
  el_close_loops(E, nloops, loops);
  return NULL;
}

/* select_window and scatter_selected (codegen/expand.c,
 * "select_and_scatter"): per element at an index (elemental.c), or on CPU
 * devices W consecutive elements along the last dimension per invocation,
 * their operands read as 64-bit words (el_window_lanes): lavapipe, the
 * 8 x 112 x 112 x 64 max-pool gradient (NHWC) 61 -> 16 ms. */
vkhlo_status_t codegen_emit_select_and_scatter_part(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                                    int64_t *out_total) {
  const hlo_shape_t *rs = &instr->shape;
  int W = el_window_lanes(E->target, instr);
  if (!W) return codegen_emit_elemental_kernel(E, instr, out_total);
  el_name_t index[HLO_MAX_RANK], v[EL_MAX_LANES];
  bool scatter = instr->opcode == HLO_OPCODE_SCATTER_SELECTED;
  E->features |= GLSL_FEATURE_INT64;
  E->wide_lanes = W;
  E->wide_inputs = scatter ? 3 : 1; /* the selections and the source; the operand */
  el_line(E, instr, "int idx = int(gid) * %d;", W);
  el_delinearize(E, instr, rs, "idx", index);
  if (scatter) VKHLO_RETURN_IF_ERROR(el_emit_scatter_selected_lanes(E, instr, index, "idx", W, v));
  else VKHLO_RETURN_IF_ERROR(el_emit_select_window_lanes(E, instr, index, W, v));
  strbuf_t sb;
  strbuf_init(&sb, E->allocator);
  const char *bits = rs->element_type == HLO_F32 ? "floatBitsToUint" : "uint";
  strbuf_printf(&sb, "out0w.data[gid] = %s(", W == 8 ? "u64vec4" : "u64vec2");
  for (int j = 0; j < W; j += 2)
    strbuf_printf(&sb, "%spackUint2x32(uvec2(%s(%s), %s(%s)))", j ? ", " : "", bits, v[j].s, bits, v[j + 1].s);
  strbuf_append(&sb, ");");
  if (sb.failed) E->body.failed = true;
  else el_line(E, instr, "%s", sb.data);
  strbuf_free(&sb);
  *out_total = hlo_shape_element_count(rs) / W;
  return NULL;
}
