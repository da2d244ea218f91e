/*
 * Buffer assignment: gives every logical buffer a slice {allocation,
 * offset, size} of a device allocation (XLA's BufferAssignment), and a
 * checker that proves the result safe.
 *
 * Input: the logical buffers lowering made (api/lower.c), each with a live
 * range [def_position, last_use_position] over the thunk positions of the
 * schedule, and in-place links (an output written into the storage of an
 * input that dies at the same dispatch).
 *
 * Allocations:
 *   - one per entry parameter: the caller's buffer, bound at execution;
 *   - one per result whose value is a temp: the caller's result buffer,
 *     bound at execution, holding that value's whole storage group (the
 *     value and every buffer it was written in place over), so the last
 *     dispatch writes the result where the caller reads it and no copy-out
 *     is recorded.  A result that is a parameter, a constant, or the same
 *     storage as an earlier result is copied out instead;
 *   - constants, packed in lowering's order into as few allocations as
 *     max_allocation_size allows (their bytes are uploaded once);
 *   - temps: the buffers linked in place form one storage group whose live
 *     range is the union of theirs; groups are placed by a heap simulator
 *     in the style of XLA's GlobalDecreasingSizeBestFitHeap: biggest group
 *     first (then longest-lived, then earliest, then lowest id, so the
 *     result is deterministic), at the offset of the smallest free gap
 *     among the groups already placed whose live ranges intersect its own
 *     (best fit in time x offset), or on top of them.  A group that would
 *     push its allocation past max_allocation_size goes to the next
 *     allocation (a new one when none fits).  Offsets are multiples of the
 *     device's minStorageBufferOffsetAlignment.  $VKHLO_MAX_ALLOCATION_BYTES
 *     lowers the allocation limit, for tests.
 *
 * A binding's range (maxStorageBufferRange) limits one buffer, not an
 * allocation: the executor binds each buffer's slice, so allocations may
 * be larger than a binding can be.
 *
 * The checker (exe_verify_buffer_assignment) re-derives everything from
 * the final program, independently of how the placement was found: slices
 * inside their allocations and aligned; every thunk touching a buffer only
 * within its live range (loops included: what a loop reads from outside
 * must live to the loop's end); in-place links only between an input and
 * an output of the same dispatch where the input's range ends; and no two
 * temp buffers live at one position sharing a byte unless linked in
 * place.  vkhlo_executable_compile runs it in debug builds and when
 * VKHLO_CHECK_BUFFERS=1.
 *
 * Not done here: buffer donation (writing into parameters) and sharing
 * bytes between a parameter or constant and a temp.
 */
#include "api/internal.h"
#include "support/array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vkhlo_status_t exe_buffer_limits_for_device(const vkrt_device_t *device, exe_buffer_limits_t *out) {
  const vkrt_caps_t *caps = vkrt_device_caps(device);
  out->alignment = caps->min_storage_buffer_offset_alignment;
  if (out->alignment < 16) out->alignment = 16;
  out->max_allocation_size = caps->max_memory_allocation_size;
  if (out->max_allocation_size == 0) out->max_allocation_size = (uint64_t)1 << 30;
  /* Testing: a smaller limit, to exercise several allocations. */
  uint64_t v;
  VKHLO_RETURN_IF_ERROR(exe_env_uint64("VKHLO_MAX_ALLOCATION_BYTES", out->max_allocation_size, &v));
  if (v < out->alignment)
    return VKHLO_INVALID("$VKHLO_MAX_ALLOCATION_BYTES=%llu is below the offset alignment (%llu bytes)",
                         (unsigned long long)v, (unsigned long long)out->alignment);
  if (v < out->max_allocation_size) out->max_allocation_size = v;
  return NULL;
}

