/*
 * The list scheduler: the order in which lowering (api/lower.c) runs each
 * computation's instructions — the entry computation and every region
 * lowered as a sequence of thunks (while cond and body, if and case
 * branches).  XLA calls the result an HloSchedule; here it is a table from
 * computation to instruction order, and the IR itself is not reordered.
 *
 * The order keeps memory low: a list scheduler over the instruction DAG
 * (schedule_computation) always runs the ready instruction that frees the
 * most bytes net of what it allocates, ties going to the earlier
 * instruction.  Instructions that only rename bytes (parameter, constant,
 * tuple, get_tuple_element, reshape...) run as soon as they are ready.
 * Side-effecting instructions (hlo_instruction_has_side_effect: check,
 * rng, infeed, outfeed, send, recv, custom_call with has_side_effect, and
 * any while / if / case / call whose regions hold one) keep their relative
 * order: each depends on the previous one.  The peak of the list order is
 * simulated and compared with the original order's; the lower wins.
 *
 * The memory model: each non-renaming instruction allocates its result's
 * bytes; those bytes are freed when the last instruction reading them (or
 * a renaming of them) has run, unless they are pinned (returned by the
 * root or read by a check).
 */
#include "api/internal.h"
#include "support/array.h"

#include <stdlib.h>
#include <string.h>

typedef struct sched_node {
  bool renames;      /* produces no new bytes: scheduled as soon as ready */
  bool effect;       /* keeps its order relative to other effects */
  bool pinned;       /* its bytes live to the end (returned or checked) */
  uint64_t alloc;    /* bytes of new buffers (0 when |renames|) */
  int *sources;      /* the allocating nodes whose bytes this value is */
  int source_count;
  int *consumed;     /* allocating nodes whose bytes this node reads */
  int consumed_count;
  int *dependents;   /* nodes with this one among their dependencies */
  int dependent_count, dependent_capacity;
  int deps_left;
  int remaining;     /* consumers of this node's bytes not yet scheduled */
} sched_node_t;

static bool renames_bytes(const hlo_instruction_t *x) {
  switch (x->opcode) {
    case HLO_OPCODE_PARAMETER: case HLO_OPCODE_CONSTANT: case HLO_OPCODE_GET_TUPLE_ELEMENT:
    case HLO_OPCODE_TUPLE: case HLO_OPCODE_OPTIMIZATION_BARRIER: case HLO_OPCODE_CHECK:
    case HLO_OPCODE_AFTER_ALL: case HLO_OPCODE_CREATE_TOKEN:
      return true;
    default:
      return exe_alias_operand(x) >= 0;
  }
}

static uint64_t shape_bytes(const hlo_shape_t *shape) {
  if (!hlo_shape_is_tuple(shape)) return hlo_shape_size_bytes(shape);
  uint64_t n = 0;
  for (int i = 0; i < shape->tuple_count; i++) n += shape_bytes(&shape->tuple_shapes[i]);
  return n;
}

/* Peak bytes of |order| under the model of schedule_computation. */
static uint64_t simulate_peak(const vkhlo_allocator_t *allocator, sched_node_t *nodes, int n, const int *order) {
  int *remaining = vkhlo_malloc(allocator, sizeof(int) * (size_t)(n + 1));
  if (!remaining) return UINT64_MAX;
  for (int i = 0; i < n; i++) remaining[i] = nodes[i].remaining;
  uint64_t live = 0, peak = 0;
  for (int k = 0; k < n; k++) {
    sched_node_t *u = &nodes[order[k]];
    live += u->alloc;
    if (live > peak) peak = live;
    for (int j = 0; j < u->consumed_count; j++) {
      int s = u->consumed[j];
      if (--remaining[s] == 0 && !nodes[s].pinned) live -= nodes[s].alloc;
    }
    if (u->alloc && remaining[order[k]] == 0 && !u->pinned) live -= u->alloc;
  }
  vkhlo_free(allocator, remaining);
  return peak;
}

