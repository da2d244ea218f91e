/*
 * Embedding (include/vkhlo/vkhlo.h, "Embedding"): the caller's VkBuffers as
 * vkhlo buffers, asynchronous submission with the caller's semaphores and
 * fence, recording into the caller's command buffer, and the caller's
 * Vulkan and device-memory allocators.
 *
 * Wrapped buffers.  vkhlo_buffer_wrap makes a vkrt buffer that names the
 * caller's VkBuffer and a base offset (vk_runtime/buffer.c); every offset
 * the executor binds or copies at is relative to that base, so the
 * executor needs no change: a parameter binds the wrapped range directly,
 * and a result whose storage group buffer assignment placed in the
 * result allocation is written there by its dispatch.  The base offset
 * must be a multiple of minStorageBufferOffsetAlignment because slices
 * inside a result allocation sit at aligned offsets from it.  Wrapped
 * buffers never enter the context's pool.
 *
 * Submission.  Only straight-line programs: while / if / case read their
 * predicate on the host between submissions, and infeed / outfeed / send /
 * recv call the host, neither of which a single queue submission can do.
 * The executable's main command buffer (exe->cmd) is recorded with
 * exe_record_program — leading barrier, the program, the result copy-outs
 * — and resubmitted unchanged while the argument and result buffers stay
 * the same (exe->recorded_async tells execute_into that this recording is
 * not its own).  vkrt_cmd_submit_async passes the caller's semaphores and
 * timeline values; the cmd's own fence tracks completion so that the next
 * submit, a re-recording or destroy waits for exactly this submission.
 *
 * Recording.  exe->record_cmd is a vkrt cmd used only for its descriptor
 * pools: vkrt_cmd_begin_external points it at the caller's command buffer.
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------- allocators */

/* vkrt's allocator callback -> the caller's (the layouts are the same
 * fields, copied one by one so that neither header depends on the other). */
static int32_t memory_allocate_shim(void *user, const vkrt_memory_request_t *request, vkrt_memory_block_t *out) {
  vkhlo_context_t *ctx = user;
  vkhlo_device_memory_request_t req = {request->size, request->alignment, request->memory_type_bits,
                                       request->host_visible};
  vkhlo_device_memory_block_t block;
  memset(&block, 0, sizeof block);
  int32_t r = ctx->memory_allocate(ctx->memory_user, &req, &block);
  out->memory = block.memory;
  out->offset = block.offset;
  out->mapped = block.mapped;
  out->host_coherent = block.host_coherent;
  out->user_data = block.user_data;
  return r;
}

static void memory_free_shim(void *user, const vkrt_memory_block_t *b) {
  vkhlo_context_t *ctx = user;
  vkhlo_device_memory_block_t block = {b->memory, b->offset, b->mapped, b->host_coherent, b->user_data};
  ctx->memory_free(ctx->memory_user, &block);
}

void embed_device_options(vkhlo_context_t *ctx, const vkhlo_context_options_t *options,
                          vkrt_device_options_t *dopts) {
  dopts->vulkan_allocator = options->vulkan_allocation_callbacks;
  ctx->memory_allocate = options->device_memory_allocate;
  ctx->memory_free = options->device_memory_free;
  ctx->memory_user = options->device_memory_user;
  if (options->device_memory_allocate || options->device_memory_free) {
    /* one of them missing: vkrt_device_create reports it */
    dopts->memory_allocator.allocate = options->device_memory_allocate ? memory_allocate_shim : NULL;
    dopts->memory_allocator.free = options->device_memory_free ? memory_free_shim : NULL;
    dopts->memory_allocator.user = ctx;
  }
}

/* ---------------------------------------------------- wrapped buffers */

uint64_t vkhlo_context_buffer_offset_alignment(const vkhlo_context_t *context) {
  uint64_t a = vkrt_device_caps(context->device)->min_storage_buffer_offset_alignment;
  return a < 4 ? 4 : a;
}

