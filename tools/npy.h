/*
 * Reading and writing NumPy .npy files (format version 1.0/2.0, little-
 * endian, C order) for the CLI.  dtypes map to element types: b1 -> i1,
 * i1/i2/i4/i8, u1/u2/u4/u8, f2, f4, f8, c8, c16.
 */
#ifndef VKHLO_TOOLS_NPY_H
#define VKHLO_TOOLS_NPY_H

#include "vkhlo/vkhlo.h"

/* Reads |path|; *out_data is malloc'ed (caller frees).  With |out_data|
 * NULL, only the header: the type. */
vkhlo_status_t npy_read(const char *path, vkhlo_tensor_type_t *out_type, void **out_data);
vkhlo_status_t npy_write(const char *path, const vkhlo_tensor_type_t *type, const void *data);

#endif
