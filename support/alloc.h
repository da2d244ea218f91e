/*
 * Host allocation through an optional vkhlo_allocator_t (the public
 * vkhlo/allocator.h).  Every layer (hlo/, codegen/, api/, vk_runtime/)
 * allocates through these helpers with the allocator of the object that
 * owns the memory (module arena, compiler, executable, device); a NULL
 * allocator means the C library.  Memory from vkhlo_malloc(a, ...) must be
 * released with vkhlo_free(a, ...) with the same |a|.  Sizes of 0 are
 * rounded up to 1, so a NULL result always means out of memory.
 * Status values are the exception: they always use malloc/free.
 */
#ifndef VKHLO_SUPPORT_ALLOC_H
#define VKHLO_SUPPORT_ALLOC_H

#include "vkhlo/allocator.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline void *vkhlo_malloc(const vkhlo_allocator_t *a, size_t size_bytes) {
  if (size_bytes == 0) size_bytes = 1;
  return a ? a->malloc(a->user, size_bytes) : malloc(size_bytes);
}

/* Zeroed |count| * |size_bytes|; NULL also when the product overflows. */
static inline void *vkhlo_calloc(const vkhlo_allocator_t *a, size_t count, size_t size_bytes) {
  if (size_bytes && count > SIZE_MAX / size_bytes) return NULL;
  size_t n = count * size_bytes;
  void *p = vkhlo_malloc(a, n);
  if (p && n) memset(p, 0, n);
  return p;
}

/* As C's realloc: NULL |ptr| allocates; on failure |ptr| stays valid. */
static inline void *vkhlo_realloc(const vkhlo_allocator_t *a, void *ptr, size_t size_bytes) {
  if (!ptr) return vkhlo_malloc(a, size_bytes);
  if (size_bytes == 0) size_bytes = 1;
  return a ? a->realloc(a->user, ptr, size_bytes) : realloc(ptr, size_bytes);
}

static inline void vkhlo_free(const vkhlo_allocator_t *a, void *ptr) {
  if (!ptr) return;
  if (a)
    a->free(a->user, ptr);
  else
    free(ptr);
}

/* Copy of the NUL-terminated |s|; NULL on out-of-memory. */
static inline char *vkhlo_strdup(const vkhlo_allocator_t *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = vkhlo_malloc(a, n);
  if (p) memcpy(p, s, n);
  return p;
}

#endif
