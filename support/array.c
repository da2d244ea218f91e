/* Growable int arrays (see support/array.h). */
#include "support/array.h"

#include <stdlib.h>

bool array_reserve(const vkhlo_allocator_t *allocator, void **array, int *capacity, int needed, size_t item_size) {
  if (needed <= *capacity) return true;
  int cap = *capacity ? *capacity : 8;
  while (cap < needed) cap *= 2;
  void *p = vkhlo_realloc(allocator, *array, item_size * (size_t)cap);
  if (!p) return false;
  *array = p;
  *capacity = cap;
  return true;
}

bool int_array_push(const vkhlo_allocator_t *allocator, int **array, int *count, int *capacity, int value) {
  void *p = *array;
  if (!array_reserve(allocator, &p, capacity, *count + 1, sizeof **array)) return false;
  *array = p;
  (*array)[(*count)++] = value;
  return true;
}

bool int_array_push_unique(const vkhlo_allocator_t *allocator, int **array, int *count, int *capacity, int value) {
  for (int i = 0; i < *count; i++)
    if ((*array)[i] == value) return true;
  return int_array_push(allocator, array, count, capacity, value);
}
