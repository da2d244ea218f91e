/*
 * The executor: runs an executable's thunk program on the device.
 *
 * Recording.  Dispatches and copies are recorded into one command buffer.
 * Control flow is decided on the host: before a while or conditional the
 * recorded work is submitted and waited for, the predicate (or case index)
 * is read back, and the chosen sequence is recorded next — one submission
 * per loop iteration.  A while loop whose trip count the program fixes
 * (has_trip_count: codegen/trip_count.c) is the exception: its body is
 * recorded that many times in a row, its cond never runs, nothing is read
 * back; a recording that grows past EXE_MAX_RECORDED_THUNKS thunks that way
 * is submitted and continued in a fresh one.  Results live in the caller's result buffers: a
 * result placed there by buffer assignment is written by its dispatch
 * directly; the others (parameters, constants, a value returned twice)
 * are copied in at the end.  Then the check buffers are read back and
 * compared (api/check.c).
 *
 * Barriers.  A pipeline barrier is recorded before a thunk only when it
 * has a true dependency on work recorded since the last barrier: it reads
 * bytes that work writes (read after write), writes bytes it reads (write
 * after read) or writes bytes it writes (write after write).  Each thunk's
 * accesses are byte ranges of allocations (a dispatch reads its input
 * slices and writes its output slices; a copy reads its source and writes
 * its destination); an in-place dispatch reads and writes the same range,
 * which needs no barrier against itself.  A submission ends the pending
 * set (the next recording starts after a fence wait).
 *
 * Replay.  A straight-line executable (no host step between
 * submissions: exe_sequence_recorded_thunks, counted loops unrolled) is
 * recorded once and its command buffer replayed on later executions while
 * the arguments and results are the same buffers (by serial number, which
 * is compared by vkrt_buffer_id, which is never reused, so a freed and
 * re-created device buffer never matches): descriptor sets name the
 * caller's VkBuffers.  vkhlo_executable_execute takes its fresh result
 * buffers from the context's pool (api/context.c), which hands back the
 * device buffers of results destroyed since, so it replays too in the
 * usual execute-read-destroy loop; a caller that reuses its result buffers
 * (vkhlo_executable_execute_into) replays.  The result
 * copies, when there are any, go into a second small command buffer per
 * execution, which starts with a barrier and is submitted after the replay
 * on the same queue; waiting for it waits for both.
 *
 * exe_count_barriers walks the same code without a device, to report how
 * many barriers one execution records (loops and conditionals counted
 * once).
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A byte range of an allocation (or of result |-1 - i|'s fresh buffer). */
typedef struct access {
  int allocation;
  uint64_t begin, end;
  bool write;
} access_t;

typedef struct run {
  vkhlo_executable_t *exe;
  vkhlo_buffer_t *const *args;
  vkhlo_buffer_t *const *results;
  bool counting; /* exe_count_barriers: no device work */
  vkrt_cmd_t *cmd;
  bool recording;
  /* a recording that is replayed or the caller's: never submitted in
   * parts (its program is straight-line, so bounded in size) */
  bool one_recording;
  int64_t thunks_recorded; /* since the last submission */
  int64_t iteration;       /* of the innermost counted loop running (its counter table's entry) */
  /* the loop whose iterations are being recorded in a batch (see
   * "Batched iterations"), else NULL: its copies dispatch its word-copy
   * kernel instead of recording copy commands */
  const exe_thunk_t *batch;
  /* Loop state in two buffers (exe_thunk_t.rotate): the buffer whose
   * storage each logical buffer names now; NULL: every buffer its own */
  int *storage;
  access_t *pending; /* accesses since the last barrier */
  int pending_count, pending_capacity;
  int64_t barriers;
  /* copy commands recorded: copy thunks, and result copy-outs */
  int64_t copies, result_copies;
  int64_t submissions;
  /* profiling: the kernel and first timestamp of each dispatch timed in
   * the current recording */
  int *timed_kernel;
  uint32_t *timed_query;
  int timed_count, timed_capacity;
} run_t;

static int storage_of(const run_t *r, int id) { return r->storage ? r->storage[id] : id; }

/* Frees what a run allocated; buffers resolve to their own storage after
 * it (the checks read results after the run). */
static void run_release(run_t *r) {
  const vkhlo_allocator_t *a = r->exe->allocator;
  vkhlo_free(a, r->pending);
  vkhlo_free(a, r->storage);
  vkhlo_free(a, r->timed_kernel);
  vkhlo_free(a, r->timed_query);
  r->pending = NULL;
  r->storage = NULL;
  r->timed_kernel = NULL;
  r->timed_query = NULL;
}

static void resolve(run_t *r, int id, vkrt_buffer_t **out_buffer, uint64_t *out_offset, uint64_t *out_size) {
  id = storage_of(r, id);
  const exe_buffer_t *b = &r->exe->buffers[id];
  const exe_buffer_allocation_t *a = &r->exe->allocations[b->allocation];
  if (a->kind == EXE_ALLOCATION_PARAMETER) {
    *out_buffer = r->args ? r->args[a->parameter_number]->buffer : NULL;
    *out_offset = b->offset_bytes; /* 0, or a view's offset into the argument */
    *out_size = b->size_bytes;
    if (*out_buffer && *out_offset + *out_size > vkrt_buffer_size(*out_buffer))
      *out_size = vkrt_buffer_size(*out_buffer) - *out_offset;
    return;
  }
  if (a->kind == EXE_ALLOCATION_RESULT) {
    *out_buffer = r->results ? r->results[a->result_number]->buffer : NULL;
    *out_offset = b->offset_bytes;
    *out_size = b->size_bytes;
    /* a caller's (wrapped) buffer may end at the result's last word: bind
     * no further than it goes (the kernels write nothing past there) */
    if (*out_buffer && *out_offset + *out_size > vkrt_buffer_size(*out_buffer))
      *out_size = vkrt_buffer_size(*out_buffer) - *out_offset;
    return;
  }
  *out_buffer = a->buffer;
  *out_offset = b->offset_bytes;
  *out_size = b->size_bytes;
}

