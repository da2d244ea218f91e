/*
 * The HLO IR: HloModule -> computations -> instructions.
 *
 * An HloModule owns an arena; every computation, instruction, shape array,
 * attribute array, literal and string of the module lives there and is freed
 * with the module.  Passes allocate from the module's arena and never free
 * single nodes.  The arena's allocator (module->arena.allocator, the host
 * allocator of the context that parsed it) is also the one every pass and
 * emitter uses for its temporary heap blocks: hlo/ and codegen/ know no
 * context, only that pointer.
 *
 * Invariants (checked by hlo_verify):
 *  - A computation's |instructions| are in def-before-use order; operands
 *    always come from the same computation (nested regions are separate
 *    computations, referenced through |called_computations|).
 *  - Parameters are instructions with opcode HLO_OPCODE_PARAMETER, listed in
 *    |parameters| in order, and also present in |instructions|.
 *  - An op with exactly one result has that result's (array or token) shape.
 *    An op with zero or several results has a tuple shape; its results are
 *    read with get_tuple_element.  A computation returning several values
 *    has a tuple instruction as |root|; returning one value, that value.
 *    Tuples are one level deep (no tuple of tuples) except where an op
 *    explicitly builds one (stablehlo.tuple).
 *  - Shapes are static.  Layouts default to row-major
 *    (minor_to_major = {rank-1, ..., 0}).
 *
 * This file knows nothing of Vulkan or GLSL.
 */
#ifndef VKHLO_HLO_HLO_H
#define VKHLO_HLO_HLO_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/arena.h"
#include "support/status.h"

/* ---------------------------------------------------------------- types */

typedef enum hlo_element_type_e {
#define X(e, name, size, kind, bits) HLO_##e,
#include "hlo/element_types.def"
#undef X
  HLO_TUPLE, /* not an element type: marks a tuple shape */
  HLO_ELEMENT_TYPE_COUNT
} hlo_element_type_t;

const char *hlo_element_type_name(hlo_element_type_t t); /* "f32", "complex<f32>", "tuple" */
size_t hlo_element_type_size_bytes(hlo_element_type_t t); /* host bytes per element */
int hlo_element_type_bit_width(hlo_element_type_t t);
bool hlo_element_type_is_float(hlo_element_type_t t);    /* f16, bf16, f32, f64, f8... */
bool hlo_element_type_is_complex(hlo_element_type_t t);
/* The type of a complex type's real and imaginary parts (f32 for
 * complex<f32>, f64 for complex<f64>); |t| itself for any other type. */
hlo_element_type_t hlo_element_type_real(hlo_element_type_t t);
bool hlo_element_type_is_signed_int(hlo_element_type_t t);   /* i2..i64 (not i1) */
bool hlo_element_type_is_unsigned_int(hlo_element_type_t t); /* ui2..ui64 */
bool hlo_element_type_is_integer(hlo_element_type_t t);      /* signed or unsigned, not i1 */
/* Parses a MLIR element type spelling ("f32", "ui8", "complex<f64>"); false if unknown. */
bool hlo_element_type_from_name(const char *name, size_t len, hlo_element_type_t *out);

#define HLO_MAX_RANK 16

/* A quantized element type (spec "Quantized element types",
 * !quant.uniform<i8:f32, 0.1:-30>): storage values s stand for
 * (s - zero_point) * scale of the expressed type, per tensor or per index
 * along |axis|. */
typedef struct hlo_quant {
  hlo_element_type_t storage, expressed;
  int64_t storage_min, storage_max;
  int axis;  /* quantization_dimension; -1 per tensor */
  int count; /* scales and zero points: 1 per tensor */
  const double *scales;
  const int64_t *zero_points;
} hlo_quant_t;

