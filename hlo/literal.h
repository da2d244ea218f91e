/*
 * Element-value helpers shared by the parser, codegen and the CLI.
 *
 * Host representation (element_types.def): f16, bf16 and the f8/f6/f4
 * types are stored as their raw bit patterns (in the low bits of one or two
 * bytes).  These helpers convert between a double and those bit patterns,
 * rounding to nearest, ties to even, exactly as MLIR's APFloat does when it
 * parses a decimal literal:
 *
 *   uint64_t bits;
 *   hlo_float_encode(HLO_BF16, 1.0 / 3.0, &bits);   // bits == 0x3EAB
 *   double back = hlo_float_decode(HLO_BF16, bits);  // 0.333984375
 *
 * Values too large for a type become infinity where the type has one, NaN
 * where it has NaN but no infinity (the ...FN and ...FNUZ f8 types), and the
 * largest finite value for types with neither (f4E2M1FN, f6E2M3FN,
 * f6E3M2FN).
 *
 * Also here: splitmix64, the small deterministic generator the parser uses
 * to fill elided constants and the CLI uses for random inputs.
 */
#ifndef VKHLO_HLO_LITERAL_H
#define VKHLO_HLO_LITERAL_H

#include <stdbool.h>
#include <stdint.h>

#include "hlo/hlo.h"

/* Encodes |value| as the bit pattern of float type |t| (any float type,
 * f32 and f64 included).  Returns false if |t| is not a float type. */
bool hlo_float_encode(hlo_element_type_t t, double value, uint64_t *out_bits);

/* Decodes a bit pattern of float type |t| (low bits of |bits|) to a double.
 * Returns NaN for non-float types. */
double hlo_float_decode(hlo_element_type_t t, uint64_t bits);

/* Shorthands for the two common 16-bit types. */
uint16_t hlo_float_to_f16_bits(double value);
uint16_t hlo_float_to_bf16_bits(double value);
double hlo_f16_bits_to_double(uint16_t bits);
double hlo_bf16_bits_to_double(uint16_t bits);

/* True when |in| is a constant whose elements all equal the first (a
 * scalar, or a splat such as dense<1.5> : tensor<1024xf32>). */
bool hlo_constant_is_splat(const hlo_instruction_t *in);

/* splitmix64: advances |*state| and returns the next 64 random bits. */
uint64_t hlo_splitmix64(uint64_t *state);

/* Fills |count| elements of type |t| at |dst| (host representation) with
 * deterministic pseudo-random values from |*state|: floats uniform in
 * [-1, 1), complex parts likewise, signed ints in [-3, 3], unsigned ints in
 * [0, 3], i1 in {0, 1}.  Tokens and tuples are left alone. */
void hlo_fill_random(hlo_element_type_t t, void *dst, int64_t count, uint64_t *state);

#endif
