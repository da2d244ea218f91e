/*
 * vkhlo/allocator.h — the host allocator a context routes its memory through.
 *
 * vkhlo_context_options_t.host_allocator (NULL = the C library's malloc,
 * realloc and free) is used for every host allocation vkhlo makes for that
 * context and for everything created from it: the parsed module and its
 * arena, the compiler's passes and GLSL emitters, lowering, scheduling,
 * buffer assignment, the executable, the executor's per-run tables, the
 * context and its buffer pool, and the host-side structs of the Vulkan
 * runtime (device, command recorder, pipelines, buffers).  It lets tests
 * fail the N-th allocation and embedders route or account memory.
 *
 * Not covered (these stay on the C library or belong to others):
 * - vkhlo_status_t values (and the text formatted for their messages): the
 *   caller frees them with vkhlo_status_free() without a context, so they
 *   use malloc/free; when even that fails, a static out-of-memory status
 *   is returned.
 * - Memory allocated inside glslang, SPIRV-Tools and the Vulkan loader and
 *   driver (the driver's host memory goes through
 *   vkhlo_context_options_t::vulkan_allocation_callbacks when set).
 * - Functions that take no context: vkhlo_list_devices and
 *   vkhlo_tensor_format return memory the caller releases with free().
 * - Writing .vkx files: vkhlo_executable_serialize returns memory the
 *   caller releases with free(), and vkhlo_executable_save builds the file
 *   in memory from the C library.  (Loading one allocates through the
 *   hook.)
 * - The buffer and thunk tables of a compile with a dump directory, which
 *   are formatted with open_memstream.
 *
 * Contract: the struct and |user| must stay valid until the context and
 * every object created from it (executables, buffers) are destroyed; vkhlo
 * keeps the pointer, not a copy.  The functions are called from whichever
 * thread calls into vkhlo; vkhlo does not serialize calls on different
 * objects, so an allocator shared by objects used on several threads must
 * be thread-safe.  vkhlo calls malloc and realloc with size > 0, realloc
 * and free only with a non-NULL pointer that this allocator returned (and
 * not freed since).  malloc/realloc return NULL on failure (realloc then
 * leaves |ptr| valid, as C's realloc does); vkhlo turns every failure into
 * a VKHLO_STATUS_RESOURCE_EXHAUSTED status (or, where an optimization can
 * go on without the memory, skips it) and leaks nothing.  Returned memory
 * must be aligned for any object type (as malloc's is).
 */
#ifndef VKHLO_ALLOCATOR_H
#define VKHLO_ALLOCATOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkhlo_allocator {
  void *user; /* passed to every call */
  void *(*malloc)(void *user, size_t size_bytes);
  void *(*realloc)(void *user, void *ptr, size_t size_bytes);
  void (*free)(void *user, void *ptr);
} vkhlo_allocator_t;

#ifdef __cplusplus
}
#endif

#endif