typedef struct hlo_shape {
  hlo_element_type_t element_type; /* HLO_TUPLE for tuples */
  int rank;
  int64_t dimensions[HLO_MAX_RANK];
  /* Layout: minor_to_major[0] is the fastest-varying dimension. */
  int8_t minor_to_major[HLO_MAX_RANK];
  /* Tuple shapes only. */
  int tuple_count;
  struct hlo_shape *tuple_shapes;
  /* The parser's, on the types it reads: the quantization of a quantized
   * tensor type, whose element_type is then the storage type.  The parser
   * turns quantized values into their storage values and explicit
   * arithmetic (hlo/parser.c, "quantized types"): no instruction's shape
   * carries one. */
  const hlo_quant_t *quant;
} hlo_shape_t;

/* A dimension the program's text leaves open (`tensor<?x4xf32>`, spec
 * "Types": dynamic dimension sizes).  It appears only in the types the
 * parser reads: shape refinement (hlo/refine.c) gives every instruction a
 * static shape from the parameters' actual types before anything else
 * sees it. */
#define HLO_DYNAMIC_DIM (-1)
/* True when |shape| (or one of its tuple elements) has a dynamic dimension. */
bool hlo_shape_is_dynamic(const hlo_shape_t *shape);

/* A rank-|rank| array shape with the default row-major layout. */
void hlo_shape_init(hlo_shape_t *shape, hlo_element_type_t t, int rank, const int64_t *dims);
int64_t hlo_shape_element_count(const hlo_shape_t *shape);
/* The length along its dimension of a sort_runs result (attrs in
 * hlo_attrs_t): |len| elements in groups of |merged|, each group keeping
 * its first |k| (k = 0: all, |len|). */
int64_t hlo_sort_runs_length(int64_t len, int64_t merged, int64_t k);
size_t hlo_shape_size_bytes(const hlo_shape_t *shape); /* host bytes; 0 for tuples */
bool hlo_shape_is_tuple(const hlo_shape_t *shape);
bool hlo_shape_equal(const hlo_shape_t *a, const hlo_shape_t *b); /* type and dims, not layout */
bool hlo_shape_compatible_dims(const hlo_shape_t *a, const hlo_shape_t *b);
/* The same dimensions once the 1s are dropped, and the same last one: a
 * reshape between them keeps every element's row-major position and each
 * row's elements (e.g. 128x3072 and 1x128x3072). */
bool hlo_shape_dims_equal_but_ones(const hlo_shape_t *a, const hlo_shape_t *b);
/* Whether dimensions |dims| (n of them, in that order) of the row-major
 * array |shape| make one run: ascending, with only dimensions of extent 1
 * between them (those of extent 1 in |dims| skipped); such dimensions,
 * flattened, are one strided dimension (a GEMM's contracting dimensions). */
bool hlo_shape_dims_contiguous(const hlo_shape_t *shape, const int64_t *dims, int n);
/* Writes "tensor<2x3xf32>" (or "tuple<...>") into |buf| (always NUL-terminated). */
void hlo_shape_to_string(const hlo_shape_t *shape, char *buf, size_t buf_size);

/* A dense array value in host representation (see element_types.def), row-major. */
typedef struct hlo_literal {
  hlo_shape_t shape;
  void *data;
  size_t size_bytes;
} hlo_literal_t;

/* ------------------------------------------------------------ opcodes */

typedef enum hlo_opcode_e {
#define X(e, name, kind, emitter, cost, remap, alias, effect) HLO_OPCODE_##e,
#include "hlo/opcodes.def"
#undef X
  HLO_OPCODE_COUNT
} hlo_opcode_t;

const char *hlo_opcode_name(hlo_opcode_t op); /* "add", "dot_general", ... */
bool hlo_opcode_is_elementwise(hlo_opcode_t op);
/* Elementwise, or a CHLO function of its operands' elements at the same
 * index (erf, lgamma, is_inf, next_after, ...): what may read a producer
 * at its own index. */
bool hlo_opcode_is_pointwise(hlo_opcode_t op);
bool hlo_opcode_is_chlo(hlo_opcode_t op);
/* Opcodes whose every instance has a side effect (the effect column of
 * opcodes.def: check, infeed, outfeed, send, recv, rng).  (custom_call has one when its has_side_effect
 * attribute says so: see hlo_instruction_has_side_effect.) */