vkhlo_status_t exe_schedule_computation(const hlo_module_t *module, const hlo_computation_t *c,
                                        const hlo_instruction_t ***out_order) {
  int n = c->instruction_count;
  *out_order = NULL;
  const hlo_instruction_t **result = vkhlo_calloc(module->arena.allocator, (size_t)(n + 1), sizeof *result);
  sched_node_t *nodes = vkhlo_calloc(module->arena.allocator, (size_t)(n + 1), sizeof *nodes);
  int *index = vkhlo_malloc(module->arena.allocator, sizeof(int) * (size_t)(module->next_instruction_id + 1));
  int *order = vkhlo_calloc(module->arena.allocator, (size_t)(n + 1), sizeof(int));
  bool *done = vkhlo_calloc(module->arena.allocator, (size_t)(n + 1), sizeof(bool));
  vkhlo_status_t st = NULL;
  if (!result || !nodes || !index || !order || !done) {
    st = VKHLO_NO_MEMORY();
    goto out;
  }
  for (int i = 0; i < module->next_instruction_id; i++) index[i] = -1;
  for (int i = 0; i < n; i++)
    if (c->instructions[i]->id < module->next_instruction_id) index[c->instructions[i]->id] = i;
  int last_effect = -1;
  for (int i = 0; i < n && !st; i++) {
    const hlo_instruction_t *x = c->instructions[i];
    sched_node_t *u = &nodes[i];
    u->renames = renames_bytes(x);
    u->effect = hlo_instruction_has_side_effect(x);
    u->alloc = u->renames ? 0 : shape_bytes(&x->shape);
    int cap = 0, ccap = 0;
    if (!u->renames && !int_array_push(module->arena.allocator, &u->sources, &u->source_count, &cap, i)) st = VKHLO_NO_MEMORY();
    /* dependencies: operands and the previous effect */
    for (int j = 0; j <= x->operand_count && !st; j++) {
      int d;
      if (j < x->operand_count) {
        const hlo_instruction_t *o = x->operands[j];
        d = o->id < module->next_instruction_id ? index[o->id] : -1;
        if (d < 0 || d >= i) continue; /* not in this computation: no edge */
        sched_node_t *v = &nodes[d];
        for (int k = 0; k < v->source_count && !st; k++) {
          if (u->renames && !int_array_push_unique(module->arena.allocator, &u->sources, &u->source_count, &cap, v->sources[k])) st = VKHLO_NO_MEMORY();
          if (!u->renames && !int_array_push_unique(module->arena.allocator, &u->consumed, &u->consumed_count, &ccap, v->sources[k]))
            st = VKHLO_NO_MEMORY();
          if (x->opcode == HLO_OPCODE_CHECK) nodes[v->sources[k]].pinned = true;
        }
      } else {
        if (!u->effect || last_effect < 0) continue;
        d = last_effect;
      }
      sched_node_t *v = &nodes[d];
      bool seen = false;
      for (int k = 0; k < v->dependent_count; k++) seen |= v->dependents[k] == i;
      if (!seen) {
        if (!int_array_push(module->arena.allocator, &v->dependents, &v->dependent_count, &v->dependent_capacity, i)) st = VKHLO_NO_MEMORY();
        else u->deps_left++;
      }
    }
    if (u->effect) last_effect = i;
    for (int k = 0; k < u->consumed_count; k++) nodes[u->consumed[k]].remaining++;
  }
  if (st) goto out;
  if (c->root && c->root->id < module->next_instruction_id && index[c->root->id] >= 0) {
    sched_node_t *r = &nodes[index[c->root->id]];
    for (int k = 0; k < r->source_count; k++) nodes[r->sources[k]].pinned = true;
  }
  /* the list schedule */
  int *remaining = vkhlo_malloc(module->arena.allocator, sizeof(int) * (size_t)(n + 1));
  if (!remaining) {
    st = VKHLO_NO_MEMORY();
    goto out;
  }
  for (int i = 0; i < n; i++) remaining[i] = nodes[i].remaining;
  for (int k = 0; k < n; k++) {
    int pick = -1;
    int64_t best = 0;
    for (int i = 0; i < n; i++) {
      if (done[i] || nodes[i].deps_left) continue;
      if (nodes[i].renames) {
        pick = i;
        break;
      }
      int64_t score = -(int64_t)nodes[i].alloc;
      for (int j = 0; j < nodes[i].consumed_count; j++) {
        int s = nodes[i].consumed[j];
        if (remaining[s] == 1 && !nodes[s].pinned) score += (int64_t)nodes[s].alloc;
      }
      if (remaining[i] == 0 && !nodes[i].pinned) score += (int64_t)nodes[i].alloc;
      if (pick < 0 || score > best) {
        pick = i;
        best = score;
      }
    }
    if (pick < 0) { /* a cycle cannot happen in verified IR; keep the original order */
      for (int i = 0; i < n; i++) order[i] = i;
      break;
    }
    done[pick] = true;
    order[k] = pick;
    for (int j = 0; j < nodes[pick].consumed_count; j++) remaining[nodes[pick].consumed[j]]--;
    for (int j = 0; j < nodes[pick].dependent_count; j++) nodes[nodes[pick].dependents[j]].deps_left--;
  }
  vkhlo_free(module->arena.allocator, remaining);
  {
    int *identity = vkhlo_calloc(module->arena.allocator, (size_t)(n + 1), sizeof(int));
    if (!identity) {
      st = VKHLO_NO_MEMORY();
      goto out;
    }
    for (int i = 0; i < n; i++) identity[i] = i;
    uint64_t listed = simulate_peak(module->arena.allocator, nodes, n, order), kept = simulate_peak(module->arena.allocator, nodes, n, identity);
    const int *chosen = listed < kept ? order : identity;
    for (int i = 0; i < n; i++) result[i] = c->instructions[chosen[i]];
    vkhlo_free(module->arena.allocator, identity);
  }
  *out_order = result;
  result = NULL;
out:
  for (int i = 0; nodes && i < n; i++) {
    vkhlo_free(module->arena.allocator, nodes[i].sources);
    vkhlo_free(module->arena.allocator, nodes[i].consumed);
    vkhlo_free(module->arena.allocator, nodes[i].dependents);
  }
  vkhlo_free(module->arena.allocator, nodes);
  vkhlo_free(module->arena.allocator, index);
  vkhlo_free(module->arena.allocator, order);
  vkhlo_free(module->arena.allocator, done);
  vkhlo_free(module->arena.allocator, result);
  return st;
}

