/*
 * vkhlo/status.h — error values returned by every vkhlo call.
 *
 * vkhlo_status_t is NULL on success.  On failure it points to an object
 * owned by the caller, which must release it with vkhlo_status_free().
 * Input errors (malformed program text, wrong types) carry a message that
 * begins with "FILE:LINE:COL: ".
 */
#ifndef VKHLO_STATUS_H
#define VKHLO_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vkhlo_status_code_e {
  VKHLO_STATUS_OK = 0,
  /* The program or an argument is malformed or ill-typed. */
  VKHLO_STATUS_INVALID_ARGUMENT = 1,
  /* Valid input that this build or this device does not support
   * (an op, an element type, a device feature). */
  VKHLO_STATUS_UNIMPLEMENTED = 2,
  /* Host or device memory exhausted. */
  VKHLO_STATUS_RESOURCE_EXHAUSTED = 3,
  /* No usable device, or the device was lost. */
  VKHLO_STATUS_UNAVAILABLE = 4,
  /* A file could not be read or written. */
  VKHLO_STATUS_NOT_FOUND = 5,
  /* A bug in vkhlo. */
  VKHLO_STATUS_INTERNAL = 6,
  /* A check in the program (check.expect_*) failed. */
  VKHLO_STATUS_FAILED_PRECONDITION = 7,
  /* An execution ran out of time (while loop guard). */
  VKHLO_STATUS_DEADLINE_EXCEEDED = 8,
} vkhlo_status_code_t;

typedef struct vkhlo_status_s *vkhlo_status_t;

/* Code of |status|; VKHLO_STATUS_OK for NULL. */
vkhlo_status_code_t vkhlo_status_code(vkhlo_status_t status);
/* Message of |status| ("" for NULL).  Valid until the status is freed. */
const char *vkhlo_status_message(vkhlo_status_t status);
/* Short name of a code, e.g. "INVALID_ARGUMENT". */
const char *vkhlo_status_code_name(vkhlo_status_code_t code);
/* Makes a status with a printf-style message (for tools and embedders that
 * report errors the same way).  Never returns NULL for a non-OK code. */
vkhlo_status_t vkhlo_status_make(vkhlo_status_code_t code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Frees |status|; NULL is fine. */
void vkhlo_status_free(vkhlo_status_t status);

#ifdef __cplusplus
}
#endif
#endif