bool hlo_opcode_has_side_effect(hlo_opcode_t op);

/* The properties columns of opcodes.def (see there for their meaning). */
typedef enum hlo_emitter_class {
  HLO_EMITTER_ELEMENTAL,
  HLO_EMITTER_MOVE,
  HLO_EMITTER_KERNEL,
  HLO_EMITTER_NONE,
  HLO_EMITTER_UNSUPPORTED,
} hlo_emitter_class_t;
typedef enum hlo_op_cost { HLO_COST_CHEAP, HLO_COST_REDUCTION, HLO_COST_CONTRACTION } hlo_op_cost_t;

hlo_emitter_class_t hlo_opcode_emitter(hlo_opcode_t op);
hlo_op_cost_t hlo_opcode_cost(hlo_opcode_t op);
/* cost is not CHEAP: a loop per result element. */
bool hlo_opcode_is_expensive(hlo_opcode_t op);
/* cost is CONTRACTION: operand elements are read many times each. */
bool hlo_opcode_is_contraction(hlo_opcode_t op);
/* The op only remaps indices or converts one value (the remap column). */
bool hlo_opcode_only_remaps_indices(hlo_opcode_t op);
/* The result is the operands' bytes renamed (the alias column). */
bool hlo_opcode_aliases_operand(hlo_opcode_t op);
/* Codegen emits a kernel for the op or must refuse it (emitter not NONE). */
bool hlo_opcode_needs_kernel(hlo_opcode_t op);

/* --------------------------------------------------------- attributes */

typedef struct hlo_dims {
  int64_t *data;
  int count;
} hlo_dims_t;

/* Whether |dims| holds |value| (O(count)). */
bool hlo_dims_contains(hlo_dims_t dims, int64_t value);
/* dot_general's result dimensions (spec 'dot_general', C13) into |dims|
 * (HLO_MAX_RANK): the lhs batching dimensions' sizes in list order, then
 * the lhs free dimensions, then the rhs free dimensions except those in
 * |rhs_skip| (chlo.ragged_dot's group dimension; may be empty); returns
 * the rank (at most HLO_MAX_RANK; operands past it are not listed). */
int hlo_dot_result_dimensions(const hlo_shape_t *lhs, const hlo_shape_t *rhs, hlo_dims_t lhs_batching,
                              hlo_dims_t lhs_contracting, hlo_dims_t rhs_batching, hlo_dims_t rhs_contracting,
                              hlo_dims_t rhs_skip, int64_t *dims);

typedef struct hlo_location {
  const char *file; /* owned by the module's arena */
  int line, col;    /* 1-based; 0 when unknown */
} hlo_location_t;

typedef enum hlo_comparison_direction_e {
  HLO_CMP_EQ, HLO_CMP_NE, HLO_CMP_GE, HLO_CMP_GT, HLO_CMP_LE, HLO_CMP_LT
} hlo_comparison_direction_t;

typedef enum hlo_compare_type_e {
  HLO_CMP_TYPE_NOTYPE, /* unspecified: derived from the element type */
  HLO_CMP_TYPE_FLOAT,
  HLO_CMP_TYPE_TOTALORDER,
  HLO_CMP_TYPE_SIGNED,
  HLO_CMP_TYPE_UNSIGNED
} hlo_compare_type_t;

/* XLA's fusion kinds (see codegen/fusion.c). */
typedef enum hlo_fusion_kind_e {
  HLO_FUSION_LOOP,   /* elementwise/index ops in one loop over the output */
  HLO_FUSION_INPUT,  /* producers fused into a reduction's input */
  HLO_FUSION_OUTPUT, /* consumers fused as the epilogue of dot_general/convolution */
} hlo_fusion_kind_t;

