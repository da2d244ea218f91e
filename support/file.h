/*
 * Files the library writes whole (caches, tuning choices, saved
 * executables): written to a temporary file beside the destination, then
 * renamed over it, so that a reader or a crash never sees half a file.
 */
#ifndef VKHLO_SUPPORT_FILE_H
#define VKHLO_SUPPORT_FILE_H

#include <stddef.h>

#include "support/alloc.h"
#include "vkhlo/status.h"

/* Replaces |path| by |size| bytes of |data| through PATH.tmp.PID.
 * Errors: NOT_FOUND "cannot write PATH: <strerror>" (the temporary file is
 * removed); RESOURCE_EXHAUSTED. */
vkhlo_status_t support_write_file(const vkhlo_allocator_t *allocator, const char *path, const void *data,
                                  size_t size);

#endif
