/*
 * The elemental emitter (XLA's design): GLSL that computes the value of one
 * HLO instruction at one multi-index.
 *
 *   el_emit(E, instr, index, out)
 *
 * appends statements to E->body that leave |instr|'s value at |index| (one
 * GLSL expression per dimension of instr's shape, usually a local name or
 * an integer literal) in fresh locals, whose names it writes to |out| (one
 * per result: ops with a tuple shape, e.g. a reduce with two outputs, give
 * several).  Values are in the element type's *compute* type (glsl_types.h).
 *
 * Operand values come from E->operand_value, which the caller supplies: the
 * per-instruction kernel (emit.c) loads from the operand's storage buffer at
 * the row-major linear index; a fusion emitter recurses into the producer.
 * Reductions, contractions and windows are emitted as loops whose body asks
 * for the operand at the loop's index, so producers can be fused into them.
 *
 * Called computations (reduce bodies, comparators, map, scatter updates...)
 * become GLSL functions `void f(in scalars..., out results...)` in
 * E->functions, emitted by the same emitter on rank-0 values; inside them
 * operands resolve to the function's parameters and earlier locals.
 *
 * Every emitted line carries a comment naming the HLO instruction and its
 * source location.  Errors are UNIMPLEMENTED statuses for ops/types this
 * emitter does not handle; nothing here aborts.
 */
#ifndef VKHLO_CODEGEN_ELEMENTAL_H
#define VKHLO_CODEGEN_ELEMENTAL_H

#include "codegen/glsl_builder.h"
#include "codegen/glsl_types.h"
#include "codegen/target.h"
#include "hlo/hlo.h"
#include "support/strbuf.h"

#define EL_NAME_MAX 48
#define EL_MAX_FUNCTIONS 16
#define EL_MAX_RESULTS 16

typedef struct el_name {
  char s[EL_NAME_MAX];
} el_name_t;

typedef struct elemental_emitter elemental_emitter_t;
typedef struct el_scope el_scope_t;

/* Leaves the value of operand |operand_number| of |instr| at |index| (one
 * entry per dimension of that operand) in a local named in *out. */
typedef vkhlo_status_t (*el_operand_value_fn)(elemental_emitter_t *E,
                                              const hlo_instruction_t *instr,
                                              int operand_number, const el_name_t *index,
                                              el_name_t *out);

/* Optional: leaves operand |operand_number| of |instr| at row-major
 * position |linear| (an int expression) in *out and sets *handled, when the
 * operand is in memory (a row-major reshape then needs no index
 * arithmetic); leaves *handled false otherwise. */
typedef vkhlo_status_t (*el_operand_linear_fn)(elemental_emitter_t *E,
                                               const hlo_instruction_t *instr,
                                               int operand_number, const char *linear,
                                               el_name_t *out, bool *handled);

/* Optional: leaves operand |operand_number| of |instr| at |index| and at
 * the next |lanes| - 1 positions along dimension |dim| (index[dim] + j)
 * in out[0..lanes-1] and sets *handled, when it can load them at once
 * (consecutive elements of a parameter); leaves *handled false otherwise. */
typedef vkhlo_status_t (*el_operand_run_fn)(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                            int operand_number, const el_name_t *index, int dim, int lanes,
                                            el_name_t *out, bool *handled);

/* Optional: emits the innermost loop of reduce |instr| (one input) along
 * its input's minor-most dimension |dim| (|len| elements; index[dim] is a
 * placeholder the callee replaces) reading what the input needs by 64-bit
 * words, and calls el_reduce_step for each element in order, so results
 * are those of the per-element loop; sets *handled, or leaves it false
 * (the caller then loops per element). */
typedef vkhlo_status_t (*el_reduce_row_fn)(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                           el_name_t *index, int dim, int64_t len, el_name_t *acc,
                                           bool *handled);

#define EL_MAX_LANES 32

/* An index that el_delinearize made from a row-major position, and that
 * position (see elemental_emitter_t.linear_memo). */
#define EL_LINEAR_MEMO 32
typedef struct el_linear_entry {
  char key[192]; /* "name:size;" per dimension of size > 1 */
  el_name_t linear;
} el_linear_entry_t;

/* A wide kernel's lane position: |linear| is |base| + |offset|, |base| a
 * multiple of the lane count (see elemental_emitter_t.lanes). */
typedef struct el_lane_position {
  el_name_t linear, base;
  int offset;
} el_lane_position_t;