typedef enum hlo_check_kind_e {
  HLO_CHECK_EXPECT_EQ,        /* exact equality (check.expect_eq, expect_eq_const) */
  HLO_CHECK_EXPECT_ALMOST_EQ, /* |a-e| <= tolerance (default 1e-4 relative+absolute) */
  HLO_CHECK_EXPECT_CLOSE,     /* within max_ulp_difference ULPs */
  HLO_CHECK_PRINT             /* interpreter.print: the value as text; always passes */
} hlo_check_kind_t;

/* "expect_eq", "expect_almost_eq", "expect_close", "print" (static).
 * Inline: the runtime-only library (api/check.c) names check results too
 * and links no hlo/ code. */
static inline const char *hlo_check_kind_name(hlo_check_kind_t kind) {
  switch (kind) {
    case HLO_CHECK_EXPECT_ALMOST_EQ: return "expect_almost_eq";
    case HLO_CHECK_EXPECT_CLOSE: return "expect_close";
    case HLO_CHECK_PRINT: return "print";
    default: return "expect_eq";
  }
}

/* Attributes of all ops, one struct: each op reads the fields named for it.
 * Field names are the StableHLO spec's attribute names. */
typedef struct hlo_attrs {
  /* broadcast_in_dim */
  hlo_dims_t broadcast_dimensions;
  /* transpose */
  hlo_dims_t permutation;
  /* reverse, reduce, map, broadcast(broadcast_sizes), all_gather...: "dimensions" */
  hlo_dims_t dimensions;
  /* iota: iota_dimension; concatenate, sort, all_gather: dimension;
   * get_tuple_element: index */
  int64_t dimension;
  int64_t index;
  /* slice */
  hlo_dims_t start_indices, limit_indices, strides;
  /* pad */
  hlo_dims_t edge_padding_low, edge_padding_high, interior_padding;
  /* dynamic_slice, gather */
  hlo_dims_t slice_sizes;
  /* compare */
  hlo_comparison_direction_t comparison_direction;
  hlo_compare_type_t compare_type;
  /* gather */
  hlo_dims_t offset_dims, collapsed_slice_dims, operand_batching_dims,
      start_indices_batching_dims, start_index_map;
  int64_t index_vector_dim; /* gather and scatter */
  bool indices_are_sorted, unique_indices;
  /* scatter */
  hlo_dims_t update_window_dims, inserted_window_dims, input_batching_dims,
      scatter_indices_batching_dims, scatter_dims_to_operand_dims;
  /* dot_general */
  hlo_dims_t lhs_batching_dimensions, rhs_batching_dimensions,
      lhs_contracting_dimensions, rhs_contracting_dimensions;
  /* chlo.ragged_dot (with dot_general's four lists above) */
  hlo_dims_t lhs_ragged_dimensions, rhs_group_dimensions;
  /* convolution (padding shared with reduce_window / select_and_scatter:
   * |padding| holds 2*N values, low then high for each spatial dim) */
  hlo_dims_t window_strides, padding, lhs_dilation, rhs_dilation, window_reversal;
  int64_t input_batch_dimension, input_feature_dimension;
  hlo_dims_t input_spatial_dimensions;
  int64_t kernel_input_feature_dimension, kernel_output_feature_dimension;
  hlo_dims_t kernel_spatial_dimensions;
  int64_t output_batch_dimension, output_feature_dimension;
  hlo_dims_t output_spatial_dimensions;
  int64_t feature_group_count, batch_group_count; /* default 1 */
  /* reduce_window, select_and_scatter */
  hlo_dims_t window_dimensions, base_dilations, window_dilations;
  /* sort */
  bool is_stable;
  /* sort_runs (internal, with sort's dimension and comparator): the
   * operands are sorted in runs of |run_length| along the dimension, the
   * results in runs of |merged_run_length| (a multiple of it, or the
   * dimension's size); with k > 0 (below) each merged run keeps only its
   * first k; see codegen/emit_sort.c */
  int64_t run_length, merged_run_length;
  /* custom_call, composite (name) */
  const char *call_target_name;
  const char *backend_config;
  const char *error_message; /* custom_call @shape_assertion (parser only) */
  bool has_side_effect;
  /* check ops */
  hlo_check_kind_t check_kind;
  double tolerance;            /* expect_almost_eq; 0 = default */
  int64_t max_ulp_difference;  /* expect_close */
  int64_t min_ulp_difference;
  /* fft */
  int fft_type; /* 0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT */
  hlo_dims_t fft_length;
  /* rng_bit_generator: 0 DEFAULT, 1 THREE_FRY, 2 PHILOX; rng: 0 UNIFORM, 1 NORMAL */
  int rng_algorithm;
  int rng_distribution;
  /* reduce_precision */
  int exponent_bits, mantissa_bits;
  /* triangular_solve, cholesky */
  bool left_side, lower, unit_diagonal;
  int transpose_a; /* 0 NO_TRANSPOSE, 1 TRANSPOSE, 2 ADJOINT */
  /* batch_norm_* */
  double epsilon;
  int64_t feature_index;
  /* chlo.top_k; sort_runs: how many of each merged run are kept (0: all) */
  int64_t k;
  /* chlo.scan (with |dimension|): how many operands are inputs (the rest
   * are the carries' initial values), and whether it runs from the end */
  int64_t scan_inputs;
  bool is_reverse;
  /* collectives: replica_groups as rows x cols */
  hlo_dims_t replica_groups;
  int64_t replica_groups_cols;
  int64_t channel_id;
  /* fusion */
  hlo_fusion_kind_t fusion_kind;
  /* Appended by the parser (all_to_all, collective_permute): */
  int64_t split_dimension, concat_dimension, split_count;
  hlo_dims_t source_target_pairs; /* flattened (source, target) pairs */
  bool use_global_device_ids; /* all_gather, all_reduce, reduce_scatter */
  bool has_dynamic_root;      /* collective_broadcast/_reduce: the last operand gives each result's root */
  /* A collective linked across the processes of interpreter.run_parallel
   * (hlo/run_parallel.c): its operands are those of every member of its
   * process group, member by member in the group's order (group_size
   * times the op's own operand count; collective_broadcast with a dynamic
   * root: then this process's root), and group_index is this process's
   * place in the group.  group_size 0: the op of a single process. */
  int64_t group_size, group_index;
  /* while: the number of times its body runs, where the program fixes it,
   * and the loop value that counts, its start and step (hlo_trip_count_t;
   * set by codegen's trip_count pass) */
  bool has_known_trip_count;
  int64_t known_trip_count, trip_counter;
  uint64_t trip_init, trip_step;
} hlo_attrs_t;

