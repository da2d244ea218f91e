/*
 * Shared pieces of the per-instruction kernel emitters (emit.c, emit_sort.c,
 * emit_scatter.c): the standard operand loader and the assembly of a
 * complete GLSL compute shader around a main() body.
 */
#ifndef VKHLO_CODEGEN_EMIT_INTERNAL_H
#define VKHLO_CODEGEN_EMIT_INTERNAL_H

#include "codegen/elemental.h"
#include "codegen/kernel.h"

#define CODEGEN_LOCAL_SIZE_X 64u
/* Workgroups per dispatch on CPU devices (grid-stride loops; see emit.c);
 * wide kernels (emit_fusion.c), whose invocations do 8 elements each,
 * measured fastest with fewer (elementwise8's kernel, 16M f32 on
 * lavapipe, best of 15: 16384 groups 14.8 ms, 4096 groups 11.5-14.5 ms,
 * 2048 groups 16-19 ms). */
#define CODEGEN_CPU_MAX_GROUPS 16384u
#define CODEGEN_CPU_MAX_GROUPS_WIDE 4096u
/* Rows of 8 lanes per invocation in wide kernels with dots (register
 * blocking: each rhs word load serves that many rows). */
#define CODEGEN_CPU_DOT_ROWS 4

/* Defines a local (named in *out) holding element |position| (an int
 * expression) of binding block |buffer| ("in0", "out1"), a tensor of
 * element type |t|; the line's comment names |instr|. */
vkhlo_status_t codegen_load_element(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                                    const char *buffer, const char *position, el_name_t *out);

/* codegen_load_element of operand |k|'s binding ("in<k>") for a library
 * kernel's epilogue or a fused kernel on a CPU device: an f32, s32 or u32
 * element (k < 64) through the in<k>_at macro, which the kernel defines
 * with codegen_declare_element_view for every bit it finds set in
 * *element_reads (an R32UI texel view on CPU devices); other types from
 * the storage buffer. */
vkhlo_status_t codegen_load_element_at(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                                       int k, const char *position, uint64_t *element_reads, el_name_t *out);

/* el_operand_value_fn that loads operand |k| from binding k ("in<k>") at
 * the row-major linear position of |index|. */
vkhlo_status_t codegen_load_operand(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                                    const el_name_t *index, el_name_t *out);

/* codegen_load_operand through operand |k|'s element view (in<k>_at, an
 * R32UI texel view on CPU devices for 32-bit types; codegen_load_element_at):
 * for kernels that read an operand element by element in a loop. */
vkhlo_status_t codegen_load_operand_viewed(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                                           const el_name_t *index, el_name_t *out);

/* Loads result |r| ("out<r>", a readwrite binding) at |index| into a local. */
void codegen_load_result(elemental_emitter_t *E, const hlo_instruction_t *instr, int r,
                         const el_name_t *index, el_name_t *out);
/* Stores compute value |v| into result |r| at |index|. */
void codegen_store_result(elemental_emitter_t *E, const hlo_instruction_t *instr, int r,
                          const el_name_t *index, const char *v);

/* Declares the 64-bit word view of operand |k|'s binding, words of |word|
 * ("u64vec4", "u64vec2" or "uint64_t"), which the kernel reads as
 * in<k>w_at(i) (word i): a storage buffer "in<k>w" at binding k, or, where
 * the target has texel_words and the words are 2 or 4 components, a
 * uniform texel buffer "in<k>t" (RGBA32UI texels, shaders/texel_words.glsl)
 * at binding |first_texel_binding| + the texel views before it; then
 * *texel_inputs gains bit k and *features GLSL_HELPERS_TEXEL.  lavapipe
 * reads a texel with one vector load per lane where it reads each
 * component of a storage buffer in a loop over the lanes. */
void codegen_declare_word_view(strbuf_t *sb, const codegen_target_t *target, const hlo_instruction_t *instr, int k,
                               const char *word, int first_texel_binding, uint64_t *texel_inputs,
                               unsigned *features);

/* Declares in<k>_at(i), element i of operand |k| (f32, s32 or u32, as
 * float, int or uint): where
 * |texel| and the target has texel_words, read through a uniform texel
 * buffer "in<k>s" of R32UI texels at binding |first_texel_binding| + the
 * texel views before it (*scalar_inputs gains bit k; lavapipe gathers the
 * lanes' elements with one instruction instead of a loop over the lanes),
 * else from the storage buffer "in<k>" (declared by the caller).  Once per
 * operand. */
void codegen_declare_element_view(strbuf_t *sb, const codegen_target_t *target, const hlo_instruction_t *instr,
                                  int k, bool texel, int first_texel_binding, uint64_t texel_inputs,
                                  uint64_t *scalar_inputs);

/* Builds the complete kernel for |instr| around the main() statements in
 * E->body (which run after `uint gid = ...; if (gid >= total) return;`),
 * with |total| invocations.  |results_readwrite|: results are read too. */
vkhlo_status_t codegen_assemble(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                int64_t total, bool results_readwrite, codegen_kernel_t *out);

/* Kernel bodies for the ops that write computed positions (sort and
 * sort_runs: codegen_emit_sort). */
