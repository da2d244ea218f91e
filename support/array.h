/*
 * Growable int arrays and size rounding, shared by every layer (the
 * scheduler, buffer assignment, lowering, fusion).  The array is the
 * usual triple {array, count, capacity} kept by the caller; it starts as
 * {NULL, 0, 0} and the caller frees |array| with vkhlo_free(allocator, ...)
 * (the allocator it was pushed with).
 */
#ifndef VKHLO_SUPPORT_ARRAY_H
#define VKHLO_SUPPORT_ARRAY_H

#include <stdbool.h>
#include <stdint.h>

#include "support/alloc.h"

/* Makes room for |needed| items of |item_size| bytes in *array (any item
 * type; *capacity counted in items), doubling from 8.  False on
 * out-of-memory, leaving the array as it was. */
bool array_reserve(const vkhlo_allocator_t *allocator, void **array, int *capacity, int needed, size_t item_size);

/* Appends |value| to *array, growing it (doubling) when *count ==
 * *capacity.  False on out-of-memory, leaving the array as it was. */
bool int_array_push(const vkhlo_allocator_t *allocator, int **array, int *count, int *capacity, int value);

/* Appends |value| unless *array already holds it (O(count)). */
bool int_array_push_unique(const vkhlo_allocator_t *allocator, int **array, int *count, int *capacity, int value);

/* |value| rounded up to a multiple of |alignment| (> 0; any, not only
 * powers of two). */
static inline uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

#endif