static access_t buffer_access(const run_t *r, int id, uint64_t offset, uint64_t size, bool write) {
  const exe_buffer_t *b = &r->exe->buffers[storage_of(r, id)];
  access_t a = {b->allocation, b->offset_bytes + offset, b->offset_bytes + offset + size, write};
  return a;
}

static bool conflicts(const access_t *a, const access_t *b) {
  return a->allocation == b->allocation && (a->write || b->write) && a->begin < b->end && b->begin < a->end;
}

/* Before recording a thunk with |accesses|: a barrier when it depends on
 * pending work; then its accesses become pending. */
static vkhlo_status_t order_after_pending(run_t *r, const access_t *accesses, int count) {
  bool barrier = false;
  for (int i = 0; i < count && !barrier; i++)
    for (int j = 0; j < r->pending_count && !barrier; j++) barrier = conflicts(&accesses[i], &r->pending[j]);
  if (barrier) {
    if (!r->counting) vkrt_cmd_barrier(r->cmd);
    r->barriers++;
    r->pending_count = 0;
  }
  if (r->pending_count + count > r->pending_capacity) {
    int cap = r->pending_capacity ? r->pending_capacity : 64;
    while (cap < r->pending_count + count) cap *= 2;
    access_t *p = vkhlo_realloc(r->exe->allocator, r->pending, sizeof *p * (size_t)cap);
    if (!p) return VKHLO_NO_MEMORY();
    r->pending = p;
    r->pending_capacity = cap;
  }
  memcpy(r->pending + r->pending_count, accesses, sizeof *accesses * (size_t)count);
  r->pending_count += count;
  return NULL;
}

static vkhlo_status_t ensure_recording(run_t *r) {
  if (r->recording || r->counting) {
    r->recording = true;
    return NULL;
  }
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_begin(r->cmd));
  r->recording = true;
  r->pending_count = 0;
  return NULL;
}

/* Adds the timed dispatches of the submission just waited for to the
 * executable's per-kernel totals. */
static vkhlo_status_t collect_times(run_t *r) {
  int n = r->timed_count;
  r->timed_count = 0;
  if (!n) return NULL;
  uint32_t queries = 0;
  for (int i = 0; i < n; i++)
    if (r->timed_query[i] + 2 > queries) queries = r->timed_query[i] + 2;
  double *ns = vkhlo_calloc(r->exe->allocator, queries, sizeof *ns);
  if (!ns) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = vkrt_cmd_read_timestamps(r->cmd, queries, ns);
  for (int i = 0; i < n && !st; i++) {
    double t = ns[r->timed_query[i] + 1] - ns[r->timed_query[i]];
    r->exe->profile_ms[r->timed_kernel[i]] += t > 0 ? t / 1e6 : 0;
    r->exe->profile_dispatches[r->timed_kernel[i]]++;
  }
  vkhlo_free(r->exe->allocator, ns);
  return st;
}

static vkhlo_status_t flush(run_t *r) {
  r->pending_count = 0;
  r->thunks_recorded = 0;
  if (!r->recording) return NULL;
  r->recording = false;
  if (r->counting) return NULL;
  r->submissions++;
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_submit_and_wait(r->cmd));
  return collect_times(r);
}

/* Profiling: a barrier and a timestamp before dispatch |kernel|; the
 * second timestamp follows the dispatch (end_timing). */
static vkhlo_status_t begin_timing(run_t *r, int kernel, uint32_t *out_query) {
  *out_query = UINT32_MAX;
  vkrt_cmd_barrier(r->cmd); /* the dispatch's accesses stay pending */
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_timestamp(r->cmd, out_query));
  if (*out_query == UINT32_MAX) return NULL;
  if (r->timed_count == r->timed_capacity) {
    int cap = r->timed_capacity ? r->timed_capacity * 2 : 64;
    int *k = vkhlo_realloc(r->exe->allocator, r->timed_kernel, sizeof *k * (size_t)cap);
    if (k) r->timed_kernel = k;
    uint32_t *q = vkhlo_realloc(r->exe->allocator, r->timed_query, sizeof *q * (size_t)cap);
    if (q) r->timed_query = q;
    if (!k || !q) return VKHLO_NO_MEMORY();
    r->timed_capacity = cap;
  }
  r->timed_kernel[r->timed_count] = kernel;
  r->timed_query[r->timed_count] = *out_query;
  return NULL;
}

static vkhlo_status_t end_timing(run_t *r, uint32_t query) {
  if (query == UINT32_MAX) return NULL;
  uint32_t q;
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_timestamp(r->cmd, &q));
  if (q == query + 1) r->timed_count++; /* else the pool ran out: not timed */
  return NULL;
}

/* Submits the recorded work, waits for it and reads |size| bytes at
 * |offset| of |buf| (what the program's accesses call |access|) into
 * |out|.  Where the host cannot map that memory (a discrete GPU's), a copy
 * into the mapped buffer *readback (made on first use, |readback_size|
 * bytes) ends the submission, instead of a staging copy and a second
 * submission after it; where no such buffer can be made, the staging
 * download. */
static vkhlo_status_t read_back(run_t *r, vkrt_buffer_t *buf, uint64_t offset, uint64_t size, access_t access,
                                vkrt_buffer_t **readback, uint64_t readback_size, void *out) {
  bool staged = !r->counting && buf && !vkrt_buffer_is_mapped(buf);
  if (staged && !*readback) {
    vkhlo_status_t st = vkrt_buffer_create_readback(r->exe->context->device, readback_size, readback);
    if (st) { /* (no mappable memory: the staging download below) */
      vkhlo_status_free(st);
      staged = false;
    }
  }
  if (staged) {
    enum { READBACK = -1000000 }; /* an allocation id of no buffer of the program */
    access_t accesses[2] = {access, {READBACK, 0, size, true}};
    VKHLO_RETURN_IF_ERROR(ensure_recording(r));
    VKHLO_RETURN_IF_ERROR(order_after_pending(r, accesses, 2));
    VKHLO_RETURN_IF_ERROR(vkrt_cmd_copy(r->cmd, buf, offset, *readback, 0, size));
  }
  VKHLO_RETURN_IF_ERROR(flush(r));
  if (r->counting) return NULL;
  return vkrt_buffer_download(staged ? *readback : buf, staged ? 0 : offset, out, size);
}

