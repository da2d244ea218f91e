/* Growable int arrays (see support/array.h). */
#include "support/array.h"

#include <stdlib.h>

bool int_array_push(const vkhlo_allocator_t *allocator, int **array, int *count, int *capacity, int value) {
  if (*count == *capacity) {
    int cap = *capacity ? *capacity * 2 : 8;
    int *p = vkhlo_realloc(allocator, *array, sizeof *p * (size_t)cap);
    if (!p) return false;
    *array = p;
    *capacity = cap;
  }
  (*array)[(*count)++] = value;
  return true;
}

bool int_array_push_unique(const vkhlo_allocator_t *allocator, int **array, int *count, int *capacity, int value) {
  for (int i = 0; i < *count; i++)
    if ((*array)[i] == value) return true;
  return int_array_push(allocator, array, count, capacity, value);
}
