/*
 * i64/ui64 on devices without shaderInt64: the elemental emitter's hooks
 * for values held as uvec2(low word, high word) (see glsl_types.h,
 * "Emulated forms", and the i64_/u64_ helpers in glsl_prelude.c).
 *
 * elemental.c calls these where an operand or result type is emulated
 * (glsl_type_is_emulated64); they emit the same XLA semantics as the
 * native int64_t code, one helper call per operation.
 */
#ifndef VKHLO_CODEGEN_EMULATE64_H
#define VKHLO_CODEGEN_EMULATE64_H

#include "codegen/elemental.h"

/* True when an operand or the result of elementwise |instr| is an emulated
 * 64-bit integer on E->target. */
bool emu64_involved(const elemental_emitter_t *E, const hlo_instruction_t *instr);

/* The elementwise op |instr| on operand values |v| (already loaded). */
vkhlo_status_t emu64_elementwise(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                 const el_name_t *v, el_name_t *out);

/* convert from |from| to |to| where at least one side is emulated. */
void emu64_convert(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t from,
                   hlo_element_type_t to, const char *v, el_name_t *out);

/* An int index local = |v| (of emulated type |t|) clamped to [lo, hi]. */
void emu64_index(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                 const char *v, int lo, long long hi, el_name_t *out);

/* acc = acc + a * b for an emulated accumulator. */
void emu64_mac(elemental_emitter_t *E, const hlo_instruction_t *instr, const char *acc,
               const char *a, const char *b);

/* bitcast_convert between a 64-bit type held as uvec2 bits (emulated
 * integers, demoted or native f64) and a narrower type (result has one
 * more dimension, or the operand does). */
vkhlo_status_t emu64_bitcast_convert(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                     const el_name_t *index, el_name_t *out);

/* True when bitcast_convert |instr| needs emu64_bitcast_convert. */
bool emu64_bitcast_involved(const elemental_emitter_t *E, const hlo_instruction_t *instr);

#endif