/* An index el_delinearize made of |linear| in a shape of |rank|
 * dimensions |dims|, defined in |scope| (see elemental_emitter_t.bases). */
#define EL_BASES 8
typedef struct el_base_index {
  int rank; /* 0: an empty entry */
  int64_t dims[HLO_MAX_RANK];
  el_name_t linear;
  el_name_t index[HLO_MAX_RANK];
  glsl_scope_t scope;
} el_base_index_t;

struct elemental_emitter {
  const codegen_target_t *target;
  const vkhlo_allocator_t *allocator; /* every allocation of the emitter (NULL = libc) */
  strbuf_t body;      /* statements of main() */
  /* Statements of main() before the grid-stride loop, with every
   * invocation of the workgroup active (CPU kernels; codegen_assemble):
   * a row kernel's [C] vectors, read once per invocation and shared by
   * subgroup shuffles. */
  strbuf_t preamble;
  strbuf_t functions; /* GLSL functions for called computations */
  /* Writes the lines into |body| (or a called computation's function)
   * and owns their blocks and indentation: open blocks with el_open. */
  glsl_builder_t glsl;
  int next_id;
  unsigned features; /* GLSL_FEATURE_* / GLSL_HELPERS_* used so far */
  el_operand_value_fn operand_value;
  el_operand_linear_fn operand_linear; /* NULL: always go through the index */
  el_operand_run_fn operand_run;       /* NULL: one el_operand per position */
  el_reduce_row_fn reduce_row;         /* NULL: reduce rows per element */
  void *user;
  el_scope_t *scope; /* non-NULL inside a called computation */
  int function_count;
  const hlo_computation_t *function_comps[EL_MAX_FUNCTIONS];
  el_name_t function_names[EL_MAX_FUNCTIONS];
  /* Wide kernels (codegen/emit_fusion.c): each invocation handles
   * |wide_lanes| consecutive 32-bit elements (0: one), reading the operands
   * in |wide_inputs| (bit k: operand k) and writing every result through
   * a second view of the binding, "in<k>w"/"out<r>w", of 64-bit words. */
  int wide_lanes;
  uint64_t wide_inputs;
  /* Operands read through a u64vec4 view "in<k>w" outside wide kernels
   * (bit k; a reduce's rows, el_reduce_row_fn). */
  uint64_t word_inputs;
  /* Operands read one f32, s32 or u32 element at a time through
   * "in<k>_at" (bit k; codegen_load_element_at): an R32UI texel view on
   * CPU devices, where a storage-buffer load is a loop over the lanes. */
  uint64_t element_reads;
  /* Results written through u64vec4 views "out<r>w" outside wide kernels
   * (row kernels, emit_fusion.c); |word_output_lanes| 2 or 4 makes the
   * views uint64_t or u64vec2 words (the attention kernel's columns). */
  bool word_outputs;
  int word_output_lanes;
  /* Subgroup reductions (GPU fusions, emit_fusion.c): the invocations of
   * a subgroup compute one output element together (codegen_assemble
   * gives each subgroup an element), and a reduce emitted at the top
   * level of main() splits its reduced elements over the lanes, combines
   * the lanes' partial results by butterfly and folds them into the init
   * value: every lane ends with the same result (reduce_lanes in
   * elemental.c). */
  bool subgroup_reduce;
  /* In-place dynamic_update_slice (codegen_emit_dus_in_place): the kernel
   * computes a dynamic_update_slice result (the instruction, or a
   * fusion's root) whose storage is its operand 0's, so it runs over the
   * update's elements only and writes them at the window (el_dus_window);
   * the operand's other elements are already in place. */
  bool dus_window;
  /* Kernel facts, set by the emitters and read by codegen_assemble:
   * |early_return|: main()'s body holds a `return` (an invocation that
   * finishes early), so the kernel cannot be wrapped in a grid-stride
   * loop and gets one invocation per element.  No emitter writes one
   * today; one that does must set this. */
  bool early_return;
  /* |workgroup_problems|: the invocations of a workgroup solve one
   * problem together (codegen_emit_lu): the body synchronizes them with
   * barrier() (the total is a multiple of the workgroup size, so every
   * workgroup runs the grid-stride loop in step), keeps shared arrays in
   * |functions|, and one invocation reads what another stored into a
   * result: the results are declared coherent. */
  bool workgroup_problems;
  /* Loop iterations per invocation counted by the emitters
   * (el_count_loop_iterations), for the target's max_loop_iterations;
   * |loop_instr| is the instruction that counted the most. */
  int64_t loop_iterations;
  const hlo_instruction_t *loop_instr;
  int64_t loop_instr_iterations;
  /* The last EL_LINEAR_MEMO indices el_delinearize made, with the
   * position each came from: a reshape asked for its value at such an
   * index (of the same dimensions) reads its operand at that position
   * again instead of linearizing the index (a chain of reshapes around
   * elementwise ops then reads a parameter at the kernel's own position,
   * which a wide kernel has already loaded as a word).  Index names are
   * unique and defined after the position they came from, so an index in
   * scope means its position is too. */
  el_linear_entry_t linear_memo[EL_LINEAR_MEMO];
  int linear_memo_next;
  /* Wide kernels whose lanes share every index component but the last
   * (codegen/emit_fusion.c): the lanes' positions.  el_delinearize of a
   * lane position in a shape whose last dimension the lane count divides
   * takes the components of its base position's index (the same names for
   * every lane, EL_BASES of them kept) and adds the offset to the last:
   * values that do not depend on the last dimension (a broadcast of
   * per-channel or per-group statistics) then have the same index in every
   * lane, and the fusion memo computes them once per invocation. */
  el_lane_position_t lanes[EL_MAX_LANES];
  int lane_count;
  el_base_index_t bases[EL_BASES];
  int base_next;
};