/* Which computations are lowered as sequences: the entry, and the regions
 * of while / if / case reached from it. */
static vkhlo_status_t add_sequence_computations(exe_schedule_t *s, const hlo_computation_t *c, int capacity) {
  for (int i = 0; i < s->count; i++)
    if (s->computations[i] == c) return NULL;
  if (s->count == capacity) return VKHLO_INTERNAL("computation %s is not in the module", c->name);
  s->computations[s->count++] = c;
  for (int i = 0; i < c->instruction_count; i++) {
    const hlo_instruction_t *x = c->instructions[i];
    if (x->opcode != HLO_OPCODE_WHILE && x->opcode != HLO_OPCODE_IF && x->opcode != HLO_OPCODE_CASE) continue;
    for (int k = 0; k < x->called_count; k++)
      if (x->called_computations[k])
        VKHLO_RETURN_IF_ERROR(add_sequence_computations(s, x->called_computations[k], capacity));
  }
  return NULL;
}

vkhlo_status_t exe_schedule_module(const hlo_module_t *module, exe_schedule_t *out) {
  memset(out, 0, sizeof *out);
  out->allocator = module->arena.allocator;
  const hlo_computation_t *entry = module->entry_computation;
  if (!entry) return VKHLO_INVALID("module has no entry computation");
  int capacity = module->computation_count + 1;
  out->computations = vkhlo_calloc(module->arena.allocator, (size_t)capacity, sizeof *out->computations);
  out->sequences = vkhlo_calloc(module->arena.allocator, (size_t)capacity, sizeof *out->sequences);
  vkhlo_status_t st = out->computations && out->sequences ? NULL : VKHLO_NO_MEMORY();
  if (!st) st = add_sequence_computations(out, entry, capacity);
  for (int i = 0; i < out->count && !st; i++)
    st = exe_schedule_computation(module, out->computations[i], &out->sequences[i]);
  if (st) exe_schedule_free(out);
  return st;
}

const hlo_instruction_t *const *exe_schedule_sequence(const exe_schedule_t *schedule,
                                                      const hlo_computation_t *c) {
  for (int i = 0; i < schedule->count; i++)
    if (schedule->computations[i] == c) return schedule->sequences[i];
  return NULL;
}

void exe_schedule_free(exe_schedule_t *schedule) {
  for (int i = 0; schedule->sequences && i < schedule->count; i++) vkhlo_free(schedule->allocator, schedule->sequences[i]);
  vkhlo_free(schedule->allocator, schedule->sequences);
  vkhlo_free(schedule->allocator, schedule->computations);
  memset(schedule, 0, sizeof *schedule);
}