vkhlo_status_t vkhlo_buffer_wrap(vkhlo_context_t *context, const vkhlo_tensor_type_t *type, void *vk_buffer,
                                 uint64_t offset_bytes, uint64_t range_bytes, vkhlo_buffer_t **out_buffer) {
  *out_buffer = NULL;
  if (!context || !type) return VKHLO_INVALID("vkhlo_buffer_wrap: context and type are required");
  if (type->rank < 0 || type->rank > VKHLO_MAX_RANK || type->element_type < VKHLO_PRED ||
      type->element_type > VKHLO_TOKEN)
    return VKHLO_INVALID("vkhlo_buffer_wrap: bad tensor type");
  for (int i = 0; i < type->rank; i++)
    if (type->dimensions[i] < 0) return VKHLO_INVALID("vkhlo_buffer_wrap: negative dimension");
  /* kernels access whole 32-bit words (sub-word types are packed) */
  uint64_t need = (vkhlo_tensor_type_size_bytes(type) + 3) / 4 * 4;
  if (need == 0) need = 4;
  if (range_bytes < need)
    return VKHLO_INVALID("vkhlo_buffer_wrap: range of %llu bytes is smaller than the %llu bytes the tensor needs "
                         "(its size rounded up to a multiple of 4)",
                         (unsigned long long)range_bytes, (unsigned long long)need);
  vkhlo_buffer_t *b = vkhlo_calloc(context->allocator, 1, sizeof *b);
  if (!b) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = vkrt_buffer_wrap(context->device, vk_buffer, offset_bytes, range_bytes, &b->buffer);
  if (st) {
    vkhlo_free(context->allocator, b);
    return vkhlo_status_annotate(st, "vkhlo_buffer_wrap");
  }
  b->context = context;
  b->serial = ++context->next_buffer_serial;
  b->type = *type;
  *out_buffer = b;
  return NULL;
}

/* ---------------------------------------------------- submit and record */

/* UNIMPLEMENTED naming the first thunk a single submission cannot run. */
static vkhlo_status_t check_straight_line(const vkhlo_executable_t *exe, const char *what) {
  if (exe->profiling)
    return VKHLO_UNIMPLEMENTED("%s: profiling is on (vkhlo_executable_set_profiling); use execute", what);
  const exe_thunk_t *t;
  if (exe_sequence_recorded_thunks(&exe->main, &t) >= 0) return NULL;
  if (!t)
    return VKHLO_UNIMPLEMENTED("%s: the program records more than %d commands (its counted loops unrolled); "
                               "only straight-line programs of at most that many can be submitted or recorded "
                               "(use vkhlo_executable_execute_into)",
                               what, EXE_MAX_RECORDED_THUNKS);
  if (t->kind == EXE_THUNK_HOST)
    return VKHLO_UNIMPLEMENTED("%s: the program calls the host (stablehlo.%s); only programs without host "
                               "calls can be submitted or recorded (use vkhlo_executable_execute_into)",
                               what, t->host_op);
  return VKHLO_UNIMPLEMENTED("%s: the program has a %s, whose %s is read back on the host between "
                             "submissions; only straight-line programs (while loops with a trip count the "
                             "program fixes) can be submitted or recorded (use vkhlo_executable_execute_into)",
                             what, t->kind == EXE_THUNK_WHILE ? "while loop" : "conditional (if/case)",
                             t->kind == EXE_THUNK_WHILE ? "predicate" : "branch index");
}

