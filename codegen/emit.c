/*
 * The per-instruction kernel driver: one GLSL 450 compute shader per HLO
 * instruction, shape-specialized (every shape, stride and attribute is a
 * literal in the GLSL).
 *
 * Layout of a kernel (see codegen/kernel.h for the binding convention):
 *   #version 450, the #extensions the element types need,
 *   layout(local_size_x = 64) in;
 *   one std430 buffer per operand ("in<k>", readonly) then per result
 *   ("out<r>", writeonly; readwrite for scatter),
 *   the helper prelude (glsl_prelude.c), functions for called computations,
 *   main(): gid = linear invocation index; return if gid >= total; then the
 *   op's statements.
 *
 * Most ops use one invocation per result element: main() delinearizes gid
 * into the result's row-major multi-index, asks the elemental emitter for
 * the value(s) there and stores them.  Sort and scatter write to computed
 * positions and have their own bodies (emit_sort.c, emit_scatter.c).
 *
 * Ops and element types we cannot emit give UNIMPLEMENTED with the
 * instruction's file:line:col; we never emit code with wrong semantics on
 * purpose.
 */
#include "codegen/emit_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/emit_conv.h"
#include "codegen/shaders.h"
#include "support/status.h"

void codegen_kernel_free(codegen_kernel_t *k) {
  if (!k) return;
  vkhlo_free(k->allocator, k->name);
  vkhlo_free(k->allocator, k->glsl);
  k->name = k->glsl = NULL;
}

bool codegen_instruction_needs_kernel(const hlo_instruction_t *instr) {
  return hlo_opcode_needs_kernel(instr->opcode);
}

static vkhlo_status_t check_shape_types(const codegen_target_t *target, const hlo_shape_t *s,
                                        hlo_location_t loc) {
  if (hlo_shape_is_tuple(s)) {
    for (int i = 0; i < s->tuple_count; i++)
      VKHLO_RETURN_IF_ERROR(check_shape_types(target, &s->tuple_shapes[i], loc));
    return NULL;
  }
  if (s->element_type == HLO_TOKEN) return NULL;
  return glsl_type_check(target, s->element_type, loc);
}

vkhlo_status_t codegen_check_element_types(const codegen_target_t *target,
                                           const hlo_instruction_t *instr) {
  for (int k = 0; k < instr->operand_count; k++)
    VKHLO_RETURN_IF_ERROR(check_shape_types(target, &instr->operands[k]->shape, instr->loc));
  return check_shape_types(target, &instr->shape, instr->loc);
}

/* ------------------------------------------------------ loads/stores */

vkhlo_status_t codegen_load_element(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                                    const char *buffer, const char *position, el_name_t *out) {
  strbuf_t load;
  strbuf_init(&load, E->allocator);
  glsl_append_load_element(&load, E->target, t, buffer, position);
  el_def(E, instr, t, false, out, "%s", load.data ? load.data : "0");
  bool failed = load.failed;
  strbuf_free(&load);
  return failed ? VKHLO_NO_MEMORY() : NULL;
}

vkhlo_status_t codegen_load_element_at(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                                       int k, const char *position, uint64_t *element_reads, el_name_t *out) {
  char buffer[16];
  snprintf(buffer, sizeof buffer, "in%d", k);
  bool word32 = t == HLO_F32 || t == HLO_S32 || t == HLO_U32;
  if (!word32 || glsl_type_is_packed(E->target, t) || k < 0 || k >= 64)
    return codegen_load_element(E, instr, t, buffer, position, out);
  *element_reads |= 1ull << k;
  el_def(E, instr, t, false, out, "%s_at(%s)", buffer, position);
  return NULL;
}

/* Loads binding |buffer|, a tensor of shape |s|, at the row-major position
 * of |index|; with |view| >= 0 (the operand number of that binding) through
 * its in<view>_at element view (codegen_load_element_at). */
static vkhlo_status_t load_at_index(elemental_emitter_t *E, const hlo_instruction_t *instr, const hlo_shape_t *s,
                                    const char *buffer, int view, const el_name_t *index, el_name_t *out) {
  strbuf_t ref;
  strbuf_init(&ref, E->allocator);
  el_append_linear(&ref, s, index);
  const char *position = ref.data ? ref.data : "0";
  vkhlo_status_t st = ref.failed ? VKHLO_NO_MEMORY()
                      : view >= 0 ? codegen_load_element_at(E, instr, s->element_type, view, position, &E->element_reads, out)
                                  : codegen_load_element(E, instr, s->element_type, buffer, position, out);
  strbuf_free(&ref);
  return st;
}