static exe_buffer_allocation_t *new_allocation(vkhlo_executable_t *exe, exe_allocation_kind_t kind) {
  exe_buffer_allocation_t *p =
      vkhlo_realloc(exe->allocator, exe->allocations, sizeof *p * (size_t)(exe->allocation_count + 1));
  if (!p) return NULL;
  exe->allocations = p;
  exe_buffer_allocation_t *a = &p[exe->allocation_count];
  memset(a, 0, sizeof *a);
  a->index = exe->allocation_count++;
  a->kind = kind;
  a->parameter_number = -1;
  a->result_number = -1;
  return a;
}

/* A storage group: a buffer and every buffer written in place over it. */
typedef struct group {
  int root;
  int start, end; /* union of the members' live ranges */
  uint64_t size;  /* aligned */
  int allocation;
  uint64_t offset;
} group_t;

static int compare_groups(const void *pa, const void *pb) {
  const group_t *a = pa, *b = pb;
  if (a->size != b->size) return a->size > b->size ? -1 : 1;
  int la = a->end - a->start, lb = b->end - b->start;
  if (la != lb) return la > lb ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return a->root < b->root ? -1 : a->root > b->root;
}

typedef struct range {
  uint64_t begin, end;
} range_t;

static int compare_ranges(const void *pa, const void *pb) {
  const range_t *a = pa, *b = pb;
  return a->begin < b->begin ? -1 : a->begin > b->begin;
}

static bool in_result_allocation(const vkhlo_executable_t *exe, int id) {
  int a = exe->buffers[id].allocation;
  return a >= 0 && a < exe->allocation_count && exe->allocations[a].kind == EXE_ALLOCATION_RESULT;
}

/* Gives result |r|'s storage group an allocation of its own, the caller's
 * result buffer, when the result is a temp whose group fits in it and no
 * earlier result took that group.  "Fits": no member's own bytes
 * (data_bytes, words for sub-word types) exceed the result's, so nothing
 * is written past the result's last word; the slices' rounded sizes may
 * exceed it (the executor binds at most what the caller's buffer holds,
 * and vkhlo's own buffers are rounded up to 16 bytes too). */
static vkhlo_status_t place_result(vkhlo_executable_t *exe, int r) {
  int id = exe->result_buffers[r];
  if (id < 0 || id >= exe->buffer_count || exe->buffers[id].kind != EXE_BUFFER_TEMP || in_result_allocation(exe, id))
    return NULL;
  int root = exe_storage_buffer(exe, id);
  uint64_t size = vkhlo_tensor_type_size_bytes(&exe->result_types[r]);
  uint64_t words = (size + 3) / 4 * 4;
  for (int i = 0; i < exe->buffer_count; i++)
    if (exe->buffers[i].kind == EXE_BUFFER_TEMP && exe_storage_buffer(exe, i) == root &&
        ((exe->buffers[i].data_bytes + 3) / 4 * 4 > words || exe->buffers[i].size_bytes > exe_result_slot_bytes(size)))
      return NULL;
  exe_buffer_allocation_t *a = new_allocation(exe, EXE_ALLOCATION_RESULT);
  if (!a) return VKHLO_NO_MEMORY();
  a->result_number = r;
  a->maybe_live_out = true;
  for (int i = 0; i < exe->buffer_count; i++) {
    exe_buffer_t *b = &exe->buffers[i];
    if (b->kind != EXE_BUFFER_TEMP || exe_storage_buffer(exe, i) != root) continue;
    b->allocation = a->index;
    b->offset_bytes = 0;
    if (b->size_bytes > a->size) a->size = b->size_bytes;
  }
  return NULL;
}

/* Groups of the temp buffers not placed in result buffers; *out_of_buffer maps buffer id -> group index
 * (-1 for non-temps).  Both heap-allocated. */
