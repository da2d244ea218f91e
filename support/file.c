/* Whole-file writes through a temporary file and rename (support/file.h). */
#define _POSIX_C_SOURCE 200809L
#include "support/file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "support/status.h"

vkhlo_status_t support_write_file(const vkhlo_allocator_t *allocator, const char *path, const void *data,
                                  size_t size) {
  size_t n = strlen(path) + 32;
  char *tmp = vkhlo_malloc(allocator, n);
  if (!tmp) return VKHLO_NO_MEMORY();
  snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(size ? data : "", 1, size, f) == size;
  if (f && fclose(f) != 0) ok = false;
  vkhlo_status_t st = NULL;
  if (!ok || rename(tmp, path) != 0) {
    st = vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot write %s: %s", path, strerror(errno));
    remove(tmp);
  }
  vkhlo_free(allocator, tmp);
  return st;
}