/* The first 32 bits of buffer |id| (a loop's predicate, a conditional's
 * selector) into *out, after the recorded work (read_back). */
static vkhlo_status_t read_selector(run_t *r, int id, int64_t *out) {
  *out = 1;
  vkrt_buffer_t *buf;
  uint64_t off, size;
  resolve(r, id, &buf, &off, &size);
  int32_t v = 0;
  VKHLO_RETURN_IF_ERROR(read_back(r, buf, off, 4, buffer_access(r, id, 0, 4, false), &r->exe->readback, 16, &v));
  if (!r->counting) *out = v;
  return NULL;
}

static vkhlo_status_t record_dispatch(run_t *r, const exe_thunk_t *t) {
  vkhlo_executable_t *exe = r->exe;
  exe_kernel_t *k = &exe->kernels[t->kernel];
  enum { MAX_BINDINGS = 64 };
  if (t->binding_count > MAX_BINDINGS) return VKHLO_UNIMPLEMENTED("kernel %s has too many bindings", k->name);
  vkrt_binding_t bindings[MAX_BINDINGS];
  access_t accesses[MAX_BINDINGS];
  for (int b = 0; b < t->binding_count; b++) {
    resolve(r, t->bindings[b], &bindings[b].buffer, &bindings[b].offset_bytes, &bindings[b].size_bytes);
    accesses[b] = buffer_access(r, t->bindings[b], 0, exe->buffers[t->bindings[b]].size_bytes, b >= t->input_count);
  }
  VKHLO_RETURN_IF_ERROR(ensure_recording(r));
  VKHLO_RETURN_IF_ERROR(order_after_pending(r, accesses, t->binding_count));
  if (r->counting) return NULL;
  r->thunks_recorded++;
  uint32_t query = UINT32_MAX;
  if (exe->profiling) VKHLO_RETURN_IF_ERROR(begin_timing(r, t->kernel, &query));
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_dispatch(r->cmd, k->pipeline, (uint32_t)t->binding_count, bindings,
                                          k->has_push_constant ? &k->push_constant : NULL,
                                          k->has_push_constant ? 4 : 0, k->group_count));
  return exe->profiling ? end_timing(r, query) : NULL;
}

/* What copy_buffer copies: the buffers, offsets and the size clamped to
 * both ranges. */
typedef struct copy_range {
  vkrt_buffer_t *src, *dst;
  uint64_t src_offset, dst_offset, size;
} copy_range_t;

static vkhlo_status_t copy_range(run_t *r, int src, uint64_t src_offset, int dst, uint64_t dst_offset, uint64_t size,
                                 copy_range_t *out) {
  uint64_t ss, ds;
  resolve(r, src, &out->src, &out->src_offset, &ss);
  resolve(r, dst, &out->dst, &out->dst_offset, &ds);
  if (src_offset > ss || dst_offset > ds)
    return VKHLO_INTERNAL("copy from offset %llu of a %llu-byte buffer to offset %llu of a %llu-byte one",
                          (unsigned long long)src_offset, (unsigned long long)ss, (unsigned long long)dst_offset,
                          (unsigned long long)ds);
  out->src_offset += src_offset;
  out->dst_offset += dst_offset;
  ss -= src_offset;
  ds -= dst_offset;
  if (size > ss) size = ss;
  if (size > ds) size = ds;
  out->size = size;
  return NULL;
}

/* |size| bytes of buffer |src| from |src_offset| into buffer |dst| from
 * |dst_offset|: a copy command, or inside a batched loop a dispatch of the
 * word-copy kernel (see "Batched iterations"). */
static vkhlo_status_t copy_buffer(run_t *r, int src, uint64_t src_offset, int dst, uint64_t dst_offset, uint64_t size) {
  copy_range_t c;
  VKHLO_RETURN_IF_ERROR(copy_range(r, src, src_offset, dst, dst_offset, size, &c));
  access_t accesses[2] = {buffer_access(r, src, src_offset, c.size, false),
                          buffer_access(r, dst, dst_offset, c.size, true)};
  VKHLO_RETURN_IF_ERROR(ensure_recording(r));
  VKHLO_RETURN_IF_ERROR(order_after_pending(r, accesses, 2));
  if (r->counting) return NULL;
  r->thunks_recorded++;
  if (r->batch) {
    if (!c.size) return NULL;
    const exe_kernel_t *k = &r->exe->kernels[r->batch->copy_kernel];
    vkrt_binding_t bindings[2] = {{c.src, c.src_offset, c.size}, {c.dst, c.dst_offset, c.size}};
    uint64_t groups = (c.size / 4 + 63) / 64;
    uint32_t group_count[3] = {(uint32_t)(groups < 4096 ? groups : 4096), 1, 1};
    return vkrt_cmd_dispatch(r->cmd, k->pipeline, 2, bindings, NULL, 0, group_count);
  }
  r->copies++;
  return vkrt_cmd_copy(r->cmd, c.src, c.src_offset, c.dst, c.dst_offset, c.size);
}

static vkhlo_status_t record_copy(run_t *r, const exe_thunk_t *t) {
  return copy_buffer(r, t->src, t->src_stride * (uint64_t)r->iteration, t->dst, t->dst_offset, t->size_bytes);
}

/* After an iteration of |t|: each rotate pair's S and V trade storage. */
static vkhlo_status_t rotate_state(run_t *r, const exe_thunk_t *t) {
  if (!t->rotate_count) return NULL;
  int n = r->exe->buffer_count;
  if (!r->storage) {
    r->storage = vkhlo_malloc(r->exe->allocator, sizeof *r->storage * ((size_t)n + 1));
    if (!r->storage) return VKHLO_NO_MEMORY();
    for (int i = 0; i < n; i++) r->storage[i] = i;
  }
  for (int p = 0; p < t->rotate_count; p++) {
    int S = t->rotate[2 * p], V = t->rotate[2 * p + 1], tmp = r->storage[S];
    r->storage[S] = r->storage[V];
    r->storage[V] = tmp;
  }
  return NULL;
}

