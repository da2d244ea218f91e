/*
 * Shape refinement: the parser's side of programs with dynamic shapes.
 *
 * jax.export with symbolic dimensions (and torch.export with dynamic ones)
 * writes StableHLO whose types leave dimensions open (`tensor<?x4xf32>`)
 * and whose shapes are computed by the program itself: get_dimension_size
 * of a parameter, integer arithmetic on it, then dynamic_broadcast_in_dim,
 * dynamic_reshape, dynamic_iota, real_dynamic_slice and the like.  vkhlo
 * compiles such a program for the parameters' actual types (the
 * compile options' parameter_types), as stablehlo's refine-shapes pass
 * would: the parser, reading ops in order, knows every operand's static
 * shape, so
 *
 *   - hlo_refine_record keeps the value of each small integer tensor it can
 *     evaluate (constants, get_dimension_size, convert, reshape, broadcast,
 *     concatenate, slice, elementwise integer arithmetic, compare, select);
 *   - hlo_refine_shape gives an instruction whose declared type is dynamic
 *     the static shape the spec's shape rules give it from its operands'
 *     shapes, its attributes and the recorded values of its shape operands
 *     (output_dimensions, edge_padding_*, slice_sizes, ...).
 *
 * Nothing after the parser sees a dynamic dimension.  The parser owns one
 * hlo_refine_t; its memory comes from |arena| (the parser's scratch).
 */
#ifndef VKHLO_HLO_REFINE_H
#define VKHLO_HLO_REFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/hlo.h"

/* Values of at most this many elements are recorded (shape operands hold
 * one element per dimension, or two for a convolution's padding). */
#define HLO_REFINE_MAX_VALUES (2 * HLO_MAX_RANK)

typedef struct hlo_refine {
  arena_t *arena;
  int64_t **values; /* by instruction id: the elements, row-major, or NULL */
  int cap;
} hlo_refine_t;

/* Records the value of |in| when it is an integer or i1 tensor of at most
 * HLO_REFINE_MAX_VALUES elements whose value follows from constants and
 * static shapes.  Elements are held as int64 (unsigned types zero-extended,
 * i1 as 0 / 1).  Returns false only when out of memory. */
bool hlo_refine_record(hlo_refine_t *r, const hlo_instruction_t *in);

/* Gives |to| the recorded value of |from| (of the same type), if any: a
 * callee's parameter the value of its call's operand.  False only when out
 * of memory. */
bool hlo_refine_copy(hlo_refine_t *r, const hlo_instruction_t *to, const hlo_instruction_t *from);

/* The recorded elements of |in| (count: its element count), or NULL. */
const int64_t *hlo_refine_value(const hlo_refine_t *r, const hlo_instruction_t *in);

/* Replaces the dynamic dimensions of in->shape (declared by the program)
 * with the sizes the spec's shape rules give them; static dimensions are
 * checked against the inferred ones.  On failure writes a message (no
 * location) into |msg| and returns false. */
bool hlo_refine_shape(const hlo_refine_t *r, hlo_instruction_t *in, char *msg, size_t msg_size);

/* True when |actual| (static) fits |declared| (dynamic dimensions match any
 * size); tuples element by element. */
bool hlo_refine_fits(const hlo_shape_t *actual, const hlo_shape_t *declared);

#endif