vkhlo_status_t codegen_load_operand(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                                    const el_name_t *index, el_name_t *out) {
  char buffer[16];
  snprintf(buffer, sizeof buffer, "in%d", k);
  return load_at_index(E, instr, &instr->operands[k]->shape, buffer, -1, index, out);
}

vkhlo_status_t codegen_load_operand_viewed(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                                           const el_name_t *index, el_name_t *out) {
  return load_at_index(E, instr, &instr->operands[k]->shape, NULL, k, index, out);
}

void codegen_load_result(elemental_emitter_t *E, const hlo_instruction_t *instr, int r,
                         const el_name_t *index, el_name_t *out) {
  char buffer[16];
  snprintf(buffer, sizeof buffer, "out%d", r);
  vkhlo_status_t st = load_at_index(E, instr, el_result_shape(instr, r), buffer, -1, index, out);
  if (st) { /* out of memory: the kernel's assembly reports it */
    vkhlo_status_free(st);
    E->body.failed = true;
  }
}

void codegen_store_result(elemental_emitter_t *E, const hlo_instruction_t *instr, int r,
                          const el_name_t *index, const char *v) {
  const hlo_shape_t *s = el_result_shape(instr, r);
  strbuf_t line, ref;
  strbuf_init(&line, E->allocator);
  strbuf_init(&ref, E->allocator);
  char buffer[16];
  snprintf(buffer, sizeof buffer, "out%d", r);
  el_append_linear(&ref, s, index);
  glsl_append_store_element(&line, E->target, s->element_type, buffer, ref.data ? ref.data : "0",
                            v);
  if (line.failed || ref.failed) E->body.failed = true;
  else el_line(E, instr, "%s", line.data);
  strbuf_free(&line);
  strbuf_free(&ref);
}

/* --------------------------------------------------------- assembly */

/* |wide|: the 64-bit word view of a binding (block "Buffer<binding>w"). */
static void declare_buffer(strbuf_t *sb, int binding, const char *qualifier, const char *storage,
                           const char *name, bool wide) {
  strbuf_printf(sb, "layout(std430, set = 0, binding = %d) %sbuffer Buffer%d%s { %s data[]; } %s;\n",
                binding, qualifier, binding, wide ? "w" : "", storage, name);
}

/* At most this many texel views per kernel (the rest of its word views
 * stay storage buffers): every device allows 16 sampled images per stage. */
enum { MAX_TEXEL_VIEWS = 16 };

void codegen_declare_word_view(strbuf_t *sb, const codegen_target_t *target, const hlo_instruction_t *instr, int k,
                               const char *word, int first_texel_binding, uint64_t *texel_inputs,
                               unsigned *features) {
  int texels = strcmp(word, "u64vec4") == 0 ? 2 : strcmp(word, "u64vec2") == 0 ? 1 : 0;
  uint64_t bytes = hlo_shape_size_bytes(&instr->operands[k]->shape);
  int views = __builtin_popcountll(*texel_inputs);
  if (target->texel_words && texels && k < 64 && bytes >= 16 && bytes / 16 <= target->max_texel_buffer_elements &&
      views < MAX_TEXEL_VIEWS) {
    strbuf_printf(sb, "layout(set = 0, binding = %d) uniform usamplerBuffer in%dt;\n", first_texel_binding + views, k);
    strbuf_printf(sb, "#define in%dw_at(i) VK_TEXEL_WORD%d(in%dt, i)\n", k, 2 * texels, k);
    *texel_inputs |= 1ull << k;
    *features |= GLSL_HELPERS_TEXEL;
    return;
  }
  strbuf_printf(sb, "layout(std430, set = 0, binding = %d) readonly buffer Buffer%dw { %s data[]; } in%dw;\n", k, k,
                word, k);
  strbuf_printf(sb, "#define in%dw_at(i) in%dw.data[i]\n", k, k);
}