/* After the loop: a state held in its value's storage is copied home. */
static vkhlo_status_t settle_state(run_t *r, const exe_thunk_t *t) {
  for (int p = 0; p < t->rotate_count && r->storage; p++) {
    int S = t->rotate[2 * p], V = t->rotate[2 * p + 1];
    if (r->storage[S] == S) continue;
    r->storage[S] = S;
    r->storage[V] = V;
    VKHLO_RETURN_IF_ERROR(copy_buffer(r, V, 0, S, 0, r->exe->buffers[S].size_bytes)); /* what the state was in */
  }
  return NULL;
}

/* infeed/outfeed/send/recv: finish the recorded work, hand the tensors to
 * the context's host callback, upload what it filled in. */
static vkhlo_status_t run_host_call(run_t *r, const exe_thunk_t *t) {
  VKHLO_RETURN_IF_ERROR(flush(r));
  if (r->counting) return NULL;
  vkhlo_executable_t *exe = r->exe;
  vkhlo_context_t *ctx = exe->context;
  if (!ctx->host_callback)
    return vkhlo_status_make(VKHLO_STATUS_UNIMPLEMENTED,
                             "stablehlo.%s needs a host callback (vkhlo_context_set_host_callback)", t->host_op);
  int n = t->binding_count;
  vkhlo_tensor_type_t *types = vkhlo_calloc(r->exe->allocator, (size_t)n + 1, sizeof *types);
  void **data = vkhlo_calloc(r->exe->allocator, (size_t)n + 1, sizeof *data);
  vkhlo_status_t st = (!types || !data) ? VKHLO_NO_MEMORY() : NULL;
  for (int i = 0; i < n && !st; i++) {
    types[i] = t->host_types[i];
    size_t size = vkhlo_tensor_type_size_bytes(&types[i]);
    data[i] = vkhlo_calloc(r->exe->allocator, size + 1, 1);
    if (!data[i]) st = VKHLO_NO_MEMORY();
    else if (i < t->input_count && size) {
      vkrt_buffer_t *buf;
      uint64_t off, bsize;
      resolve(r, t->bindings[i], &buf, &off, &bsize);
      st = vkrt_buffer_download(buf, off, data[i], size);
    }
  }
  if (!st) {
    vkhlo_host_call_t call = {t->host_op, t->channel_id, t->host_config ? t->host_config : "", n, types,
                              data};
    st = ctx->host_callback(ctx->host_callback_user, &call);
  }
  for (int i = t->input_count; i < n && !st; i++) {
    size_t size = vkhlo_tensor_type_size_bytes(&types[i]);
    vkrt_buffer_t *buf;
    uint64_t off, bsize;
    resolve(r, t->bindings[i], &buf, &off, &bsize);
    if (size) st = vkrt_buffer_upload(buf, off, data[i], size);
  }
  for (int i = 0; data && i < n; i++) vkhlo_free(r->exe->allocator, data[i]);
  vkhlo_free(r->exe->allocator, data);
  vkhlo_free(r->exe->allocator, types);
  return st;
}

static vkhlo_status_t too_many_iterations(const vkhlo_executable_t *exe) {
  return vkhlo_status_make(VKHLO_STATUS_DEADLINE_EXCEEDED,
                           "while loop ran more than %llu iterations (VKHLO_MAX_LOOP_ITERATIONS)",
                           (unsigned long long)exe->max_loop_iterations);
}

int64_t exe_sequence_recorded_thunks(const exe_sequence_t *seq, const exe_thunk_t **out_host_step) {
  if (out_host_step) *out_host_step = NULL;
  int64_t total = 0;
  for (int i = 0; seq && i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    int64_t n = 1;
    if (t->kind == EXE_THUNK_CONDITIONAL || t->kind == EXE_THUNK_HOST ||
        (t->kind == EXE_THUNK_WHILE && !t->has_trip_count)) {
      if (out_host_step) *out_host_step = t;
      return -1;
    }
    if (t->kind == EXE_THUNK_WHILE) {
      int64_t body = exe_sequence_recorded_thunks(t->body, out_host_step);
      if (body < 0) return -1;
      if (body && t->trip_count > EXE_MAX_RECORDED_THUNKS / body) return -1;
      n = body * t->trip_count + t->rotate_count; /* and the state copied home */
    }
    total += n;
    if (total > EXE_MAX_RECORDED_THUNKS) return -1;
  }
  return total;
}

static vkhlo_status_t run_sequence(run_t *r, const exe_sequence_t *seq);

/* Batched iterations.  A while loop whose trip count the program does not
 * fix reads its predicate back after every cond: one submission, one wait
 * and one read per iteration, which on a GPU costs more than a small
 * body's work.  Where the device has conditional rendering and the loop's
 * cond and body are dispatches and copies only (api/lower.c gives such
 * loops the kernels shaders/loop_gate.comp and shaders/copy_words.comp),
 * U iterations are recorded in one submission instead, each gated on a
 * word of exe->loop_gates that the device computes:
 *   fill g[0] = 1, g[1..U] = 0;
 *   for i in 0 .. U-1:
 *     if g[i]:   cond               (a conditional-rendering region)
 *     gate i:    g[i+1] = g[i] && predicate      (loop_gate.comp)
 *     if g[i+1]: body, rotate the loop state's storage
 * then the gates are read back once: the ones among g[1..U] are the bodies
 * that ran (once a predicate is false every later gate is 0).  All U ran:
 * the next batch, twice as long (4, 8, .. exe->loop_batch); else the loop
 * has ended, after that many bodies, and the storage map is set to the
 * one after that many rotations.  Copies inside the regions dispatch copy_words.comp
 * (copy commands ignore conditional rendering), so a loop whose copies are
 * not whole aligned words keeps the host's reads, as do profiled runs
 * (their per-dispatch timestamps would count skipped dispatches).  A
 * skipped dispatch costs its recording on the host and next to nothing on
 * a GPU; a loop that ends early in a batch wastes at most U - 1
 * iterations' recordings.  CPU devices keep the reads by default
 * (exe_env_loop_batch): there a dispatch, and a barrier, skipped or not,
 * costs more than a submission. */