/* The number of input elements each result of reduce |instr| folds. */
int64_t el_reduced_count(const hlo_instruction_t *instr);

/* Whether reduce |instr| may be split over a subgroup's lanes on |target|
 * (elemental_emitter_t.subgroup_reduce): at least EL_LANES_REDUCE_MIN
 * elements per result (fewer run faster one invocation per result), and
 * values of types subgroupShuffleXor takes without extensions (32-bit
 * scalars, bool, complex64 as vec2, 64-bit integers as uvec2). */
#define EL_LANES_REDUCE_MIN 32
bool el_reduce_lanes_ok(const codegen_target_t *target, const hlo_instruction_t *instr);

/* Initializes |E| (empty buffers); free with el_free. */
void el_init(elemental_emitter_t *E, const codegen_target_t *target, const vkhlo_allocator_t *allocator,
             el_operand_value_fn operand_value, void *user);
void el_free(elemental_emitter_t *E);

/* True for the data-movement ops el_emit computes at an index with index
 * arithmetic and at most a few loads, no loops (broadcast, reshape,
 * transpose, slice, pad, concatenate, gather, iota...). */
bool el_is_data_movement(hlo_opcode_t op);

/* True if el_emit computes |op| at an index (elementwise, data movement,
 * reductions, contractions, windows, elementwise CHLO functions). */
bool el_is_elemental(hlo_opcode_t op);

/* Row fusions (CPU devices; codegen/fusion.c forms them, emit_fusion.c
 * emits them): a fusion whose outputs have dimensions [rows..., C] and
 * which holds row reduces, reduces over the last dimension that the
 * fusion reads back through a broadcast along that dimension (a
 * softmax's max and sum, a layer norm's mean and variance).  Its kernel
 * takes one row per invocation, unrolled along the row, so each input
 * element is read once and every reduce runs once per row.  EL_ROW_MAX
 * bounds C (the unrolled code grows with it): 768 takes BERT's, GPT-2's
 * and ViT-B's layer norms and attention over up to 768 keys.  Measured on
 * lavapipe against the three kernels of the same program (CLI --repeat,
 * alternating, bit-identical): layer norm 512 x 768 1.3 -> 0.43-0.75 ms,
 * softmax 12 x 512 x 512 7.0 -> 4.7 ms; its compile, SPIR-V optimization
 * included, about 3 s once (the SPIR-V cache keeps it).  Rows of 1024 gained
 * only 1.2-1.3x (softmax 4 x 1024 x 1024, 7.2-7.6 -> 5.5-6.3 ms) for an 8 s
 * compile, so they keep the three kernels. */
#define EL_ROW_MAX 768

/* True if |x| is a row reduce of a fusion whose outputs have dimensions
 * |out|: one input, of |out|'s dimensions, reduced over its last
 * dimension alone, 2 <= C <= EL_ROW_MAX elements long. */
bool el_is_row_reduce(const hlo_instruction_t *x, const hlo_shape_t *out);