/* chlo.ragged_dot's group_sizes of rank > 1 is [prefix..., g]: the lhs
 * dimensions whose sizes make the prefix, into |dims| (HLO_MAX_RANK), for
 * the attributes |a| of a ragged_dot whose one lhs ragged dimension is in
 * range; returns their count.  They are the lhs batching dimensions in list
 * order (those before the ragged one, when it is a batching dimension),
 * then, when it is a non-contracting dimension, the lhs non-contracting
 * dimensions before it, when a contracting one, the contracting
 * dimensions listed before it (CHLO's verifier). */
int hlo_ragged_dot_prefix_dimensions(const hlo_attrs_t *a, int lhs_rank, int64_t *dims);

/* -------------------------------------------------------- the IR nodes */

typedef struct hlo_computation hlo_computation_t;

typedef struct hlo_instruction {
  hlo_opcode_t opcode;
  int id;           /* unique within the module */
  const char *name; /* e.g. "add.3" (arena-owned) */
  hlo_shape_t shape;
  int operand_count;
  struct hlo_instruction **operands;
  /* reduce: {body}; sort: {comparator}; while: {cond, body};
   * if: {true_branch, false_branch}; case: branches; scatter: {update};
   * select_and_scatter: {select, scatter}; map, reduce_window, all_reduce: {body};
   * composite: {decomposition}; custom_call: called_computations. */
  int called_count;
  hlo_computation_t **called_computations;
  /* parameter: its number */
  int parameter_number;
  /* constant */
  hlo_literal_t *literal;
  hlo_attrs_t attrs;
  hlo_location_t loc;
  /* Users: filled by hlo_compute_users (not kept up to date by passes). */
  int user_count;
  struct hlo_instruction **users;
  void *scratch; /* free for the current pass to use */
} hlo_instruction_t;