static vkhlo_status_t build_groups(const vkhlo_executable_t *exe, uint64_t alignment, group_t **out_groups,
                                   int *out_count, int **out_of_buffer) {
  int n = exe->buffer_count;
  group_t *groups = vkhlo_calloc(exe->allocator, (size_t)n + 1, sizeof *groups);
  int *of = vkhlo_malloc(exe->allocator, sizeof(int) * ((size_t)n + 1));
  if (!groups || !of) {
    vkhlo_free(exe->allocator, groups);
    vkhlo_free(exe->allocator, of);
    return VKHLO_NO_MEMORY();
  }
  int count = 0;
  for (int i = 0; i < n; i++) of[i] = -1;
  for (int i = 0; i < n; i++) {
    const exe_buffer_t *b = &exe->buffers[i];
    if (b->kind != EXE_BUFFER_TEMP || in_result_allocation(exe, i)) continue;
    int root = exe_storage_buffer(exe, i);
    if (of[root] < 0) {
      group_t *g = &groups[count];
      g->root = root;
      g->start = exe->buffers[root].def_position;
      g->end = exe->buffers[root].last_use_position;
      g->size = 0;
      g->allocation = -1;
      of[root] = count++;
    }
    group_t *g = &groups[of[root]];
    of[i] = of[root];
    if (b->def_position < g->start) g->start = b->def_position;
    if (b->last_use_position > g->end) g->end = b->last_use_position;
    uint64_t size = align_up(b->size_bytes, alignment);
    if (size > g->size) g->size = size;
  }
  *out_groups = groups;
  *out_count = count;
  *out_of_buffer = of;
  return NULL;
}

/* Places the sorted |groups| (see the essay). */
static vkhlo_status_t place_groups(vkhlo_executable_t *exe, group_t *groups, int count,
                                   const exe_buffer_limits_t *limits) {
  range_t *busy = vkhlo_malloc(exe->allocator, sizeof *busy * ((size_t)count + 1));
  if (!busy) return VKHLO_NO_MEMORY();
  int first_temp = exe->allocation_count;
  for (int i = 0; i < count; i++) {
    group_t *g = &groups[i];
    if (g->size > limits->max_allocation_size) {
      vkhlo_free(exe->allocator, busy);
      return vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED,
                               "buffer %s of %llu bytes exceeds the device's largest allocation (%llu bytes)",
                               exe->buffers[g->root].name ? exe->buffers[g->root].name : "?",
                               (unsigned long long)g->size, (unsigned long long)limits->max_allocation_size);
    }
    for (int a = first_temp;; a++) {
      if (a == exe->allocation_count && !new_allocation(exe, EXE_ALLOCATION_TEMP)) {
        vkhlo_free(exe->allocator, busy);
        return VKHLO_NO_MEMORY();
      }
      int k = 0;
      for (int j = 0; j < i; j++) {
        const group_t *o = &groups[j];
        if (o->allocation == a && o->start <= g->end && g->start <= o->end)
          busy[k++] = (range_t){o->offset, o->offset + o->size};
      }
      qsort(busy, (size_t)k, sizeof *busy, compare_ranges);
      /* best fit among the gaps; the space above everything otherwise */
      uint64_t cursor = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
      for (int j = 0; j < k; j++) {
        if (busy[j].begin > cursor) {
          uint64_t gap = busy[j].begin - cursor;
          if (gap >= g->size && gap < best_gap) {
            best_gap = gap;
            best = cursor;
          }
        }
        if (busy[j].end > cursor) cursor = busy[j].end;
      }
      if (best == UINT64_MAX) best = cursor;
      if (best + g->size > limits->max_allocation_size) continue;
      g->allocation = a;
      g->offset = best;
      exe_buffer_allocation_t *alloc = &exe->allocations[a];
      if (best + g->size > alloc->size) alloc->size = best + g->size;
      break;
    }
  }
  vkhlo_free(exe->allocator, busy);
  return NULL;
}