static bool whole_word_copies(run_t *r, const exe_sequence_t *seq) {
  uint64_t align = vkrt_device_caps(r->exe->context->device)->min_storage_buffer_offset_alignment;
  if (!align) align = 4;
  for (int i = 0; i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    if (t->kind != EXE_THUNK_COPY) continue;
    copy_range_t c;
    vkhlo_status_t st = copy_range(r, t->src, 0, t->dst, t->dst_offset, t->size_bytes, &c);
    if (st) {
      vkhlo_status_free(st);
      return false;
    }
    if (c.size % 4 || c.src_offset % align || c.dst_offset % align) return false;
  }
  return true;
}

static bool batches_iterations(run_t *r, const exe_thunk_t *t) {
  const vkhlo_executable_t *exe = r->exe;
  return t->gate_kernel >= 0 && !r->counting && !exe->profiling && exe->loop_batch > 0 &&
         vkrt_device_caps(exe->context->device)->conditional_rendering && whole_word_copies(r, t->cond) &&
         whole_word_copies(r, t->body);
}

enum { GATES = -1000001 }; /* the gate words' allocation id in the access lists (no buffer's) */

/* Records |seq| (a cond or a body) inside a region gated on g[gate]. */
static vkhlo_status_t run_gated(run_t *r, const exe_sequence_t *seq, uint32_t gate) {
  if (!seq->count) return NULL;
  access_t read = {GATES, 4 * (uint64_t)gate, 4 * (uint64_t)gate + 4, false};
  VKHLO_RETURN_IF_ERROR(ensure_recording(r));
  VKHLO_RETURN_IF_ERROR(order_after_pending(r, &read, 1));
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_begin_conditional(r->cmd, r->exe->loop_gates, 4 * (uint64_t)gate));
  vkhlo_status_t st = run_sequence(r, seq);
  vkhlo_status_t end = vkrt_cmd_end_conditional(r->cmd);
  if (st) {
    vkhlo_status_free(end);
    return st;
  }
  return end;
}

/* g[i + 1] = g[i] && the predicate (loop_gate.comp). */
static vkhlo_status_t record_gate(run_t *r, const exe_thunk_t *t, uint32_t i) {
  vkhlo_executable_t *exe = r->exe;
  vkrt_binding_t bindings[2];
  resolve(r, t->pred_buffer, &bindings[0].buffer, &bindings[0].offset_bytes, &bindings[0].size_bytes);
  bindings[1] = (vkrt_binding_t){exe->loop_gates, 0, vkrt_buffer_size(exe->loop_gates)};
  access_t accesses[2] = {buffer_access(r, t->pred_buffer, 0, 4, false), {GATES, 4 * (uint64_t)i, 4 * (uint64_t)i + 8, true}};
  VKHLO_RETURN_IF_ERROR(order_after_pending(r, accesses, 2));
  r->thunks_recorded++;
  static const uint32_t one_group[3] = {1, 1, 1};
  return vkrt_cmd_dispatch(r->cmd, exe->kernels[t->gate_kernel].pipeline, 2, bindings, &i, 4, one_group);
}

/* The gates g[1..n] into |out| after the batch (read_back). */
static vkhlo_status_t read_gates(run_t *r, uint32_t n, uint32_t *out) {
  vkhlo_executable_t *exe = r->exe;
  access_t gates = {GATES, 4, 4 + 4 * (uint64_t)n, false};
  return read_back(r, exe->loop_gates, 4, 4 * (uint64_t)n, gates, &exe->loop_gates_readback,
                   vkrt_buffer_size(exe->loop_gates), out);
}

static vkhlo_status_t run_batched_loop(run_t *r, const exe_thunk_t *t) {
  vkhlo_executable_t *exe = r->exe;
  uint64_t most = exe->loop_batch < 1024 ? exe->loop_batch : 1024;
  int64_t per_iteration = (int64_t)t->cond->count + t->body->count + 2;
  if ((uint64_t)(EXE_MAX_RECORDED_THUNKS / per_iteration) < most) most = (uint64_t)(EXE_MAX_RECORDED_THUNKS / per_iteration);
  if (most < 1) most = 1;
  uint64_t gates_size = 4 * (most + 1);
  if (exe->loop_gates && vkrt_buffer_size(exe->loop_gates) < gates_size) {
    vkrt_buffer_destroy(exe->loop_gates);
    vkrt_buffer_destroy(exe->loop_gates_readback);
    exe->loop_gates = exe->loop_gates_readback = NULL;
  }
  if (!exe->loop_gates) VKHLO_RETURN_IF_ERROR(vkrt_buffer_create(exe->context->device, gates_size, &exe->loop_gates));
  uint32_t *gates = vkhlo_malloc(exe->allocator, sizeof *gates * most);
  vkhlo_status_t st = gates ? NULL : VKHLO_NO_MEMORY();
  uint64_t iterations = 0, batch = most < 4 ? most : 4;
  const exe_thunk_t *outer = r->batch;
  r->batch = t;
  while (!st) {
    access_t fill = {GATES, 0, 4 * (batch + 1), true};
    if ((st = ensure_recording(r)) || (st = order_after_pending(r, &fill, 1)) ||
        (st = vkrt_cmd_fill(r->cmd, exe->loop_gates, 0, 4, 1)) ||
        (st = vkrt_cmd_fill(r->cmd, exe->loop_gates, 4, 4 * batch, 0)))
      break;
    for (uint32_t i = 0; i < batch && !st; i++) {
      st = run_gated(r, t->cond, i);
      if (!st) st = record_gate(r, t, i);
      if (!st) st = run_gated(r, t->body, i + 1);
      if (!st) st = rotate_state(r, t);
    }
    if (st || (st = read_gates(r, (uint32_t)batch, gates))) break;
    uint64_t ran = 0;
    while (ran < batch && gates[ran]) ran++;
    iterations += ran;
    if (iterations > exe->max_loop_iterations) {
      st = too_many_iterations(exe);
      break;
    }
    if (ran < batch) { /* the loop ended: the storage after |ran| of the batch's |batch| rotations,
                          * each a swap, is the storage after |batch - ran| more */
      for (uint64_t i = ran; i < batch && !st; i++) st = rotate_state(r, t);
      break;
    }
    batch = 2 * batch < most ? 2 * batch : most;
  }
  r->batch = outer;
  vkhlo_free(exe->allocator, gates);
  return st ? st : settle_state(r, t);
}