struct hlo_computation {
  const char *name;
  int parameter_count;
  hlo_instruction_t **parameters;
  int instruction_count;
  int instruction_capacity;
  hlo_instruction_t **instructions; /* def-before-use order */
  hlo_instruction_t *root;
  hlo_location_t loc;
};

typedef struct hlo_module {
  arena_t arena;
  const char *name;
  const char *source_file; /* for messages */
  int computation_count;
  int computation_capacity;
  hlo_computation_t **computations; /* callees before callers */
  hlo_computation_t *entry_computation;
  int next_instruction_id;
} hlo_module_t;

/* Whether |instr| does something besides computing its result, so that it
 * may be neither removed when unused, nor merged with an equal one, nor
 * reordered against another such instruction: hlo_opcode_has_side_effect,
 * custom_call with has_side_effect, and any op (while, if, case, call,
 * fusion...) calling a computation that contains one, at any depth. */
bool hlo_instruction_has_side_effect(const hlo_instruction_t *instr);
bool hlo_computation_has_side_effect(const hlo_computation_t *c);

/* The process ids of a collective that no process grid can run: in
 * replica_groups an id below -1 (-1 pads a ragged group), an id twice, or
 * a row length that does not divide the list; in a collective_permute's
 * source_target_pairs an odd count, a negative id, a source or a target
 * twice (spec "all_gather" (C2), "collective_permute" (C1)-(C3) and
 * alike).  Returns what is wrong ("id 3 appears twice in replica_groups")
 * in |buf|, or NULL when nothing is. */
const char *hlo_collective_ids_problem(const hlo_instruction_t *instr, char *buf, size_t size);

/* collective_broadcast or collective_reduce whose last operand gives each
 * result's root (has_dynamic_root). */
static inline bool hlo_collective_has_dynamic_root(const hlo_instruction_t *instr) {
  return (instr->opcode == HLO_OPCODE_COLLECTIVE_BROADCAST || instr->opcode == HLO_OPCODE_COLLECTIVE_REDUCE) &&
         instr->attrs.has_dynamic_root;
}

/* ------------------------------------------------------- construction */

/* Creates an empty module whose arena (and every host block of the passes
 * that work on it) comes from |allocator| (NULL = libc; kept by pointer).
 * Returns NULL on out-of-memory. */
hlo_module_t *hlo_module_create(const char *name, const vkhlo_allocator_t *allocator);
void hlo_module_destroy(hlo_module_t *module);

hlo_computation_t *hlo_computation_create(hlo_module_t *m, const char *name);
/* Appends |c| to m->computations (callees must be added first). */
bool hlo_module_add_computation(hlo_module_t *m, hlo_computation_t *c);

/* Creates an instruction (not yet in any computation) with operands copied
 * into the arena.  NULL on out-of-memory. */
hlo_instruction_t *hlo_instruction_create(hlo_module_t *m, hlo_opcode_t op,
                                          const hlo_shape_t *shape, int operand_count,
                                          hlo_instruction_t *const *operands);
/* Appends to c->instructions (and to c->parameters for parameters). */
bool hlo_computation_append(hlo_module_t *m, hlo_computation_t *c, hlo_instruction_t *instr);
bool hlo_instruction_set_called(hlo_module_t *m, hlo_instruction_t *instr, int count,
                                hlo_computation_t *const *computations);