vkhlo_status_t exe_assign_buffers(vkhlo_executable_t *exe, const exe_buffer_limits_t *limits) {
  exe->alignment = limits->alignment;
  for (int i = 0; i < exe->allocation_count; i++) vkrt_buffer_destroy(exe->allocations[i].buffer);
  vkhlo_free(exe->allocator, exe->allocations);
  exe->allocations = NULL;
  exe->allocation_count = 0;
  /* parameters */
  for (int p = 0; p < exe->parameter_count; p++) {
    exe_buffer_allocation_t *a = new_allocation(exe, EXE_ALLOCATION_PARAMETER);
    if (!a) return VKHLO_NO_MEMORY();
    a->is_entry_computation_parameter = true;
    a->parameter_number = p;
    a->size = vkhlo_tensor_type_size_bytes(&exe->parameter_types[p]);
  }
  for (int i = 0; i < exe->buffer_count; i++) {
    exe_buffer_t *b = &exe->buffers[i];
    if (b->kind != EXE_BUFFER_PARAMETER) continue;
    if (b->parameter_number < 0 || b->parameter_number >= exe->parameter_count)
      return VKHLO_INTERNAL("buffer %d: parameter number %d out of range", i, b->parameter_number);
    b->allocation = b->parameter_number; /* offset_bytes: 0, or a view's (lowering) */
  }
  /* constants: lowering laid them out in increasing offsets */
  exe_buffer_allocation_t *current = NULL;
  for (int i = 0; i < exe->buffer_count; i++) {
    exe_buffer_t *b = &exe->buffers[i];
    if (b->kind != EXE_BUFFER_CONSTANT) continue;
    if (b->size_bytes > limits->max_allocation_size)
      return vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED,
                               "constant %s of %llu bytes exceeds the device's largest allocation",
                               b->name ? b->name : "?", (unsigned long long)b->size_bytes);
    uint64_t global = b->offset_bytes;
    if (!current || global < current->constant_data_offset ||
        global + b->size_bytes - current->constant_data_offset > limits->max_allocation_size) {
      current = new_allocation(exe, EXE_ALLOCATION_CONSTANT);
      if (!current) return VKHLO_NO_MEMORY();
      current->constant_data_offset = global;
    }
    b->allocation = current->index;
    b->offset_bytes = global - current->constant_data_offset;
    if (b->offset_bytes + b->size_bytes > current->size) current->size = b->offset_bytes + b->size_bytes;
  }
  /* results, then the other temps */
  for (int i = 0; i < exe->buffer_count; i++)
    if (exe->buffers[i].kind == EXE_BUFFER_TEMP) exe->buffers[i].allocation = -1;
  for (int r = 0; r < exe->result_count; r++) VKHLO_RETURN_IF_ERROR(place_result(exe, r));
  group_t *groups;
  int count, *of;
  VKHLO_RETURN_IF_ERROR(build_groups(exe, limits->alignment, &groups, &count, &of));
  qsort(groups, (size_t)count, sizeof *groups, compare_groups);
  vkhlo_status_t st = place_groups(exe, groups, count, limits);
  if (!st) {
    for (int i = 0; i < count; i++) of[groups[i].root] = i;
    for (int i = 0; i < exe->buffer_count; i++) {
      exe_buffer_t *b = &exe->buffers[i];
      if (b->kind != EXE_BUFFER_TEMP || in_result_allocation(exe, i)) continue;
      const group_t *g = &groups[of[exe_storage_buffer(exe, i)]];
      b->allocation = g->allocation;
      b->offset_bytes = g->offset;
    }
    for (int r = 0; r < exe->result_count; r++) {
      const exe_buffer_t *b = &exe->buffers[exe->result_buffers[r]];
      if (b->allocation >= 0) exe->allocations[b->allocation].maybe_live_out = true;
    }
  }
  vkhlo_free(exe->allocator, groups);
  vkhlo_free(exe->allocator, of);
  return st;
}