static vkhlo_status_t run_sequence(run_t *r, const exe_sequence_t *seq) {
  vkhlo_executable_t *exe = r->exe;
  for (int i = 0; i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    switch (t->kind) {
      case EXE_THUNK_DISPATCH:
        VKHLO_RETURN_IF_ERROR(record_dispatch(r, t));
        break;
      case EXE_THUNK_COPY:
        VKHLO_RETURN_IF_ERROR(record_copy(r, t));
        break;
      case EXE_THUNK_HOST:
        VKHLO_RETURN_IF_ERROR(run_host_call(r, t));
        break;
      case EXE_THUNK_WHILE: {
        if (t->has_trip_count) { /* the body trip_count times, in this recording */
          if ((uint64_t)t->trip_count > exe->max_loop_iterations)
            return too_many_iterations(exe);
          int64_t outer = r->iteration;
          for (int64_t it = 0; it < t->trip_count; it++) {
            r->iteration = it;
            VKHLO_RETURN_IF_ERROR(run_sequence(r, t->body));
            VKHLO_RETURN_IF_ERROR(rotate_state(r, t));
            if (r->counting) break; /* loops counted once */
            if (!r->one_recording && r->thunks_recorded >= EXE_MAX_RECORDED_THUNKS) VKHLO_RETURN_IF_ERROR(flush(r));
          }
          r->iteration = outer;
          VKHLO_RETURN_IF_ERROR(settle_state(r, t));
          break;
        }
        if (batches_iterations(r, t)) {
          VKHLO_RETURN_IF_ERROR(run_batched_loop(r, t));
          break;
        }
        uint64_t iterations = 0;
        for (;;) {
          VKHLO_RETURN_IF_ERROR(run_sequence(r, t->cond));
          int64_t pred = 1;
          VKHLO_RETURN_IF_ERROR(read_selector(r, t->pred_buffer, &pred));
          if (!(pred & 0xff)) break;
          if (++iterations > exe->max_loop_iterations) return too_many_iterations(exe);
          VKHLO_RETURN_IF_ERROR(run_sequence(r, t->body));
          VKHLO_RETURN_IF_ERROR(rotate_state(r, t));
          if (r->counting) break; /* loops counted once */
        }
        VKHLO_RETURN_IF_ERROR(settle_state(r, t));
        break;
      }
      case EXE_THUNK_CONDITIONAL: {
        if (r->counting) { /* the branch that records the most barriers */
          VKHLO_RETURN_IF_ERROR(flush(r));
          int64_t before = r->barriers, most = 0;
          for (int b = 0; b < t->branch_count; b++) {
            r->barriers = 0;
            r->pending_count = 0;
            VKHLO_RETURN_IF_ERROR(run_sequence(r, t->branches[b]));
            if (r->barriers > most) most = r->barriers;
          }
          r->barriers = before + most;
          break;
        }
        int64_t sel;
        VKHLO_RETURN_IF_ERROR(read_selector(r, t->selector_buffer, &sel));
        int branch;
        if (t->selector_is_pred) branch = (sel & 0xff) ? 0 : 1;
        else branch = (sel < 0 || sel >= t->branch_count) ? t->branch_count - 1 : (int)sel;
        VKHLO_RETURN_IF_ERROR(run_sequence(r, t->branches[branch]));
        break;
      }
    }
  }
  return NULL;
}

static bool needs_result_copies(const vkhlo_executable_t *exe) {
  for (int i = 0; i < exe->result_count; i++)
    if (vkhlo_tensor_type_size_bytes(&exe->result_types[i]) && !exe_result_in_place(exe, i)) return true;
  return false;
}

/* Records the copies of the results not written in place into r->results
 * into r->cmd; |after_submission|: the program ran in an earlier
 * submission. */
static vkhlo_status_t record_result_copies(run_t *r, bool after_submission) {
  vkhlo_executable_t *exe = r->exe;
  if (!needs_result_copies(exe)) return NULL;
  VKHLO_RETURN_IF_ERROR(ensure_recording(r));
  if (after_submission) {
    if (!r->counting) vkrt_cmd_barrier(r->cmd);
    r->barriers++;
    r->pending_count = 0;
  }
  for (int i = 0; i < exe->result_count; i++) {
    uint64_t n = vkhlo_tensor_type_size_bytes(&exe->result_types[i]);
    if (!n || exe_result_in_place(exe, i)) continue;
    vkrt_buffer_t *src;
    uint64_t off, size;
    resolve(r, exe->result_buffers[i], &src, &off, &size);
    access_t accesses[2] = {buffer_access(r, exe->result_buffers[i], 0, n, false), {-1 - i, 0, n, true}};
    VKHLO_RETURN_IF_ERROR(order_after_pending(r, accesses, 2));
    if (!r->counting) VKHLO_RETURN_IF_ERROR(vkrt_cmd_copy(r->cmd, src, off, r->results[i]->buffer, 0, n));
    r->result_copies++;
  }
  return NULL;
}

static bool same_type(const vkhlo_tensor_type_t *a, const vkhlo_tensor_type_t *b) {
  if (a->element_type != b->element_type || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dimensions[i] != b->dimensions[i]) return false;
  return true;
}

