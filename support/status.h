/*
 * Status values: how every layer of vkhlo reports failure.
 *
 * A status is a pointer: NULL means OK, anything else is a heap-allocated
 * vkhlo_status_s carrying a code and a message (which, for input errors,
 * starts with "file:line:col: ").  The function that receives a non-NULL
 * status owns it and must either return it further up or free it with
 * vkhlo_status_free().  Nothing in the library aborts or exits on bad input.
 */
#ifndef VKHLO_SUPPORT_STATUS_H
#define VKHLO_SUPPORT_STATUS_H

#include "vkhlo/status.h"

#include <stdarg.h>

/* vkhlo_status_make (the public vkhlo/status.h) makes a status with a
 * printf-style message; this is its va_list form.  Neither returns NULL
 * for a non-OK code (they fall back to a static out-of-memory status). */
vkhlo_status_t vkhlo_status_makev(vkhlo_status_code_t code, const char *fmt, va_list ap);

/* Prepends "prefix: " (printf-style) to the message of |status|, returns it. */
vkhlo_status_t vkhlo_status_annotate(vkhlo_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define VKHLO_RETURN_IF_ERROR(expr)                                            \
  do {                                                                         \
    vkhlo_status_t status_ = (expr);                                           \
    if (status_) return status_;                                               \
  } while (0)

#define VKHLO_INVALID(...) vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define VKHLO_UNIMPLEMENTED(...) vkhlo_status_make(VKHLO_STATUS_UNIMPLEMENTED, __VA_ARGS__)
#define VKHLO_INTERNAL(...) vkhlo_status_make(VKHLO_STATUS_INTERNAL, __VA_ARGS__)
#define VKHLO_NO_MEMORY() vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of host memory")

#endif