vkhlo_status_t codegen_emit_sort(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                 int64_t *out_total);
vkhlo_status_t codegen_emit_top_k(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                  int64_t *out_total);
/* The kernel of a fusion instruction (emit_fusion.c). */
vkhlo_status_t codegen_emit_fusion(elemental_emitter_t *E, const hlo_instruction_t *fusion,
                                   int64_t *out_total);
/* Is |fusion| an attention fusion the fusion kernel emits as one
 * (elemental.h, el_attention_match)?  Fills *a. */
bool codegen_attention_fusion(const codegen_target_t *target, const hlo_instruction_t *fusion, el_attention_t *a);
vkhlo_status_t codegen_emit_scatter(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                    int64_t *out_total);
/* Whether the scatter kernel runs an invocation per window element (the
 * window's start index 0 along every input dimension it spans more than
 * 1 of; emit_scatter.c), each looping over the scatter positions, or one
 * invocation over every update element. */
bool codegen_scatter_parallel(const hlo_instruction_t *instr);
/* The kernel of an instruction computed at each index of its result
 * (elemental.c), one invocation per element: the default of emit.c's
 * table of kernels. */
vkhlo_status_t codegen_emit_elemental_kernel(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                             int64_t *out_total);
vkhlo_status_t codegen_emit_select_and_scatter_part(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                                    int64_t *out_total);
/* Whether the GEMM kernels take dot_general (or dot) |dot|'s element types:
 * f32, f16 or bf16 operands each of the result's type, or f16/bf16 into an
 * f32 result (see plan_gemm in emit_gemm.c); not a tuple.  Split-K
 * (codegen/expand.c) asks the same. */
bool codegen_gemm_types(const hlo_instruction_t *dot);
/* The integer element types the GEMM and convolution kernels sum as ints
 * (GEMM_INT, CONV_INT): 8, 16 and 32 bits, signed or not; and the float
 * ones they read and write: f32, and f16 / bf16 summed in f32. */
bool codegen_kernel_int_type(hlo_element_type_t t);
bool codegen_kernel_float_type(hlo_element_type_t t);
/* Whether |x| is a multiply of integer weights by a scale (per column or
 * per group of k), or the subtract of their zero point under such a
 * multiply, in f32, f16 or bf16, that the GEMM kernels read as their
 * products' rhs (emit_gemm.c "Scaled weights"): codegen/fusion.c fuses it
 * into their clusters. */
bool codegen_gemm_scaled_operand(const codegen_target_t *target, const hlo_instruction_t *x);
/* Whether one GEMM kernel can compute dots |a| and |b| (several products
 * of one lhs, NDOT in shaders/gemm_cpu.comp): the same lhs, result and rhs
 * shapes, element types and dimension numbers.  codegen/fusion.c puts a
 * second dot into a cluster only so. */
bool codegen_gemm_same_product(const hlo_instruction_t *a, const hlo_instruction_t *b);
/* Whether the GEMM kernel computes chlo.ragged_dot |instr| on |target| as
 * a grouped product (emit_gemm.c, "Ragged products"); the expand pass
 * expands the others into dot_general (codegen/expand.c). */
bool codegen_ragged_dot_gemm(const codegen_target_t *target, const hlo_instruction_t *instr);
/* The GEMM kernel (shaders/gemm_*.comp) of a dot_general or of an output
 * fusion around one (emit_gemm.c); *handled false: not a GEMM it takes. */
vkhlo_status_t codegen_emit_gemm(const codegen_target_t *target, const hlo_instruction_t *instr,
                                 codegen_kernel_t *out, bool *handled);
/* |x| inside fused computation |fc| as a strided view of a kernel binding
 * (emit_gemm.c): a fused parameter through reshapes, transposes,
 * broadcast_in_dim and f32 converts; its binding (the fusion operand)
 * and the element stride of each of x's dimensions.  False where it is
 * none (other ops, not f32, a reshape merging dimensions that are no
 * progression). */
bool codegen_strided_view(const hlo_computation_t *fc, const hlo_instruction_t *x, int *binding, int64_t *stride);
/* Kernels that own a whole problem per invocation (results readwrite):
 * emit_linalg.c, emit_fft.c, emit_rng.c. */
vkhlo_status_t codegen_emit_triangular_solve(elemental_emitter_t *E,
                                             const hlo_instruction_t *instr, int64_t *out_total);
vkhlo_status_t codegen_emit_cholesky(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                     int64_t *out_total);
/* The internal lu (LU factorization with partial pivoting, LAPACK getrf's
 * results) and lu_pivots_to_permutation (codegen/expand.c, "solver custom
 * calls"). */
vkhlo_status_t codegen_emit_lu(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total);
vkhlo_status_t codegen_emit_eigh(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total);
vkhlo_status_t codegen_emit_eigh_round(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total);
vkhlo_status_t codegen_emit_svd_round(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total);
vkhlo_status_t codegen_emit_svd(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total);
vkhlo_status_t codegen_emit_tridiagonal_solve(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                             int64_t *out_total);
vkhlo_status_t codegen_emit_qr(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total);
vkhlo_status_t codegen_emit_householder_product(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                                int64_t *out_total);
vkhlo_status_t codegen_emit_lu_pivots_to_permutation(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                                     int64_t *out_total);
vkhlo_status_t codegen_emit_fft(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                int64_t *out_total);
vkhlo_status_t codegen_emit_rng_bit_generator(elemental_emitter_t *E,
                                              const hlo_instruction_t *instr, int64_t *out_total);

#endif