static vkhlo_status_t evaluate_checks(run_t *r) {
  vkhlo_executable_t *exe = r->exe;
  for (int i = 0; i < exe->check_count; i++) {
    exe_check_t *c = &exe->checks[i];
    size_t size = vkhlo_tensor_type_size_bytes(&c->type);
    unsigned char *a = vkhlo_malloc(r->exe->allocator, size + 1), *e = vkhlo_malloc(r->exe->allocator, size + 1);
    vkhlo_status_t st = (!a || !e) ? VKHLO_NO_MEMORY() : NULL;
    vkrt_buffer_t *buf;
    uint64_t off, bsize;
    if (!st && size) {
      resolve(r, c->actual, &buf, &off, &bsize);
      st = vkrt_buffer_download(buf, off, a, size);
    }
    if (!st && size) {
      resolve(r, c->expected, &buf, &off, &bsize);
      st = vkrt_buffer_download(buf, off, e, size);
    }
    if (!st) exe_check_evaluate(c, a, e);
    vkhlo_free(r->exe->allocator, a);
    vkhlo_free(r->exe->allocator, e);
    if (st) return st;
  }
  return NULL;
}

int64_t exe_count_barriers(const vkhlo_executable_t *exe) {
  run_t r;
  memset(&r, 0, sizeof r);
  r.exe = (vkhlo_executable_t *)exe; /* counting never writes through it */
  r.counting = true;
  vkhlo_status_t st = run_sequence(&r, &exe->main);
  if (!st) st = record_result_copies(&r, exe->straight_line);
  run_release(&r);
  if (st) {
    vkhlo_status_free(st);
    return -1;
  }
  return r.barriers;
}

static bool buffers_match_recording(const vkhlo_executable_t *exe, vkhlo_buffer_t *const *args,
                                    vkhlo_buffer_t *const *results) {
  if (!exe->recorded || !exe->recorded_serials) return false;
  for (int i = 0; i < exe->parameter_count; i++)
    if (exe->recorded_serials[i] != vkrt_buffer_id(args[i]->buffer)) return false;
  for (int i = 0; i < exe->result_count; i++)
    if (exe->recorded_serials[exe->parameter_count + i] != vkrt_buffer_id(results[i]->buffer)) return false;
  return true;
}

/* Straight-line programs: replay the recording (re-recording it when the
 * buffers changed), then copy the results not written in place in a
 * second submission. */
static vkhlo_status_t run_replayed(run_t *r) {
  vkhlo_executable_t *exe = r->exe;
  int nserials = exe->parameter_count + exe->result_count;
  if (!buffers_match_recording(exe, r->args, r->results)) {
    exe->recorded = false;
    if (!exe->recorded_serials && nserials) {
      exe->recorded_serials = vkhlo_calloc(exe->allocator, (size_t)nserials, sizeof(uint64_t));
      if (!exe->recorded_serials) return VKHLO_NO_MEMORY();
    }
    r->cmd = exe->cmd;
    r->one_recording = true;
    VKHLO_RETURN_IF_ERROR(ensure_recording(r));
    vkhlo_status_t st = run_sequence(r, &exe->main);
    r->one_recording = false;
    r->recording = false;
    vkhlo_status_t est = vkrt_cmd_end(exe->cmd);
    if (st || est) {
      vkhlo_status_free(est);
      return st ? st : est;
    }
    for (int i = 0; i < exe->parameter_count; i++) exe->recorded_serials[i] = vkrt_buffer_id(r->args[i]->buffer);
    for (int i = 0; i < exe->result_count; i++)
      exe->recorded_serials[exe->parameter_count + i] = vkrt_buffer_id(r->results[i]->buffer);
    exe->recorded = true;
    exe->recorded_copies = r->copies;
    exe->stats.recordings++;
  }
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_submit(exe->cmd, false));
  r->submissions++;
  r->cmd = exe->copy_cmd;
  r->pending_count = 0;
  vkhlo_status_t st = record_result_copies(r, true);
  vkhlo_status_t fst = flush(r);
  vkhlo_status_t wst = vkrt_cmd_wait(exe->cmd);
  if (!st) st = fst;
  else vkhlo_status_free(fst);
  if (!st) st = wst;
  else vkhlo_status_free(wst);
  return st;
}

static vkhlo_status_t check_type(const char *what, int i, const vkhlo_buffer_t *b, const vkhlo_tensor_type_t *want) {
  if (!b) return VKHLO_INVALID("%s %d is NULL", what, i);
  if (same_type(&b->type, want)) return NULL;
  char w[64], g[64];
  snprintf(w, sizeof w, "%s rank %d", vkhlo_element_type_name(want->element_type), want->rank);
  snprintf(g, sizeof g, "%s rank %d", vkhlo_element_type_name(b->type.element_type), b->type.rank);
  return VKHLO_INVALID("%s %d has type %s, the program expects %s (or dimensions differ)", what, i, g, w);
}

vkhlo_status_t exe_check_buffers(const vkhlo_executable_t *exe, int arg_count, vkhlo_buffer_t *const *args,
                                 int result_count, vkhlo_buffer_t *const *results) {
  if (arg_count != exe->parameter_count)
    return VKHLO_INVALID("executable takes %d arguments, %d given", exe->parameter_count, arg_count);
  if (arg_count && !args) return VKHLO_INVALID("executable takes %d arguments, none given", arg_count);
  if (result_count != exe->result_count || (result_count && !results))
    return VKHLO_INVALID("executable returns %d results, room for %d given", exe->result_count, result_count);
  for (int i = 0; i < arg_count; i++)
    VKHLO_RETURN_IF_ERROR(check_type("argument", i, args[i], &exe->parameter_types[i]));
  for (int i = 0; i < result_count; i++) {
    VKHLO_RETURN_IF_ERROR(check_type("result", i, results[i], &exe->result_types[i]));
    for (int j = 0; j < arg_count; j++)
      if (results[i] == args[j])
        return VKHLO_INVALID("result %d is argument %d's buffer; results must not alias arguments", i, j);
    for (int j = 0; j < i; j++)
      if (results[i] == results[j]) return VKHLO_INVALID("results %d and %d are the same buffer", j, i);
  }
  return NULL;
}