/* Attention (CPU devices with subgroup shuffles; codegen/fusion.c forms
 * the fusion, emit_fusion.c emits it): values = dot_general(P, V), where
 * P [B..., M, L] is computed elementwise and through row reduces (a
 * softmax, elemental.h "Row fusions") from scores = dot_general(Q, K)
 * [B..., M, L]: M queries, L keys, K the contracted head size, E the
 * values' size.  One kernel computes values from Q, K and V without
 * storing scores or P: each subgroup takes the query rows of one batch
 * index, each lane keeps ceil(L / subgroup size) keys' K and V rows.
 * All f32; P's batch dimensions are both dots' batch dimensions, in
 * order; each dot has one contracting and one free dimension per
 * operand.  EL_ATTENTION_* bound what the lanes keep in registers. */
#define EL_ATTENTION_MAX_KEYS_PER_LANE 16
#define EL_ATTENTION_MAX_HEAD 128
#define EL_ATTENTION_MAX_KEPT 1024 /* keys per lane x (K + E) */

typedef struct el_attention {
  const hlo_instruction_t *scores, *values;
  int batch_rank;       /* rank of B */
  int64_t M, L, K, E;   /* queries, keys, head size, value size */
  int keys_per_lane;    /* ceil(L / subgroup size) */
} el_attention_t;

/* True if |values| and |scores| make an attention |target| takes (above);
 * |chain| (|count| instructions) are those that compute P from scores:
 * each reduce among them must be an f32 row reduce of P's dimensions,
 * and each user of |scores| among them an elementwise op of P's
 * dimensions or such a row reduce (scores are read at the element's own
 * position only).  Fills *out. */
bool el_attention_match(const codegen_target_t *target, const hlo_instruction_t *values,
                        const hlo_instruction_t *scores, const hlo_instruction_t *const *chain, int count,
                        el_attention_t *out);

/* Number of results of |instr| (tuple_count for tuple shapes, else 1) and
 * the shape of result |k|. */
int el_result_count(const hlo_instruction_t *instr);
const hlo_shape_t *el_result_shape(const hlo_instruction_t *instr, int k);

/* The elemental emitter; see above. */
vkhlo_status_t el_emit(elemental_emitter_t *E, const hlo_instruction_t *instr,
                       const el_name_t *index, el_name_t *out);

/* dot_general (or dot) |instr| for |rows| rows of |lanes| results: row q
 * starts at result index row_index[q] and runs along the result's last
 * dimension, which must be a rhs free dimension.  Rows differ only in the
 * lhs free dimensions (rows > 1 needs a dot without batch dimensions).
 * One loop over the contracting dimensions with rows x lanes
 * accumulators, each step loading |rows| lhs elements and |lanes| rhs
 * ones (through E->operand_run when it takes them).  Results in
 * out[q * lanes + j] (rows * lanes <= EL_MAX_LANES). */
vkhlo_status_t el_emit_dot_lanes(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                  const el_name_t *const *row_index, int rows, int lanes, el_name_t *out);

/* dynamic_update_slice |instr| written over its operand 0 (spec
 * 'dynamic_update_slice'): for update element |ui| (rank names), the
 * result index it goes to (the clamped start plus ui) in |out_index| and
 * the update's value there in |out|. */
vkhlo_status_t el_dus_window(elemental_emitter_t *E, const hlo_instruction_t *instr, const el_name_t *ui,
                             el_name_t *out_index, el_name_t *out);

/* One step of reduce |instr| at input index |index|: acc = body(acc,
 * input values at |index|), in the existing locals |acc|. */
vkhlo_status_t el_reduce_step(elemental_emitter_t *E, const hlo_instruction_t *instr,
                              const el_name_t *index, el_name_t *acc);

/* acc = body(acc, part) for reduce |instr|: two partial results (in the
 * existing locals |acc|, |part|, n each) combined, the left one's
 * elements before the right one's in the schedule (spec 'reduce'). */
vkhlo_status_t el_reduce_combine(elemental_emitter_t *E, const hlo_instruction_t *instr, el_name_t *acc,
                                 const el_name_t *part);

/* The value of operand |k| of |instr| at |index| (through the scope inside
 * called computations, else E->operand_value). */
vkhlo_status_t el_operand(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                          const el_name_t *index, el_name_t *out);

/* Emits |c| as a GLSL function (once per emitter) and writes its name:
 * void NAME(in P0, ..., in Pn-1, out R0, ..., out Rm-1) in compute types. */
vkhlo_status_t el_function(elemental_emitter_t *E, const hlo_instruction_t *user,
                           const hlo_computation_t *c, el_name_t *out_name);

/* Appends one indented line "<text>  // <instr name> (<loc>)" (no
 * comment when |instr| is NULL). */