void codegen_declare_element_view(strbuf_t *sb, const codegen_target_t *target, const hlo_instruction_t *instr,
                                  int k, bool texel, int first_texel_binding, uint64_t texel_inputs,
                                  uint64_t *scalar_inputs) {
  uint64_t bytes = hlo_shape_size_bytes(&instr->operands[k]->shape);
  int views = __builtin_popcountll(texel_inputs) + __builtin_popcountll(*scalar_inputs);
  hlo_element_type_t t = instr->operands[k]->shape.element_type;
  if (texel && target->texel_words && k < 64 && (t == HLO_F32 || t == HLO_S32 || t == HLO_U32) && bytes >= 4 &&
      bytes / 4 <= target->max_texel_buffer_elements && views < MAX_TEXEL_VIEWS) {
    strbuf_printf(sb, "layout(set = 0, binding = %d) uniform usamplerBuffer in%ds;\n", first_texel_binding + views, k);
    strbuf_printf(sb, "#define in%d_at(i) %s(texelFetch(in%ds, int(i)).x)\n", k,
                  t == HLO_F32 ? "uintBitsToFloat" : t == HLO_S32 ? "int" : "", k);
    *scalar_inputs |= 1ull << k;
  } else {
    strbuf_printf(sb, "#define in%d_at(i) in%d.data[i]\n", k, k);
  }
}