/* Records the whole program for |args| / |results| into |cmd| (begun by
 * the caller), after a barrier ordering it behind earlier compute and
 * transfer work, result copy-outs included; *out_copies: copy commands
 * recorded.  No host steps: the caller has checked exe_host_free. */
vkhlo_status_t exe_record_program(vkhlo_executable_t *exe, vkrt_cmd_t *cmd, vkhlo_buffer_t *const *args,
                                  vkhlo_buffer_t *const *results, int64_t *out_copies,
                                  int64_t *out_result_copies) {
  run_t r;
  memset(&r, 0, sizeof r);
  r.exe = exe;
  r.args = args;
  r.results = results;
  r.cmd = cmd;
  r.recording = true;
  r.one_recording = true;
  vkrt_cmd_barrier(cmd);
  vkhlo_status_t st = run_sequence(&r, &exe->main);
  if (!st) st = record_result_copies(&r, false);
  r.recording = false;
  run_release(&r);
  *out_copies = r.copies + r.result_copies;
  *out_result_copies = r.result_copies;
  return st;
}

bool exe_recording_matches(const vkhlo_executable_t *exe, vkhlo_buffer_t *const *args,
                           vkhlo_buffer_t *const *results) {
  return buffers_match_recording(exe, args, results);
}

vkhlo_status_t exe_remember_recording(vkhlo_executable_t *exe, vkhlo_buffer_t *const *args,
                                      vkhlo_buffer_t *const *results) {
  int n = exe->parameter_count + exe->result_count;
  if (!exe->recorded_serials && n) {
    exe->recorded_serials = vkhlo_calloc(exe->allocator, (size_t)n, sizeof(uint64_t));
    if (!exe->recorded_serials) return VKHLO_NO_MEMORY();
  }
  for (int i = 0; i < exe->parameter_count; i++) exe->recorded_serials[i] = vkrt_buffer_id(args[i]->buffer);
  for (int i = 0; i < exe->result_count; i++)
    exe->recorded_serials[exe->parameter_count + i] = vkrt_buffer_id(results[i]->buffer);
  return NULL;
}

vkhlo_status_t vkhlo_executable_execute_into(vkhlo_executable_t *exe, int arg_count,
                                             vkhlo_buffer_t *const *args, int result_count,
                                             vkhlo_buffer_t *const *results) {
  VKHLO_RETURN_IF_ERROR(exe_check_buffers(exe, arg_count, args, result_count, results));
  for (int i = 0; i < exe->check_count; i++) memset(&exe->checks[i].result, 0, sizeof exe->checks[i].result);
  run_t r;
  memset(&r, 0, sizeof r);
  r.exe = exe;
  r.args = args;
  r.results = results;
  r.cmd = exe->cmd;
  vkhlo_status_t st;
  if (exe->recorded_async) { /* exe->cmd holds a submit recording (api/embed.c) */
    exe->recorded = false;
    exe->recorded_async = false;
  }
  if (exe->straight_line && exe->copy_cmd && !exe->profiling) {
    st = run_replayed(&r);
    exe->stats.copy_commands = exe->recorded_copies + r.result_copies;
  } else {
    exe->recorded = false; /* the recording is being replaced */
    exe->stats.recordings++;
    st = run_sequence(&r, &exe->main);
    if (!st) st = record_result_copies(&r, false);
    vkhlo_status_t fst = flush(&r);
    if (!st) st = fst;
    else vkhlo_status_free(fst);
    exe->stats.copy_commands = r.copies + r.result_copies;
  }
  exe->stats.result_copies = r.result_copies;
  exe->stats.submissions = r.submissions;
  run_release(&r);
  exe->stats.executions++;
  if (!st) st = evaluate_checks(&r);
  return st;
}

void vkhlo_executable_set_profiling(vkhlo_executable_t *exe, bool on) {
  exe->profiling = false;
  exe->recorded = false; /* the next execution records afresh either way */
  if (!on) return;
  vkhlo_free(exe->allocator, exe->profile_dispatches);
  vkhlo_free(exe->allocator, exe->profile_ms);
  exe->profile_dispatches = vkhlo_calloc(exe->allocator, (size_t)exe->kernel_count + 1, sizeof *exe->profile_dispatches);
  exe->profile_ms = vkhlo_calloc(exe->allocator, (size_t)exe->kernel_count + 1, sizeof *exe->profile_ms);
  exe->profiling = exe->profile_dispatches && exe->profile_ms; /* out of memory: stays off */
}

int vkhlo_executable_profile(const vkhlo_executable_t *exe, vkhlo_kernel_profile_t *out, int capacity) {
  for (int i = 0; i < exe->kernel_count && i < capacity && out; i++) {
    out[i].kernel = exe->kernels[i].name;
    out[i].dispatches = exe->profile_dispatches ? exe->profile_dispatches[i] : 0;
    out[i].device_ms = exe->profile_ms ? exe->profile_ms[i] : 0;
  }
  return exe->kernel_count;
}

vkhlo_status_t vkhlo_executable_execute(vkhlo_executable_t *exe, int arg_count,
                                        vkhlo_buffer_t *const *args, int result_count,
                                        vkhlo_buffer_t **out_results) {
  for (int i = 0; i < result_count && out_results; i++) out_results[i] = NULL;
  if (result_count != exe->result_count || (result_count && !out_results))
    return VKHLO_INVALID("executable returns %d results, room for %d given", exe->result_count, result_count);
  vkhlo_status_t st = NULL;
  bool reused;
  /* no zeroing: the execution writes them; the device buffers the last
   * recording bound where they are pooled, so that it replays */
  for (int i = 0; i < result_count && !st; i++)
    st = context_buffer_acquire(exe->context, &exe->result_types[i],
                                exe->recorded && exe->recorded_serials ? exe->recorded_serials[exe->parameter_count + i] : 0,
                                &reused, &out_results[i]);
  if (!st) st = vkhlo_executable_execute_into(exe, arg_count, args, result_count, out_results);
  if (st) {
    for (int i = 0; i < result_count; i++) {
      vkhlo_buffer_destroy(out_results[i]);
      out_results[i] = NULL;
    }
  }
  return st;
}