/* Copies |count| values into the arena as a hlo_dims_t. */
hlo_dims_t hlo_dims_make(hlo_module_t *m, const int64_t *values, int count);
/* A tuple shape whose elements are copies of |elements|. */
bool hlo_shape_make_tuple(hlo_module_t *m, hlo_shape_t *out, int count, const hlo_shape_t *elements);

/* Fills |users| of every instruction of |c|. */
bool hlo_compute_users(hlo_module_t *m, hlo_computation_t *c);
hlo_computation_t *hlo_module_find_computation(const hlo_module_t *m, const char *name);

/* --------------------------------------------------------- the passes */

/* Parses StableHLO text (pretty or generic form).  |file_name| is used in
 * messages.  Every func.func becomes a computation; the entry computation
 * is the function named |entry_name| ("main" when NULL; if the text has a
 * single public function, that one is used when no "main" exists).
 * func.call is inlined.  On error returns a status whose message starts
 * with "file:line:col: " and sets *out_module to NULL.
 * The module and the parser's scratch memory come from options->allocator.
 * options: fill_elided: 0 = error on dense_resource<__elided__>,
 *          1 = zeros, 2 = seeded random (|seed|). */
typedef struct hlo_parse_options {
  const char *entry_name;
  int fill_elided;
  uint64_t seed;
  const vkhlo_allocator_t *allocator; /* the module's and the parser's memory (NULL = libc) */
  /* The entry function's parameter shapes, for those whose declared type
   * is dynamic (tensor<?x4xf32>); ignored for static ones. */
  const hlo_shape_t *parameter_shapes;
  int parameter_shape_count;
} hlo_parse_options_t;
vkhlo_status_t hlo_parse(const char *text, size_t length, const char *file_name,
                         const hlo_parse_options_t *options, hlo_module_t **out_module);

/* Checks every op's constraints as the StableHLO spec states them. */
vkhlo_status_t hlo_verify(const hlo_module_t *module);
/* The spec's constraints of one instruction's op alone (hlo_verify checks
 * them for every instruction, after the module's structure): for a pass
 * that builds an op from values only it can read, such as the expand
 * pass's static forms of dynamic_* ops from their constant operands. */
vkhlo_status_t hlo_verify_instruction(const hlo_instruction_t *instr);

/* Prints the module in a StableHLO-like text form (for dumps and tests). */
char *hlo_module_to_string(const hlo_module_t *module); /* caller frees (vkhlo_free(module->arena.allocator, ...)) */

/* Inlining (hlo/inline.c).  Appends to |caller| a copy of every
 * instruction of |callee| except its parameters (parameter i is replaced by
 * |args|[i]) and, when |root_is_result_tuple| is set and the root is a tuple,
 * except that root tuple.  |out_results| receives what the callee returns:
 * the copy of its root, or (root_is_result_tuple) the copies of the root
 * tuple's operands, so it must hold max(1, root operand count) pointers.
 * Called computations are shared with the callee, not copied.  Uses the
 * callee instructions' |scratch|.  Returns false on out-of-memory. */
bool hlo_computation_inline(hlo_module_t *m, hlo_computation_t *caller,
                            const hlo_computation_t *callee, hlo_instruction_t *const *args,
                            bool root_is_result_tuple, hlo_instruction_t **out_results);
/* interpreter.run_parallel (hlo/run_parallel.c): the processes of a
 * num_replicas x num_partitions grid, process (r, p) running programs[r *
 * num_partitions + p] on its own arguments, appended to |caller| as one
 * program: each process's instructions are copied with replica_id and
 * partition_id as constants, its collectives (all_gather, all_reduce,
 * reduce_scatter, all_to_all, collective_permute, collective_broadcast,
 * send / recv) joined with those of the processes they communicate with
 * (spec "Parallel execution"), and infeed taking the results of the
 * infeed functions in order. */