vkhlo_status_t codegen_assemble(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                int64_t total, bool results_readwrite, codegen_kernel_t *out) {
  int nres = el_result_count(instr);
  for (int k = 0; k < instr->operand_count; k++)
    el_use_type(E, instr->operands[k]->shape.element_type);
  for (int r = 0; r < nres; r++) el_use_type(E, el_result_shape(instr, r)->element_type);
  if (total > 0xFFFFFFFFll)
    return el_unimplemented(instr, "stablehlo.%s with %lld invocations (more than 2^32)",
                            hlo_opcode_name(instr->opcode), (long long)total);
  if (E->body.failed || E->functions.failed || E->preamble.failed) return VKHLO_NO_MEMORY();
  VKHLO_RETURN_IF_ERROR(glsl_builder_check(&E->glsl));
  uint32_t limit = E->target->max_loop_iterations;
  if (limit && E->loop_iterations > limit) {
    const hlo_instruction_t *at = E->loop_instr ? E->loop_instr : instr;
    return el_unimplemented(at,
                            "stablehlo.%s runs %lld loop iterations per invocation here; this device "
                            "(llvmpipe) stops an invocation's loops after %u (its loop limiter), which "
                            "would give wrong results", hlo_opcode_name(at->opcode),
                            (long long)E->loop_iterations, limit);
  }

  strbuf_t sb;
  strbuf_init(&sb, E->allocator);
  strbuf_append(&sb, "#version 450\n");
  if (E->features & GLSL_FEATURE_INT64)
    strbuf_append(&sb, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n");
  if (E->features & GLSL_FEATURE_STORAGE8)
    strbuf_append(&sb, "#extension GL_EXT_shader_8bit_storage : require\n");
  if (E->features & GLSL_FEATURE_STORAGE16)
    strbuf_append(&sb, "#extension GL_EXT_shader_16bit_storage : require\n");
  if (E->features & GLSL_FEATURE_SUBGROUP_SHUFFLE)
    strbuf_append(&sb, "#extension GL_KHR_shader_subgroup_basic : require\n"
                       "#extension GL_KHR_shader_subgroup_shuffle : require\n");
  strbuf_printf(&sb, "// %s: stablehlo.%s", instr->name, hlo_opcode_name(instr->opcode));
  if (instr->loc.file) strbuf_printf(&sb, " at %s:%d:%d", instr->loc.file, instr->loc.line, instr->loc.col);
  strbuf_printf(&sb, "\nlayout(local_size_x = %u) in;\n", CODEGEN_LOCAL_SIZE_X);
  for (int k = 0; k < instr->operand_count; k++) {
    char name[16];
    snprintf(name, sizeof name, "in%d", k);
    declare_buffer(&sb, k, "readonly ",
                   glsl_buffer_type_on(E->target, instr->operands[k]->shape.element_type), name, false);
  }
  for (int r = 0; r < nres; r++) {
    char name[16];
    snprintf(name, sizeof name, "out%d", r);
    hlo_element_type_t rt = el_result_shape(instr, r)->element_type;
    /* packed stores are atomics on the word: readwrite */
    bool rw = results_readwrite || glsl_type_is_packed(E->target, rt);
    declare_buffer(&sb, instr->operand_count + r, E->workgroup_problems ? "coherent " : rw ? "" : "writeonly ",
                   glsl_buffer_type_on(E->target, rt), name, false);
  }
  /* 64-bit word views of the same bindings: a wide kernel's words of
   * wide_lanes elements, a row kernel's (word_outputs) of 8 */
  const char *w = E->wide_lanes == 4 ? "u64vec2" : E->wide_lanes == 2 ? "uint64_t" : "u64vec4";
  uint64_t texel_inputs = 0;
  int first_texel = instr->operand_count + nres;
  for (int k = 0; E->wide_lanes && k < instr->operand_count && k < 64; k++)
    if (E->wide_inputs >> k & 1)
      codegen_declare_word_view(&sb, E->target, instr, k, w, first_texel, &texel_inputs, &E->features);
  const char *wout = !E->word_outputs || E->wide_lanes ? w
                     : E->word_output_lanes == 4 ? "u64vec2"
                     : E->word_output_lanes == 2 ? "uint64_t"
                                                 : "u64vec4";
  for (int r = 0; (E->wide_lanes || E->word_outputs) && r < nres; r++) {
    char name[16];
    snprintf(name, sizeof name, "out%dw", r);
    declare_buffer(&sb, instr->operand_count + r, "writeonly ", wout, name, true);
  }
  for (int k = 0; k < instr->operand_count && k < 64; k++) { /* a reduce's rows read by words */
    if (!(E->word_inputs >> k & 1) || (E->wide_lanes && (E->wide_inputs >> k & 1))) continue;
    codegen_declare_word_view(&sb, E->target, instr, k, "u64vec4", first_texel, &texel_inputs, &E->features);
  }
  uint64_t scalar_inputs = 0; /* the element reads' views, after the word views */
  for (int k = 0; k < instr->operand_count && k < 64; k++)
    if (E->element_reads >> k & 1)
      codegen_declare_element_view(&sb, E->target, instr, k, true, first_texel, texel_inputs, &scalar_inputs);
  strbuf_append(&sb, "\n");
  glsl_append_prelude(&sb, E->features);
  strbuf_append(&sb, "\n");
  if (E->functions.data) strbuf_append(&sb, E->functions.data);
  /* On CPU devices (lavapipe) each workgroup costs a scheduling step and
   * the SIMD lanes are the invocations: a capped number of workgroups
   * whose invocations loop over the elements with a grid stride is about
   * twice as fast as one invocation per element, and consecutive lanes
   * still touch consecutive elements.  GPUs get one invocation per element,
   * and so does a body that returns early (it would leave the loop). */
  bool grid_stride = E->target->is_cpu && !E->early_return && !E->subgroup_reduce;
  strbuf_append(&sb, "void main() {\n");
  if (E->preamble.data) strbuf_append(&sb, E->preamble.data);
  if (E->subgroup_reduce) { /* an element per subgroup (emit_fusion.c, "Subgroup reductions") */
    strbuf_printf(&sb,
                  "  uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumSubgroups;\n"
                  "  for (uint gid = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * gl_NumSubgroups + "
                  "gl_SubgroupID; gid < %lluu; gid += stride) {\n",
                  (unsigned long long)total);
  } else if (grid_stride) {
    strbuf_printf(&sb,
                  "  uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * %uu;\n"
                  "  for (uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * "
                  "gl_NumWorkGroups.x * %uu; gid < %lluu; gid += stride) {\n",
                  CODEGEN_LOCAL_SIZE_X, CODEGEN_LOCAL_SIZE_X, (unsigned long long)total);
  } else {
    strbuf_printf(&sb,
                  "  uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * "
                  "gl_NumWorkGroups.x * %uu;\n",
                  CODEGEN_LOCAL_SIZE_X);
    strbuf_printf(&sb, "  if (gid >= %lluu) return;\n", (unsigned long long)total);
  }
  if (E->body.data) strbuf_append(&sb, E->body.data);
  if (grid_stride || E->subgroup_reduce) strbuf_append(&sb, "  }\n");
  strbuf_append(&sb, "}\n");
  char *glsl = strbuf_take(&sb);
  if (!glsl) return VKHLO_NO_MEMORY();

  char *name = vkhlo_malloc(E->allocator, strlen(instr->name) + 1);
  if (!name) {
    vkhlo_free(E->allocator, glsl);
    return VKHLO_NO_MEMORY();
  }
  size_t i = 0;
  for (const char *p = instr->name; *p; p++)
    name[i++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
                    ? *p : '_';
  name[i] = 0;

  uint64_t groups = ((uint64_t)total + CODEGEN_LOCAL_SIZE_X - 1) / CODEGEN_LOCAL_SIZE_X;
  if (E->subgroup_reduce) { /* a subgroup per element; larger subgroups than the target says: the loop takes the rest */
    uint64_t sg = E->target->subgroup_size ? E->target->subgroup_size : 32;
    groups = ((uint64_t)total * sg + CODEGEN_LOCAL_SIZE_X - 1) / CODEGEN_LOCAL_SIZE_X;
  }
  if (groups == 0) groups = 1;
  uint64_t max_groups = E->wide_lanes ? CODEGEN_CPU_MAX_GROUPS_WIDE : CODEGEN_CPU_MAX_GROUPS;
  if (grid_stride && groups > max_groups) groups = max_groups;
  uint64_t maxx = E->target->max_workgroup_count[0] ? E->target->max_workgroup_count[0] : 65535;
  uint64_t gx = groups < maxx ? groups : maxx;
  uint64_t gy = (groups + gx - 1) / gx;
  uint64_t maxy = E->target->max_workgroup_count[1] ? E->target->max_workgroup_count[1] : 65535;
  if (gy > maxy) {
    vkhlo_free(E->allocator, glsl);
    vkhlo_free(E->allocator, name);
    return el_unimplemented(instr, "stablehlo.%s needs %llu workgroups (too many for the device)",
                            hlo_opcode_name(instr->opcode), (unsigned long long)groups);
  }
  *out = (codegen_kernel_t){.allocator = E->allocator};
  out->name = name;
  out->glsl = glsl;
  out->local_size_x = CODEGEN_LOCAL_SIZE_X;
  out->group_count[0] = (uint32_t)gx;
  out->group_count[1] = (uint32_t)gy;
  out->group_count[2] = 1;
  out->input_count = instr->operand_count;
  out->output_count = nres;
  out->texel_inputs = texel_inputs;
  out->scalar_inputs = scalar_inputs;
  return NULL;
}

/* ------------------------------------------------------------ driver */

/* One invocation per element of the result(s); all results share dims. */
vkhlo_status_t codegen_emit_elemental_kernel(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                            int64_t *out_total) {
  int nres = el_result_count(instr);
  if (nres < 1 || nres > EL_MAX_RESULTS)
    return el_unimplemented(instr, "stablehlo.%s with %d results", hlo_opcode_name(instr->opcode),
                            nres);
  const hlo_shape_t *s0 = el_result_shape(instr, 0);
  for (int r = 1; r < nres; r++)
    if (!hlo_shape_compatible_dims(s0, el_result_shape(instr, r)))
      return el_unimplemented(instr, "results of different shapes");
  el_name_t index[HLO_MAX_RANK], values[EL_MAX_RESULTS];
  if (E->dus_window) { /* codegen_emit_dus_in_place: the update's elements only */
    const hlo_shape_t *us = &instr->operands[1]->shape;
    el_name_t oi[HLO_MAX_RANK];
    el_line(E, instr, "int idx = int(gid);");
    el_delinearize(E, instr, us, "idx", index);
    VKHLO_RETURN_IF_ERROR(el_dus_window(E, instr, index, oi, &values[0]));
    codegen_store_result(E, instr, 0, oi, values[0].s);
    *out_total = hlo_shape_element_count(us);
    return NULL;
  }
  el_line(E, instr, "int idx = int(gid);");
  el_delinearize(E, instr, s0, "idx", index);
  VKHLO_RETURN_IF_ERROR(el_emit(E, instr, index, values));
  for (int r = 0; r < nres; r++) codegen_store_result(E, instr, r, index, values[r].s);
  *out_total = hlo_shape_element_count(s0);
  return NULL;
}

/* Ops computed at an index, or with kernels of their own. */
static bool is_supported_op(hlo_opcode_t op) {
  return el_is_elemental(op) || hlo_opcode_emitter(op) == HLO_EMITTER_KERNEL;
}

int codegen_dus_in_place_operand(const hlo_instruction_t *instr) {
  if (hlo_shape_is_tuple(&instr->shape) || hlo_element_type_size_bytes(instr->shape.element_type) < 4 ||
      hlo_element_type_bit_width(instr->shape.element_type) != (int)(8 * hlo_element_type_size_bytes(instr->shape.element_type)))
    return -1;
  if (instr->opcode == HLO_OPCODE_DYNAMIC_UPDATE_SLICE) return 0;
  if (instr->opcode != HLO_OPCODE_FUSION || instr->called_count < 1) return -1;
  const hlo_computation_t *f = instr->called_computations[0];
  const hlo_instruction_t *root = f->root;
  if (!root || root->opcode != HLO_OPCODE_DYNAMIC_UPDATE_SLICE || root->operands[0]->opcode != HLO_OPCODE_PARAMETER)
    return -1;
  const hlo_instruction_t *param = root->operands[0];
  for (int i = 0; i < f->instruction_count; i++) /* the operand is read by the root alone */
    for (int j = 0; j < f->instructions[i]->operand_count; j++)
      if (f->instructions[i]->operands[j] == param && (f->instructions[i] != root || j != 0)) return -1;
  int k = param->parameter_number;
  return k >= 0 && k < instr->operand_count ? k : -1;
}

static vkhlo_status_t emit_kernel(const codegen_target_t *target, const vkhlo_allocator_t *allocator,
                                  const hlo_instruction_t *instr, bool dus_window, codegen_kernel_t *out);

vkhlo_status_t codegen_emit_dus_in_place(const codegen_target_t *target, const vkhlo_allocator_t *allocator,
                                         const hlo_instruction_t *instr, codegen_kernel_t *out, bool *handled) {
  memset(out, 0, sizeof *out);
  *handled = codegen_dus_in_place_operand(instr) >= 0;
  return *handled ? emit_kernel(target, allocator, instr, true, out) : NULL;
}

vkhlo_status_t codegen_emit_instruction(const codegen_target_t *target, const vkhlo_allocator_t *allocator,
                                        const hlo_instruction_t *instr, codegen_kernel_t *out) {
  return emit_kernel(target, allocator, instr, false, out);
}

static vkhlo_status_t emit_kernel(const codegen_target_t *target, const vkhlo_allocator_t *allocator,
                                  const hlo_instruction_t *instr, bool dus_window, codegen_kernel_t *out) {
  memset(out, 0, sizeof *out);
  out->allocator = allocator; /* read by codegen_emit_conv and codegen_emit_gemm */
  if (!is_supported_op(instr->opcode)) {
    if (hlo_opcode_is_chlo(instr->opcode))
      return el_unimplemented(instr, "unsupported op chlo.%s", hlo_opcode_name(instr->opcode));
    return el_unimplemented(instr, "unsupported op stablehlo.%s", hlo_opcode_name(instr->opcode));
  }
  VKHLO_RETURN_IF_ERROR(codegen_check_element_types(target, instr));
  /* Index arithmetic in the kernels is 32-bit signed. */
  for (int k = -1; k < instr->operand_count; k++) {
    const hlo_instruction_t *v = k < 0 ? instr : instr->operands[k];
    for (int r = 0; r < el_result_count(v); r++)
      if (hlo_shape_element_count(el_result_shape(v, r)) > 0x7FFFFFFF)
        return el_unimplemented(instr, "stablehlo.%s on a tensor of 2^31 or more elements",
                                hlo_opcode_name(instr->opcode));
  }
  el_attention_t shape; /* attention: a kernel of emit_fusion.c, not a GEMM */
  bool attention = dus_window || codegen_attention_fusion(target, instr, &shape);
  if (!attention && (instr->opcode == HLO_OPCODE_CONVOLUTION || instr->opcode == HLO_OPCODE_FUSION)) {
    bool handled = false; /* library kernel from shaders/ (emit_conv.c) */
    vkhlo_status_t cst = codegen_emit_conv(target, instr, out, &handled);
    if (cst || handled) return cst;
  }
  bool gemm = false;
  if (!attention) VKHLO_RETURN_IF_ERROR(codegen_emit_gemm(target, instr, out, &gemm));
  if (gemm) return NULL;
  out->tune_key[0] = 0; /* a library kernel tried and given up: no choices */
  out->tune_candidates = 0;
  elemental_emitter_t E;
  el_init(&E, target, allocator, codegen_load_operand, NULL);
  E.dus_window = dus_window;
  if (dus_window)
    el_line(&E, instr, "/* in place: the result's storage is operand %d's; only the update's elements are written */",
            codegen_dus_in_place_operand(instr));
  int64_t total = 0;
  /* the ops with a kernel of their own; |readwrite|: it reads back its results */
  static const struct {
    hlo_opcode_t opcode;
    vkhlo_status_t (*emit)(elemental_emitter_t *, const hlo_instruction_t *, int64_t *);
    bool readwrite;
  } kernels[] = {
      {HLO_OPCODE_SORT, codegen_emit_sort, false},
      {HLO_OPCODE_SORT_RUNS, codegen_emit_sort, false},
      {HLO_OPCODE_CHLO_TOP_K, codegen_emit_top_k, false},
      {HLO_OPCODE_FUSION, codegen_emit_fusion, false},
      {HLO_OPCODE_SCATTER, codegen_emit_scatter, true},
      {HLO_OPCODE_SELECT_WINDOW, codegen_emit_select_and_scatter_part, false},
      {HLO_OPCODE_SCATTER_SELECTED, codegen_emit_select_and_scatter_part, false},
      {HLO_OPCODE_TRIANGULAR_SOLVE, codegen_emit_triangular_solve, true},
      {HLO_OPCODE_CHOLESKY, codegen_emit_cholesky, true},
      {HLO_OPCODE_LU, codegen_emit_lu, true},
      {HLO_OPCODE_LU_PIVOTS_TO_PERMUTATION, codegen_emit_lu_pivots_to_permutation, true},
      {HLO_OPCODE_QR, codegen_emit_qr, true},
      {HLO_OPCODE_HOUSEHOLDER_PRODUCT, codegen_emit_householder_product, true},
      {HLO_OPCODE_EIGH, codegen_emit_eigh, true},
      {HLO_OPCODE_EIGH_ROUND, codegen_emit_eigh_round, false},
      {HLO_OPCODE_SVD, codegen_emit_svd, true},
      {HLO_OPCODE_SVD_ROUND, codegen_emit_svd_round, false},
      {HLO_OPCODE_TRIDIAGONAL_SOLVE, codegen_emit_tridiagonal_solve, true},
      {HLO_OPCODE_FFT, codegen_emit_fft, false},
      {HLO_OPCODE_RNG_BIT_GENERATOR, codegen_emit_rng_bit_generator, false},
  };
  bool readwrite = false;
  vkhlo_status_t (*emitter)(elemental_emitter_t *, const hlo_instruction_t *, int64_t *) = codegen_emit_elemental_kernel;
  for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++)
    if (kernels[k].opcode == instr->opcode) {
      emitter = kernels[k].emit;
      readwrite = kernels[k].readwrite;
    }
  vkhlo_status_t st = emitter(&E, instr, &total);
  if (!st) st = codegen_assemble(&E, instr, total, readwrite, out);
  el_free(&E);
  return st;
}

vkhlo_status_t codegen_emit_library_kernel(codegen_library_kernel_t which, const vkhlo_allocator_t *allocator,
                                           codegen_kernel_t *out) {
  memset(out, 0, sizeof *out);
  out->allocator = allocator;
  const char *file = which == CODEGEN_LOOP_GATE ? "loop_gate.comp" : "copy_words.comp";
  const char *name = which == CODEGEN_LOOP_GATE ? "loop_gate" : "copy_words";
  const shaders_file_t *f = shaders_find(file);
  if (!f) return VKHLO_INTERNAL("shaders/%s is not embedded", file);
  out->name = vkhlo_malloc(allocator, strlen(name) + 1);
  out->glsl = vkhlo_malloc(allocator, f->size_bytes + 1);
  if (!out->name || !out->glsl) {
    codegen_kernel_free(out);
    return VKHLO_NO_MEMORY();
  }
  strcpy(out->name, name);
  memcpy(out->glsl, f->text, f->size_bytes + 1);
  out->local_size_x = which == CODEGEN_LOOP_GATE ? 1 : 64;
  out->group_count[0] = out->group_count[1] = out->group_count[2] = 1;
  out->input_count = 1;
  out->output_count = 1;
  return NULL;
}
