/*
 * Status values (see support/status.h).  A failed allocation of a status
 * itself returns a statically allocated, immutable out-of-memory status that
 * vkhlo_status_free() recognises and leaves alone.
 */
#include "support/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vkhlo_status_s {
  vkhlo_status_code_t code;
  char *message;
};

static struct vkhlo_status_s out_of_memory_status = {
    VKHLO_STATUS_RESOURCE_EXHAUSTED, (char *)"out of host memory (while reporting an error)"};

vkhlo_status_t vkhlo_status_makev(vkhlo_status_code_t code, const char *fmt, va_list ap) {
  struct vkhlo_status_s *s = malloc(sizeof *s);
  if (!s) return &out_of_memory_status;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  s->code = code;
  s->message = malloc((size_t)(n < 0 ? 0 : n) + 1);
  if (!s->message) {
    free(s);
    return &out_of_memory_status;
  }
  vsnprintf(s->message, (size_t)n + 1, fmt, ap);
  return s;
}

vkhlo_status_t vkhlo_status_make(vkhlo_status_code_t code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vkhlo_status_t s = vkhlo_status_makev(code, fmt, ap);
  va_end(ap);
  return s;
}

vkhlo_status_t vkhlo_status_annotate(vkhlo_status_t status, const char *fmt, ...) {
  if (!status || status == &out_of_memory_status) return status;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return status;
  size_t old = strlen(status->message);
  char *msg = malloc((size_t)n + 2 + old + 1);
  if (!msg) return status;
  va_start(ap, fmt);
  vsnprintf(msg, (size_t)n + 1, fmt, ap);
  va_end(ap);
  memcpy(msg + n, ": ", 2);
  memcpy(msg + n + 2, status->message, old + 1);
  free(status->message);
  status->message = msg;
  return status;
}

vkhlo_status_code_t vkhlo_status_code(vkhlo_status_t status) {
  return status ? status->code : VKHLO_STATUS_OK;
}

const char *vkhlo_status_message(vkhlo_status_t status) {
  return status ? status->message : "";
}

const char *vkhlo_status_code_name(vkhlo_status_code_t code) {
  switch (code) {
    case VKHLO_STATUS_OK: return "OK";
    case VKHLO_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case VKHLO_STATUS_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case VKHLO_STATUS_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case VKHLO_STATUS_UNAVAILABLE: return "UNAVAILABLE";
    case VKHLO_STATUS_NOT_FOUND: return "NOT_FOUND";
    case VKHLO_STATUS_INTERNAL: return "INTERNAL";
    case VKHLO_STATUS_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case VKHLO_STATUS_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
  }
  return "UNKNOWN";
}

void vkhlo_status_free(vkhlo_status_t status) {
  if (!status || status == &out_of_memory_status) return;
  free(status->message);
  free(status);
}