typedef struct hlo_run_parallel {
  int num_replicas, num_partitions;
  hlo_computation_t *const *programs; /* num_replicas * num_partitions, replica-major */
  const int *result_counts;           /* each program's result count */
  hlo_instruction_t *const *args;     /* the processes' arguments, process after process */
  hlo_computation_t *const *infeed;   /* infeed functions (no arguments), in the order taken */
  const int *infeed_result_counts;
  int infeed_count;
  hlo_location_t loc; /* the run_parallel op, for messages */
} hlo_run_parallel_t;
/* Writes every process's results, process after process, to |results|.
 * Errors (input errors at the offending op): a collective no other process
 * matches (processes that wait for each other forever), process groups the
 * processes disagree on or that leave a process out, a process-dependent op
 * (replica_id, a collective, send / recv, infeed) inside a region, more
 * infeeds than infeed functions, out-of-memory.  The module keeps what was
 * appended until then (unreferenced: a failed parse drops the module). */
vkhlo_status_t hlo_run_parallel(hlo_module_t *m, hlo_computation_t *caller, const hlo_run_parallel_t *rp,
                                hlo_instruction_t **results);
/* The number of times while loop |w| runs its body when the program fixes
 * it (hlo/loops.c): a loop value counted by a constant step from a
 * constant to a constant bound, as JAX's fori_loop and scan make them.
 * False when it is not known (the count is never guessed). */
typedef struct hlo_trip_count {
  int64_t count;
  int counter;         /* the loop value that counts */
  uint64_t init, step; /* its start and step: raw bits of its element type
                          (the value after t steps is init + t * step,
                          wrapping) */
} hlo_trip_count_t;
bool hlo_while_trip_count(const hlo_instruction_t *w, hlo_trip_count_t *out);
/* A copy of |instr| (new id and name, same attributes, literal and called
 * computations) whose operands are |operands| (instr->operand_count of
 * them).  Not appended anywhere.  NULL on out-of-memory. */
hlo_instruction_t *hlo_instruction_clone(hlo_module_t *m, const hlo_instruction_t *instr,
                                         hlo_instruction_t *const *operands);

/* An input error at |loc|: "file:line:col: message". */
vkhlo_status_t hlo_error_at(hlo_location_t loc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same form with status |code| (e.g. UNIMPLEMENTED for an op or type
 * a backend cannot handle), from a va_list. */
vkhlo_status_t hlo_vstatus_at(vkhlo_status_code_t code, hlo_location_t loc, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* ------------------------------------------- rewriting (hlo/rewrite.c) */

/* Replaces every use of |old| in |c| (operands and root) by |replacement|,
 * which must have the same shape and be defined before the first use.
 * O(instructions).  Returns the number of uses replaced. */
int hlo_replace_all_uses(hlo_computation_t *c, hlo_instruction_t *old,
                         hlo_instruction_t *replacement);
void hlo_computation_set_root(hlo_computation_t *c, hlo_instruction_t *root);
/* Inserts |instr| into |c| just before |before| (appends when |before| is
 * NULL or not in |c|).  O(instructions).  False on out-of-memory. */
bool hlo_computation_insert_before(hlo_module_t *m, hlo_computation_t *c, hlo_instruction_t *instr,
                                   const hlo_instruction_t *before);
/* Removes the instructions of |c| that neither the root nor a side effect
 * needs (parameters are kept).  Uses and clears the instructions' |scratch|.
 * Returns the number removed. */
int hlo_computation_remove_dead(hlo_computation_t *c);
/* Drops from m->computations those no instruction reachable from the entry
 * computation calls; keeps the order.  Sets *out_removed. */
vkhlo_status_t hlo_module_remove_unreachable_computations(hlo_module_t *m, int *out_removed);
/* A constant instruction (not yet in any computation) of array |shape|
 * holding a copy of |data| (hlo_shape_size_bytes(shape) bytes, host
 * representation), or zeros when |data| is NULL.  NULL on out-of-memory. */
hlo_instruction_t *hlo_constant_create(hlo_module_t *m, const hlo_shape_t *shape, const void *data);

#endif