uint64_t exe_liveness_lower_bound(const vkhlo_executable_t *exe) {
  int positions = exe->position_count + 2;
  int64_t *delta = vkhlo_calloc(exe->allocator, (size_t)positions + 1, sizeof *delta);
  group_t *groups;
  int count, *of;
  vkhlo_status_t st = delta ? build_groups(exe, 1, &groups, &count, &of) : NULL;
  if (!delta || st) { /* out of memory: a statistic, reported as 0 */
    vkhlo_status_free(st);
    vkhlo_free(exe->allocator, delta);
    return 0;
  }
  for (int i = 0; i < count; i++) {
    int s = groups[i].start < 0 ? 0 : groups[i].start;
    int e = groups[i].end >= positions ? positions - 1 : groups[i].end;
    if (e < s) e = s;
    delta[s] += (int64_t)groups[i].size;
    delta[e + 1] -= (int64_t)groups[i].size;
  }
  int64_t live = 0, peak = 0;
  for (int p = 0; p < positions; p++) {
    live += delta[p];
    if (live > peak) peak = live;
  }
  vkhlo_free(exe->allocator, delta);
  vkhlo_free(exe->allocator, groups);
  vkhlo_free(exe->allocator, of);
  return (uint64_t)peak;
}

uint64_t exe_temp_bytes(const vkhlo_executable_t *exe) {
  uint64_t n = 0;
  for (int i = 0; i < exe->allocation_count; i++)
    if (exe->allocations[i].kind == EXE_ALLOCATION_TEMP) n += exe->allocations[i].size;
  return n;
}

/* ------------------------------------------------------------- checker */

typedef struct verifier {
  const vkhlo_executable_t *exe;
  const exe_thunk_t **at; /* thunk at each position */
  int positions;
} verifier_t;

static const char *buffer_name(const vkhlo_executable_t *exe, int id) {
  const char *n = exe->buffers[id].name;
  return n ? n : "?";
}

static vkhlo_status_t check_use(verifier_t *v, int id, int position, const char *what) {
  const vkhlo_executable_t *exe = v->exe;
  if (id < 0 || id >= exe->buffer_count)
    return VKHLO_INTERNAL("buffer assignment: %s at position %d names buffer %d of %d", what, position, id,
                          exe->buffer_count);
  const exe_buffer_t *b = &exe->buffers[id];
  if (b->kind != EXE_BUFFER_TEMP) return NULL;
  if (position < b->def_position || position > b->last_use_position)
    return VKHLO_INTERNAL("buffer assignment: buffer %d (%s) is used by the %s at position %d outside its "
                          "live range [%d, %d]",
                          id, buffer_name(exe, id), what, position, b->def_position, b->last_use_position);
  return NULL;
}

void exe_sequence_span(const exe_sequence_t *seq, int *lo, int *hi) {
  for (int i = 0; seq && i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    if (t->position < *lo) *lo = t->position;
    if (t->position > *hi) *hi = t->position;
    exe_sequence_span(t->cond, lo, hi);
    exe_sequence_span(t->body, lo, hi);
    for (int b = 0; b < t->branch_count; b++) exe_sequence_span(t->branches[b], lo, hi);
  }
}

/* Every temp buffer that the thunks of |seq| touch and that is defined
 * before |lo| must live to |end|. */
static vkhlo_status_t check_loop_reads(verifier_t *v, const exe_sequence_t *seq, int lo, int end) {
  const vkhlo_executable_t *exe = v->exe;
  for (int i = 0; seq && i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    int ids[4] = {-1, -1, -1, -1};
    const int *list = ids;
    int n = 0;
    if (t->kind == EXE_THUNK_DISPATCH || t->kind == EXE_THUNK_HOST) {
      list = t->bindings;
      n = t->binding_count;
    } else if (t->kind == EXE_THUNK_COPY) {
      ids[0] = t->src;
      ids[1] = t->dst;
      n = 2;
    } else if (t->kind == EXE_THUNK_WHILE) {
      ids[0] = t->pred_buffer;
      n = 1;
    } else {
      ids[0] = t->selector_buffer;
      n = 1;
    }
    for (int k = 0; k < n; k++) {
      const exe_buffer_t *b = &exe->buffers[list[k]];
      if (b->kind == EXE_BUFFER_TEMP && b->def_position < lo && b->last_use_position < end)
        return VKHLO_INTERNAL("buffer assignment: buffer %d (%s) is used inside the loop ending at "
                              "position %d but its live range ends at %d",
                              list[k], buffer_name(exe, list[k]), end, b->last_use_position);
    }
    VKHLO_RETURN_IF_ERROR(check_loop_reads(v, t->cond, lo, end));
    VKHLO_RETURN_IF_ERROR(check_loop_reads(v, t->body, lo, end));
    for (int b = 0; b < t->branch_count; b++) VKHLO_RETURN_IF_ERROR(check_loop_reads(v, t->branches[b], lo, end));
  }
  return NULL;
}

