/*
 * StableHLO portable artifacts: MLIR bytecode of the VHLO dialect, the form
 * stablehlo.serialize_portable_artifact, `stablehlo-translate --serialize`
 * and jax.export write (the StableHLO compatibility guarantees are made for
 * it).  hlo_parse reads such a file by turning it into StableHLO text first
 * (hlo_bytecode_to_text), so every later stage sees one input form.
 *
 * Read: MLIR bytecode versions 0-6 (string, dialect, attribute/type, IR and
 * properties sections; isolated regions as nested sections; use-list orders
 * skipped), every VHLO op (0.9.0 to 1.x, each op version's attributes from
 * its attribute dictionary or, from VHLO 0.15.0, its properties), VHLO
 * types and attributes, the builtin attributes and types an op's attribute
 * dictionary and casts are made of, and the Shardy ops JAX's artifacts
 * carry.  Not read: other dialects' ops (bytecode of the `stablehlo`
 * dialect itself, written without serializing, is refused with a message
 * saying so), resources, multi-block regions.
 */
#ifndef VKHLO_HLO_BYTECODE_H
#define VKHLO_HLO_BYTECODE_H

#include <stdbool.h>
#include <stddef.h>

#include "support/alloc.h"
#include "support/status.h"

/* True when |data| starts with the MLIR bytecode magic number "ML\xEFR". */
bool hlo_is_bytecode(const void *data, size_t size);

/* Where the portable artifact in |data| is: all of it when it starts with
 * the magic number, or the one a FlatBuffers file holds as a byte vector
 * (jax.export's Exported.serialize(): its mlir_module_serialized).  False
 * when there is none. */
bool hlo_find_bytecode(const void *data, size_t size, size_t *offset, size_t *length);

/* The StableHLO text (generic op form, a `module { func.func ... }`) of the
 * portable artifact |data|.  On success *out_text is a NUL-terminated heap
 * string from |allocator| (NULL = libc; the caller frees it with
 * vkhlo_free) and *out_length its length.  Malformed or unsupported input
 * gives INVALID_ARGUMENT / UNIMPLEMENTED with "file: bytecode offset N: ..."
 * and *out_text NULL. */
vkhlo_status_t hlo_bytecode_to_text(const void *data, size_t size, const char *file_name,
                                    const vkhlo_allocator_t *allocator, char **out_text, size_t *out_length);

#endif
