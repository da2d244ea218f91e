/*
 * FNV-1a, 64 bits: the byte hash every layer uses for its tables (the
 * parser's scopes, CSE, kernel and pipeline lookups) and for the pipeline
 * cache file's check.  Not for anything an attacker chooses to collide.
 */
#ifndef VKHLO_SUPPORT_HASH_H
#define VKHLO_SUPPORT_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_BASIS 0xcbf29ce484222325ull

/* |h| (FNV1A_BASIS to start) continued over |n| bytes at |data|: hashing
 * two runs one after the other equals hashing them joined. */
static inline uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

#endif