static vkhlo_status_t check_sequence(verifier_t *v, const exe_sequence_t *seq) {
  const vkhlo_executable_t *exe = v->exe;
  for (int i = 0; seq && i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    if (t->position < 0 || t->position >= v->positions || v->at[t->position])
      return VKHLO_INTERNAL("buffer assignment: thunk position %d is out of range or repeated", t->position);
    v->at[t->position] = t;
    switch (t->kind) {
      case EXE_THUNK_DISPATCH:
      case EXE_THUNK_HOST:
        for (int b = 0; b < t->binding_count; b++)
          VKHLO_RETURN_IF_ERROR(check_use(v, t->bindings[b], t->position, "dispatch"));
        break;
      case EXE_THUNK_COPY:
        VKHLO_RETURN_IF_ERROR(check_use(v, t->src, t->position, "copy"));
        VKHLO_RETURN_IF_ERROR(check_use(v, t->dst, t->position, "copy"));
        break;
      case EXE_THUNK_WHILE: {
        VKHLO_RETURN_IF_ERROR(check_sequence(v, t->cond));
        VKHLO_RETURN_IF_ERROR(check_sequence(v, t->body));
        int lo = t->position, hi = -1, cond_hi = -1, cond_lo = t->position;
        exe_sequence_span(t->cond, &cond_lo, &cond_hi);
        exe_sequence_span(t->cond, &lo, &hi);
        exe_sequence_span(t->body, &lo, &hi);
        if (hi >= t->position)
          return VKHLO_INTERNAL("buffer assignment: loop at position %d contains a later position", t->position);
        /* the host reads the predicate after the cond's last thunk */
        const exe_buffer_t *pred = &exe->buffers[t->pred_buffer];
        if (pred->kind == EXE_BUFFER_TEMP && pred->last_use_position <= cond_hi)
          return VKHLO_INTERNAL("buffer assignment: loop predicate %s dies at %d, before the host reads it",
                                buffer_name(exe, t->pred_buffer), pred->last_use_position);
        VKHLO_RETURN_IF_ERROR(check_use(v, t->pred_buffer, cond_hi < 0 ? t->position : cond_hi, "loop predicate"));
        VKHLO_RETURN_IF_ERROR(check_loop_reads(v, t->cond, lo, t->position));
        VKHLO_RETURN_IF_ERROR(check_loop_reads(v, t->body, lo, t->position));
        break;
      }
      case EXE_THUNK_CONDITIONAL: {
        int lo = t->position, hi = -1;
        for (int b = 0; b < t->branch_count; b++) {
          VKHLO_RETURN_IF_ERROR(check_sequence(v, t->branches[b]));
          exe_sequence_span(t->branches[b], &lo, &hi);
        }
        /* the selector is read before any branch runs */
        VKHLO_RETURN_IF_ERROR(check_use(v, t->selector_buffer, lo, "conditional selector"));
        VKHLO_RETURN_IF_ERROR(check_use(v, t->selector_buffer, t->position, "conditional selector"));
        break;
      }
    }
  }
  return NULL;
}

static bool binds(const exe_thunk_t *t, int id, int from, int to) {
  for (int i = from; i < to; i++)
    if (t->bindings[i] == id) return true;
  return false;
}