vkhlo_status_t vkhlo_executable_submit(vkhlo_executable_t *exe, int arg_count, vkhlo_buffer_t *const *args,
                                       int result_count, vkhlo_buffer_t *const *results,
                                       const vkhlo_submit_info_t *info) {
  VKHLO_RETURN_IF_ERROR(exe_check_buffers(exe, arg_count, args, result_count, results));
  VKHLO_RETURN_IF_ERROR(check_straight_line(exe, "vkhlo_executable_submit"));
  vkhlo_submit_info_t none;
  memset(&none, 0, sizeof none);
  if (!info) info = &none;
  if (info->wait_semaphore_count && (!info->wait_semaphores || !info->wait_stage_masks))
    return VKHLO_INVALID("vkhlo_executable_submit: %u wait semaphores but no semaphore or stage-mask array",
                         info->wait_semaphore_count);
  if (info->signal_semaphore_count && !info->signal_semaphores)
    return VKHLO_INVALID("vkhlo_executable_submit: %u signal semaphores but no array", info->signal_semaphore_count);
  if (!exe_recording_matches(exe, args, results) || !exe->recorded_async) {
    exe->recorded = false;
    exe->recorded_async = false;
    VKHLO_RETURN_IF_ERROR(vkrt_cmd_begin(exe->cmd)); /* waits for the cmd's previous submission */
    int64_t copies = 0, result_copies = 0;
    vkhlo_status_t st = exe_record_program(exe, exe->cmd, args, results, &copies, &result_copies);
    vkhlo_status_t est = vkrt_cmd_end(exe->cmd);
    if (!st) st = est;
    else vkhlo_status_free(est);
    if (!st) st = exe_remember_recording(exe, args, results);
    if (st) return st;
    exe->recorded = true;
    exe->recorded_async = true;
    exe->recorded_copies = copies;
    exe->stats.result_copies = result_copies;
    exe->stats.recordings++;
  }
  vkrt_submit_info_t s = {
      info->wait_semaphore_count, info->wait_semaphores, info->wait_stage_masks, info->wait_values,
      info->signal_semaphore_count, info->signal_semaphores, info->signal_values, info->fence,
  };
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_submit_async(exe->cmd, &s));
  exe->stats.copy_commands = exe->recorded_copies;
  exe->stats.submissions = 1;
  exe->stats.executions++;
  for (int i = 0; i < exe->check_count; i++) memset(&exe->checks[i].result, 0, sizeof exe->checks[i].result);
  return NULL;
}

vkhlo_status_t vkhlo_executable_wait(vkhlo_executable_t *exe) {
  vkhlo_status_t st = vkrt_cmd_wait(exe->cmd);
  if (!st && exe->copy_cmd) st = vkrt_cmd_wait(exe->copy_cmd);
  return st;
}

vkhlo_status_t vkhlo_executable_record(vkhlo_executable_t *exe, void *command_buffer, int arg_count,
                                       vkhlo_buffer_t *const *args, int result_count,
                                       vkhlo_buffer_t *const *results) {
  if (!command_buffer) return VKHLO_INVALID("vkhlo_executable_record: the command buffer is NULL");
  VKHLO_RETURN_IF_ERROR(exe_check_buffers(exe, arg_count, args, result_count, results));
  VKHLO_RETURN_IF_ERROR(check_straight_line(exe, "vkhlo_executable_record"));
  if (!exe->record_cmd) VKHLO_RETURN_IF_ERROR(vkrt_cmd_create(exe->context->device, &exe->record_cmd));
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_begin_external(exe->record_cmd, command_buffer));
  int64_t copies = 0, result_copies = 0;
  vkhlo_status_t st = exe_record_program(exe, exe->record_cmd, args, results, &copies, &result_copies);
  vkhlo_status_t est = vkrt_cmd_end_external(exe->record_cmd);
  if (!st) st = est;
  else vkhlo_status_free(est);
  if (st) return st;
  exe->stats.copy_commands = copies;
  exe->stats.result_copies = result_copies;
  exe->stats.submissions = 0;
  exe->stats.recordings++;
  exe->stats.executions++;
  for (int i = 0; i < exe->check_count; i++) memset(&exe->checks[i].result, 0, sizeof exe->checks[i].result);
  return NULL;
}