void el_line(elemental_emitter_t *E, const hlo_instruction_t *instr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Blocks (glsl_builder.h): el_open appends the line printf(fmt, ...),
 * which ends with "{", and opens a scope; el_else closes |s| and opens the
 * next branch on the line "} <fmt>" ("else {", "else if (c) {"); el_close
 * closes |s|, which must be the innermost scope, with "}".  |instr| names
 * the line's comment, as in el_line. */
glsl_scope_t el_open(elemental_emitter_t *E, const hlo_instruction_t *instr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
glsl_scope_t el_else(elemental_emitter_t *E, const hlo_instruction_t *instr, glsl_scope_t s,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void el_close(elemental_emitter_t *E, const hlo_instruction_t *instr, glsl_scope_t s);
/* A fresh local name "<prefix><n>". */
void el_fresh(elemental_emitter_t *E, const char *prefix, el_name_t *out);
/* Declares a fresh local of element type |t| = printf(fmt, ...), normalized
 * to |t| when |normalize| is set. */
void el_def(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
            bool normalize, el_name_t *out, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Writes "<int literal>" into |out|. */
void el_const_index(el_name_t *out, long long v);
/* UNIMPLEMENTED "file:line:col: <message>". */
vkhlo_status_t el_unimplemented(const hlo_instruction_t *instr, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Counts |iterations| more loop iterations per invocation, run by the
 * loops |instr| opens (codegen_assemble checks the sum against the
 * target's max_loop_iterations).  Emitters count each loop they open with
 * its trip count (an upper bound where it depends on the element) times
 * the iterations of the loops around it. */
void el_count_loop_iterations(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t iterations);
/* Opens nested loops "for (int rN = 0; rN < n; rN++) {" over |dims|
 * inside loops that run |outer| times in all; writes the counters to
 * |vars| and their scopes to |loops|, and counts the iterations.  Returns
 * how often the innermost body runs (|outer| times the trip counts).
 * el_close_loops closes |count| of them, innermost first (skipping any
 * of id 0: a loop its caller did not open). */
int64_t el_open_loops(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t outer, int count,
                      const int64_t *dims, el_name_t *vars, glsl_scope_t *loops);
void el_close_loops(elemental_emitter_t *E, int count, const glsl_scope_t *loops);

/* 64-bit words (wide kernels, row reads, row kernels).  Writes into |buf|
 * the GLSL expression of 32-bit element |j| of the word named |w| (a
 * u64vec2/u64vec4, or a uint64_t when |one|), as plain 32-bit type |t|. */
void el_word_element(char *buf, size_t size, hlo_element_type_t t, const char *w, int j, bool one);

/* select_window and scatter_selected (codegen/expand.c,
 * "select_and_scatter") by words on CPU devices: el_window_lanes gives
 * the elements per invocation (8 or 4 consecutive ones along the last
 * dimension, which the window neither spans, strides nor pads; 32-bit
 * values) or 0 where the op does not qualify.
 * el_emit_select_window_lanes computes the W selections from the source
 * position |index| (its last component a multiple of W) into out[],
 * reading the operand as 64-bit words through "in0w_at";
 * el_emit_scatter_selected_lanes computes the W results from element
 * |first| (a linear index, a multiple of W; its index |index|) into out[],
 * reading the selections and the source as words through "in0w_at" and
 * "in1w_at".  The caller declares the views (wide_lanes, wide_inputs). */
int el_window_lanes(const codegen_target_t *target, const hlo_instruction_t *instr);
vkhlo_status_t el_emit_select_window_lanes(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                           const el_name_t *index, int W, el_name_t *out);
vkhlo_status_t el_emit_scatter_selected_lanes(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                              const el_name_t *index, const char *first, int W, el_name_t *out);
/* Records the features of element type |t| in E->features. */
void el_use_type(elemental_emitter_t *E, hlo_element_type_t t);
/* Appends the row-major linear index of |index| in |shape| ("0" for rank 0). */
void el_append_linear(strbuf_t *sb, const hlo_shape_t *shape, const el_name_t *index);
/* Maps row-major position |linear| (an int expression) to an index of
 * |shape|, in index locals (literal 0 for dimensions of size 1). */
void el_delinearize(elemental_emitter_t *E, const hlo_instruction_t *instr,
                    const hlo_shape_t *shape, const char *linear, el_name_t *out);
/* Converts compute value |v| of type |from| to type |to| (convert semantics). */
void el_convert(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t from,
                hlo_element_type_t to, const char *v, el_name_t *out);

#endif