vkhlo_status_t exe_verify_buffer_assignment(const vkhlo_executable_t *exe) {
  uint64_t align = exe->alignment ? exe->alignment : 1;
  int end = exe->position_count - 1;
  /* result allocations: the caller's buffer, one per result, big enough */
  for (int i = 0; i < exe->allocation_count; i++) {
    const exe_buffer_allocation_t *a = &exe->allocations[i];
    if (a->kind != EXE_ALLOCATION_RESULT) continue;
    if (a->result_number < 0 || a->result_number >= exe->result_count)
      return VKHLO_INTERNAL("buffer assignment: result allocation %d names result %d of %d", i, a->result_number,
                            exe->result_count);
    if (a->size > exe_result_slot_bytes(vkhlo_tensor_type_size_bytes(&exe->result_types[a->result_number])))
      return VKHLO_INTERNAL("buffer assignment: result allocation %d needs %llu bytes, result %d has %llu", i,
                            (unsigned long long)a->size, a->result_number,
                            (unsigned long long)vkhlo_tensor_type_size_bytes(&exe->result_types[a->result_number]));
    for (int j = 0; j < i; j++)
      if (exe->allocations[j].kind == EXE_ALLOCATION_RESULT && exe->allocations[j].result_number == a->result_number)
        return VKHLO_INTERNAL("buffer assignment: allocations %d and %d are both result %d", j, i, a->result_number);
  }
  /* slices */
  for (int i = 0; i < exe->buffer_count; i++) {
    const exe_buffer_t *b = &exe->buffers[i];
    if (b->allocation < 0 || b->allocation >= exe->allocation_count)
      return VKHLO_INTERNAL("buffer assignment: buffer %d (%s) has no allocation", i, buffer_name(exe, i));
    const exe_buffer_allocation_t *a = &exe->allocations[b->allocation];
    exe_allocation_kind_t want = b->kind == EXE_BUFFER_PARAMETER ? EXE_ALLOCATION_PARAMETER
                                 : b->kind == EXE_BUFFER_CONSTANT ? EXE_ALLOCATION_CONSTANT
                                                                  : EXE_ALLOCATION_TEMP;
    if (b->kind == EXE_BUFFER_TEMP && a->kind == EXE_ALLOCATION_RESULT) want = a->kind;
    if (a->kind != want)
      return VKHLO_INTERNAL("buffer assignment: buffer %d (%s) is in allocation %d of the wrong kind", i,
                            buffer_name(exe, i), a->index);
    if (b->kind == EXE_BUFFER_PARAMETER) { /* the argument, or a view of part of it */
      if (a->parameter_number != b->parameter_number || b->offset_bytes % EXE_VIEW_ALIGNMENT ||
          b->offset_bytes > a->size || b->data_bytes > a->size - b->offset_bytes)
        return VKHLO_INTERNAL("buffer assignment: parameter buffer %d is not its argument's", i);
      continue;
    }
    if (b->offset_bytes % align != 0)
      return VKHLO_INTERNAL("buffer assignment: buffer %d (%s) at offset %llu is not aligned to %llu", i,
                            buffer_name(exe, i), (unsigned long long)b->offset_bytes, (unsigned long long)align);
    if (b->offset_bytes > a->size || b->size_bytes > a->size - b->offset_bytes)
      return VKHLO_INTERNAL("buffer assignment: buffer %d (%s) [%llu, +%llu) lies outside allocation %d of %llu "
                            "bytes",
                            i, buffer_name(exe, i), (unsigned long long)b->offset_bytes,
                            (unsigned long long)b->size_bytes, a->index, (unsigned long long)a->size);
    if (b->kind == EXE_BUFFER_TEMP && (b->def_position > b->last_use_position || b->last_use_position > end))
      return VKHLO_INTERNAL("buffer assignment: buffer %d (%s) has live range [%d, %d]", i, buffer_name(exe, i),
                            b->def_position, b->last_use_position);
  }
  /* uses inside live ranges; positions -> thunks */
  verifier_t v = {exe, vkhlo_calloc(exe->allocator, (size_t)exe->position_count + 1, sizeof(exe_thunk_t *)), exe->position_count};
  if (!v.at) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = check_sequence(&v, &exe->main);
  for (int r = 0; r < exe->result_count && !st; r++)
    st = check_use(&v, exe->result_buffers[r], end, "result copy");
  for (int c = 0; c < exe->check_count && !st; c++) {
    st = check_use(&v, exe->checks[c].actual, end, "check");
    if (!st) st = check_use(&v, exe->checks[c].expected, end, "check");
  }
  /* in-place links */
  for (int i = 0; i < exe->buffer_count && !st; i++) {
    const exe_buffer_t *b = &exe->buffers[i];
    if (b->inplace_of < 0) continue;
    int a_id = b->inplace_of;
    const exe_buffer_t *a = a_id < exe->buffer_count ? &exe->buffers[a_id] : NULL;
    const exe_thunk_t *t = b->def_position >= 0 && b->def_position < v.positions ? v.at[b->def_position] : NULL;
    if (!a || a->kind != EXE_BUFFER_TEMP || b->kind != EXE_BUFFER_TEMP || a_id == i)
      st = VKHLO_INTERNAL("buffer assignment: buffer %d (%s) reuses a buffer that is not a temp", i,
                          buffer_name(exe, i));
    else if (a->allocation != b->allocation || a->offset_bytes != b->offset_bytes || b->size_bytes > a->size_bytes)
      st = VKHLO_INTERNAL("buffer assignment: buffer %d (%s) is in place over %d (%s) but not at its slice", i,
                          buffer_name(exe, i), a_id, buffer_name(exe, a_id));
    else if (a->last_use_position != b->def_position)
      st = VKHLO_INTERNAL("buffer assignment: buffer %d (%s) is written in place over %d (%s) at %d, which "
                          "lives until %d",
                          i, buffer_name(exe, i), a_id, buffer_name(exe, a_id), b->def_position,
                          a->last_use_position);
    else if (!t || t->kind != EXE_THUNK_DISPATCH || !binds(t, a_id, 0, t->input_count) ||
             !binds(t, i, t->input_count, t->binding_count))
      st = VKHLO_INTERNAL("buffer assignment: buffer %d (%s) is in place over %d (%s) but the thunk at %d does "
                          "not read one and write the other",
                          i, buffer_name(exe, i), a_id, buffer_name(exe, a_id), b->def_position);
  }
  vkhlo_free(exe->allocator, v.at);
  if (st) return st;
  /* interference */
  for (int i = 0; i < exe->buffer_count; i++) {
    const exe_buffer_t *a = &exe->buffers[i];
    if (a->kind != EXE_BUFFER_TEMP) continue;
    for (int j = i + 1; j < exe->buffer_count; j++) {
      const exe_buffer_t *b = &exe->buffers[j];
      if (b->kind != EXE_BUFFER_TEMP || a->allocation != b->allocation) continue;
      if (a->def_position > b->last_use_position || b->def_position > a->last_use_position) continue;
      if (a->offset_bytes >= b->offset_bytes + b->size_bytes || b->offset_bytes >= a->offset_bytes + a->size_bytes)
        continue;
      if (a->inplace_of == j || b->inplace_of == i) continue;
      return VKHLO_INTERNAL("buffer assignment: buffers %d (%s, [%d, %d]) and %d (%s, [%d, %d]) are live at "
                            "the same time and overlap in allocation %d ([%llu, +%llu) and [%llu, +%llu))",
                            i, buffer_name(exe, i), a->def_position, a->last_use_position, j, buffer_name(exe, j),
                            b->def_position, b->last_use_position, a->allocation,
                            (unsigned long long)a->offset_bytes, (unsigned long long)a->size_bytes,
                            (unsigned long long)b->offset_bytes, (unsigned long long)b->size_bytes);
    }
  }
  return NULL;
}
