/*
 * interpreter.run_parallel: the processes of a StableHLO process grid as
 * one program (spec "Parallel execution", "Collective ops").
 *
 * The reference interpreter's test op runs program (r, p) of a
 * num_replicas x num_partitions grid on each process, each on its own
 * arguments, the processes meeting at their collectives.  vkhlo runs one
 * program on one device, so the grid becomes one program: each process's
 * instructions are copied into the caller, and each collective is joined
 * with the ones of the processes it communicates with into an op that
 * takes all of their operands (hlo_attrs_t's group_size / group_index; the
 * expand pass turns it into concatenates, slices and maps), or directly
 * into the value a process receives.
 *
 * How.  The processes are copied in lockstep, as the interpreter runs
 * them: each one is copied up to its next collective (or recv), where it
 * waits; a collective completes when every process of its group waits at
 * one of the same kind and channel, and then all of them go on.  So every
 * copy's operands are copied before it (the def-before-use order of the
 * caller is kept), and a grid whose processes would wait for each other
 * forever is an error at the op where the first one waits.  send does not
 * wait: it queues its operands on its channel, and recv takes the oldest
 * queued send of its channel.
 *
 * Process groups (which processes meet at a collective) follow the spec:
 * cross_replica, cross_partition, cross_replica_and_partition or
 * flattened_ids, from the op's kind, channel_id and use_global_device_ids;
 * replica_groups padded with -1 (ragged groups) drop the padding, and no
 * groups at all mean one group of every id.
 *
 * What it does not do.  Collectives, replica_id, partition_id, send / recv
 * and infeed inside a region (a while body, an if branch) are refused: the
 * lockstep copy works at the top level of each program.  outfeed's values
 * go nowhere (nothing in a program reads them back): its token is passed
 * on.  Memory comes from the module's arena; nothing is freed.
 */
#include "hlo/hlo.h"

#include <string.h>

typedef struct process {
  const hlo_computation_t *program;
  int result_count;
  hlo_instruction_t *const *args;
  int next;                           /* index of the next instruction to copy */
  hlo_instruction_t **value;          /* copies: parameters first, then instructions */
  const hlo_instruction_t *waiting;   /* the collective it waits at, or NULL */
} process_t;

typedef struct queued_send {
  int64_t channel;
  const hlo_instruction_t *op;
  int process;
  bool taken;
} queued_send_t;

typedef struct run {
  hlo_module_t *m;
  hlo_computation_t *caller;
  const hlo_run_parallel_t *rp;
  int count; /* processes */
  process_t *procs;
  int *slot_of_id; /* instruction id -> its slot in process_t.value */
  queued_send_t *sends;
  int send_count;
  int next_infeed;
  /* scratch of a collective's completion, |count| entries each */
  int *members, *other;
  hlo_instruction_t **received;
} run_t;

static void *run_alloc(run_t *R, size_t size) { return arena_alloc(&R->m->arena, size ? size : 1); }

static bool is_rendezvous(hlo_opcode_t op) {
  switch (op) {
    case HLO_OPCODE_ALL_GATHER: case HLO_OPCODE_ALL_REDUCE: case HLO_OPCODE_REDUCE_SCATTER:
    case HLO_OPCODE_ALL_TO_ALL: case HLO_OPCODE_COLLECTIVE_BROADCAST: case HLO_OPCODE_COLLECTIVE_PERMUTE:
    case HLO_OPCODE_COLLECTIVE_REDUCE: case HLO_OPCODE_RECV:
      return true;
    default: return false;
  }
}

static bool depends_on_process(hlo_opcode_t op) {
  return is_rendezvous(op) || op == HLO_OPCODE_SEND || op == HLO_OPCODE_INFEED ||
         op == HLO_OPCODE_OUTFEED || op == HLO_OPCODE_REPLICA_ID || op == HLO_OPCODE_PARTITION_ID;
}

/* The first process-dependent op in |c| or the computations it calls. */
static const hlo_instruction_t *process_op_in(const hlo_computation_t *c, int depth) {
  if (depth > 64) return NULL;
  for (int i = 0; i < c->instruction_count; i++) {
    const hlo_instruction_t *in = c->instructions[i];
    if (depends_on_process(in->opcode)) return in;
    for (int k = 0; k < in->called_count; k++) {
      const hlo_instruction_t *f = process_op_in(in->called_computations[k], depth + 1);
      if (f) return f;
    }
  }
  return NULL;
}

static hlo_instruction_t *mapped(const run_t *R, const process_t *P, const hlo_instruction_t *in) {
  return P->value[R->slot_of_id[in->id]];
}

static vkhlo_status_t append(run_t *R, hlo_instruction_t *copy) {
  if (!copy || !hlo_computation_append(R->m, R->caller, copy)) return VKHLO_NO_MEMORY();
  return NULL;
}

/* A new instruction like |like| (opcode, shape, attributes, called
 * computations, location) with |n| operands |ops|, appended. */
static vkhlo_status_t append_like(run_t *R, const hlo_instruction_t *like, int n, hlo_instruction_t *const *ops,
                                  hlo_instruction_t **out) {
  hlo_instruction_t *c = hlo_instruction_create(R->m, like->opcode, &like->shape, n, ops);
  if (!c) return VKHLO_NO_MEMORY();
  c->attrs = like->attrs;
  c->loc = like->loc;
  if (!hlo_instruction_set_called(R->m, c, like->called_count, like->called_computations)) return VKHLO_NO_MEMORY();
  *out = c;
  return append(R, c);
}

/* |n| values as one of |shape| (a tuple when n != 1). */
static vkhlo_status_t as_result(run_t *R, const hlo_shape_t *shape, int n, hlo_instruction_t *const *v,
                                hlo_instruction_t **out) {
  if (n == 1 && !hlo_shape_is_tuple(shape)) {
    *out = v[0];
    return NULL;
  }
  hlo_instruction_t *t = hlo_instruction_create(R->m, HLO_OPCODE_TUPLE, shape, n, v);
  *out = t;
  return append(R, t);
}

/* Zeros of |shape| (every element of a tuple), appended. */
static vkhlo_status_t zeros(run_t *R, const hlo_shape_t *shape, hlo_instruction_t **out) {
  if (!hlo_shape_is_tuple(shape)) {
    *out = hlo_constant_create(R->m, shape, NULL);
    return append(R, *out);
  }
  hlo_instruction_t **v = run_alloc(R, sizeof(void *) * (size_t)shape->tuple_count);
  if (!v) return VKHLO_NO_MEMORY();
  for (int k = 0; k < shape->tuple_count; k++) {
    vkhlo_status_t st = zeros(R, &shape->tuple_shapes[k], &v[k]);
    if (st) return st;
  }
  return as_result(R, shape, shape->tuple_count, v, out);
}

/* ------------------------------------------------------ process groups */

typedef enum { CROSS_REPLICA, CROSS_PARTITION, CROSS_REPLICA_AND_PARTITION, FLATTENED_IDS } grouping_t;

static vkhlo_status_t grouping_of(const hlo_instruction_t *in, grouping_t *g) {
  bool channel = in->attrs.channel_id > 0, global = in->attrs.use_global_device_ids;
  switch (in->opcode) {
    case HLO_OPCODE_ALL_GATHER: case HLO_OPCODE_ALL_REDUCE: case HLO_OPCODE_REDUCE_SCATTER:
      if (global && !channel)
        return hlo_error_at(in->loc, "stablehlo.%s: use_global_device_ids needs a channel_id > 0",
                            hlo_opcode_name(in->opcode));
      *g = !channel ? CROSS_REPLICA : global ? FLATTENED_IDS : CROSS_REPLICA_AND_PARTITION;
      return NULL;
    default: /* all_to_all, collective_broadcast, collective_permute, collective_reduce */
      *g = channel ? CROSS_PARTITION : CROSS_REPLICA;
      return NULL;
  }
}

/* The group of process |pid| at |in| (process ids, in the group's order)
 * into |out| (R->count entries); returns its size, 0 when |pid| is in none. */
static int group_of(const run_t *R, const hlo_instruction_t *in, grouping_t g, int pid, int *out) {
  int np = R->rp->num_partitions, nr = R->rp->num_replicas;
  int r = pid / np, p = pid % np;
  const hlo_dims_t *ids = &in->attrs.replica_groups;
  int64_t cols = in->attrs.replica_groups_cols > 0 ? in->attrs.replica_groups_cols : ids->count;
  int64_t rows = cols ? ids->count / cols : 0;
  int64_t own = g == CROSS_PARTITION ? p : g == FLATTENED_IDS ? pid : r;
  int64_t span = g == CROSS_PARTITION ? np : g == FLATTENED_IDS ? R->count : nr;
  int n = 0;
  for (int64_t row = 0; row < (rows ? rows : 1); row++) {
    bool mine = false;
    for (int64_t c = 0; c < (rows ? cols : span); c++) mine |= (rows ? ids->data[row * cols + c] : c) == own;
    if (!mine) continue;
    int64_t width = rows ? cols : span;
    int outer = g == CROSS_REPLICA_AND_PARTITION ? np : 1;
    for (int q = 0; q < outer; q++)
      for (int64_t c = 0; c < width; c++) {
        int64_t id = rows ? ids->data[row * cols + c] : c;
        if (id < 0 || id >= span) continue; /* -1 pads a ragged group (range: checked by the caller) */
        int member = g == CROSS_REPLICA                 ? (int)id * np + p
                     : g == CROSS_PARTITION             ? r * np + (int)id
                     : g == CROSS_REPLICA_AND_PARTITION ? (int)id * np + q
                                                        : (int)id;
        if (n < R->count) out[n++] = member;
      }
    return n;
  }
  return 0;
}

/* Ids of |in|'s replica_groups (or source_target_pairs) that no grid
 * takes (hlo_collective_ids_problem), or that are neither -1 nor in the
 * grid's range of |g|, make an error. */
static vkhlo_status_t check_ids(const run_t *R, const hlo_instruction_t *in, grouping_t g) {
  char why[160];
  if (hlo_collective_ids_problem(in, why, sizeof why))
    return hlo_error_at(in->loc, "stablehlo.%s: %s", hlo_opcode_name(in->opcode), why);
  int64_t span = g == CROSS_PARTITION ? R->rp->num_partitions : g == FLATTENED_IDS ? R->count : R->rp->num_replicas;
  const hlo_dims_t *ids = in->opcode == HLO_OPCODE_COLLECTIVE_PERMUTE ? &in->attrs.source_target_pairs
                                                                     : &in->attrs.replica_groups;
  for (int i = 0; i < ids->count; i++)
    if (ids->data[i] < -1 || ids->data[i] >= span || (ids->data[i] == -1 && in->opcode == HLO_OPCODE_COLLECTIVE_PERMUTE))
      return hlo_error_at(in->loc, "stablehlo.%s: id %lld is outside the grid (%d replicas x %d partitions)",
                          hlo_opcode_name(in->opcode), (long long)ids->data[i], R->rp->num_replicas,
                          R->rp->num_partitions);
  return NULL;
}

/* |in|'s grouping, its ids checked against the grid. */
static vkhlo_status_t checked_grouping(const run_t *R, const hlo_instruction_t *in, grouping_t *g) {
  vkhlo_status_t st = grouping_of(in, g);
  return st ? st : check_ids(R, in, *g);
}

/* ---------------------------------------------------- completing a step */

/* Whether process |q| waits at a collective that meets |in|. */
static bool waits_with(const run_t *R, int q, const hlo_instruction_t *in) {
  const hlo_instruction_t *w = R->procs[q].waiting;
  return w && w->opcode == in->opcode && w->attrs.channel_id == in->attrs.channel_id;
}

static void finish(run_t *R, int q, hlo_instruction_t *value) {
  process_t *Q = &R->procs[q];
  Q->value[R->slot_of_id[Q->waiting->id]] = value;
  Q->waiting = NULL;
  Q->next++;
}

/* collective_permute: |pid| receives from the source paired with it in
 * its line of the grid (replicas of its partition, or partitions of its
 * replica); the processes paired in that line meet. */
static vkhlo_status_t try_permute(run_t *R, int pid, bool *done) {
  const hlo_instruction_t *in = R->procs[pid].waiting;
  grouping_t g;
  vkhlo_status_t st = checked_grouping(R, in, &g);
  if (st) return st;
  int np = R->rp->num_partitions;
  int r = pid / np, p = pid % np;
  const hlo_dims_t *pairs = &in->attrs.source_target_pairs;
  int *line = R->members, n = 0;
  line[n++] = pid;
  bool paired = false; /* a process in no pair meets no one and receives zeros */
  for (int i = 0; i < pairs->count; i++) paired |= pairs->data[i] == (g == CROSS_REPLICA ? r : p);
  for (int i = 0; paired && i < pairs->count; i++) {
    int q = g == CROSS_REPLICA ? (int)pairs->data[i] * np + p : r * np + (int)pairs->data[i];
    bool seen = false;
    for (int k = 0; k < n; k++) seen |= line[k] == q;
    if (!seen) line[n++] = q;
  }
  for (int k = 0; k < n; k++)
    if (!waits_with(R, line[k], in)) return NULL;
  hlo_instruction_t **value = R->received;
  for (int k = 0; k < n; k++) { /* every value before any process moves on */
    const hlo_instruction_t *w = R->procs[line[k]].waiting;
    int own = g == CROSS_REPLICA ? line[k] / np : line[k] % np, source = -1;
    for (int i = 0; i + 1 < w->attrs.source_target_pairs.count; i += 2)
      if (w->attrs.source_target_pairs.data[i + 1] == own) source = (int)w->attrs.source_target_pairs.data[i];
    int s = source < 0 ? -1 : g == CROSS_REPLICA ? source * np + line[k] % np : (line[k] / np) * np + source;
    if (s < 0) {
      st = zeros(R, &w->shape, &value[k]);
      if (st) return st;
      continue;
    }
    const hlo_instruction_t *from = R->procs[s].waiting;
    if (!hlo_shape_equal(&from->operands[0]->shape, &w->shape))
      return hlo_error_at(w->loc, "stablehlo.collective_permute: process %d sends a value of another type", s);
    value[k] = mapped(R, &R->procs[s], from->operands[0]);
  }
  for (int k = 0; k < n; k++) finish(R, line[k], value[k]);
  *done = true;
  return NULL;
}

/* collective_broadcast with a static root: a group's processes receive the
 * first member's operands; a process in no group receives zeros. */
static vkhlo_status_t broadcast_value(run_t *R, const int *group, int k, hlo_instruction_t **out) {
  const hlo_instruction_t *w = R->procs[group[k]].waiting, *root = R->procs[group[0]].waiting;
  int values = w->operand_count;
  if (root->operand_count != values) return hlo_error_at(w->loc, "stablehlo.collective_broadcast: the group's "
                                                                 "processes pass different operand counts");
  hlo_instruction_t **v = run_alloc(R, sizeof(void *) * (size_t)values);
  if (!v) return VKHLO_NO_MEMORY();
  for (int i = 0; i < values; i++) v[i] = mapped(R, &R->procs[group[0]], root->operands[i]);
  return as_result(R, &w->shape, values, v, out);
}

/* The group's collectives as linked ops (see hlo.h, group_size): process
 * |k| of the group gets its own op over every member's operands. */
static vkhlo_status_t linked_value(run_t *R, const int *group, int n, int k, hlo_instruction_t **out) {
  const hlo_instruction_t *w = R->procs[group[k]].waiting;
  bool dynamic = hlo_collective_has_dynamic_root(w);
  int per = w->operand_count - (dynamic ? 1 : 0);
  int total = per * n + (dynamic ? 1 : 0);
  hlo_instruction_t **ops = run_alloc(R, sizeof(void *) * (size_t)total);
  if (!ops) return VKHLO_NO_MEMORY();
  for (int j = 0; j < n; j++) {
    const hlo_instruction_t *o = R->procs[group[j]].waiting;
    if (o->operand_count != w->operand_count)
      return hlo_error_at(w->loc, "stablehlo.%s: process %d passes %d operands, process %d %d",
                          hlo_opcode_name(w->opcode), group[k], w->operand_count, group[j], o->operand_count);
    for (int i = 0; i < per; i++) {
      if (!hlo_shape_equal(&o->operands[i]->shape, &w->operands[i]->shape))
        return hlo_error_at(w->loc, "stablehlo.%s: processes %d and %d pass operand %d of different types",
                            hlo_opcode_name(w->opcode), group[k], group[j], i);
      ops[j * per + i] = mapped(R, &R->procs[group[j]], o->operands[i]);
    }
  }
  if (dynamic) ops[total - 1] = mapped(R, &R->procs[group[k]], w->operands[per]);
  hlo_instruction_t *c = NULL;
  vkhlo_status_t st = append_like(R, w, total, ops, &c);
  if (st) return st;
  c->attrs.group_size = n;
  c->attrs.group_index = k;
  *out = c;
  return NULL;
}

/* all_gather, all_reduce, reduce_scatter, all_to_all, collective_broadcast,
 * collective_reduce: the processes of |pid|'s group meet. */
static vkhlo_status_t try_group(run_t *R, int pid, bool *done) {
  const hlo_instruction_t *in = R->procs[pid].waiting;
  grouping_t g;
  vkhlo_status_t st = checked_grouping(R, in, &g);
  if (st) return st;
  int *group = R->members, *other = R->other;
  int n = group_of(R, in, g, pid, group);
  if (n == 0) {
    if (in->opcode != HLO_OPCODE_COLLECTIVE_BROADCAST && in->opcode != HLO_OPCODE_COLLECTIVE_REDUCE)
      return hlo_error_at(in->loc, "stablehlo.%s: process %d (replica %d, partition %d) is in no process group",
                          hlo_opcode_name(in->opcode), pid, pid / R->rp->num_partitions,
                          pid % R->rp->num_partitions);
    hlo_instruction_t *z;
    st = zeros(R, &in->shape, &z);
    if (st) return st;
    finish(R, pid, z);
    *done = true;
    return NULL;
  }
  for (int k = 0; k < n; k++) {
    if (!waits_with(R, group[k], in)) return NULL;
    grouping_t gk;
    st = grouping_of(R->procs[group[k]].waiting, &gk);
    if (st) return st;
    int m = group_of(R, R->procs[group[k]].waiting, gk, group[k], other);
    if (m != n || memcmp(other, group, sizeof(int) * (size_t)n) != 0)
      return hlo_error_at(in->loc, "stablehlo.%s: processes %d and %d disagree about their process group",
                          hlo_opcode_name(in->opcode), pid, group[k]);
  }
  hlo_instruction_t **value = R->received;
  for (int k = 0; k < n; k++) {
    bool copy = in->opcode == HLO_OPCODE_COLLECTIVE_BROADCAST && !in->attrs.has_dynamic_root;
    st = copy ? broadcast_value(R, group, k, &value[k]) : linked_value(R, group, n, k, &value[k]);
    if (st) return st;
  }
  for (int k = 0; k < n; k++) finish(R, group[k], value[k]);
  *done = true;
  return NULL;
}

/* recv: the oldest send queued on its channel. */
static vkhlo_status_t try_recv(run_t *R, int pid, bool *done) {
  process_t *P = &R->procs[pid];
  const hlo_instruction_t *in = P->waiting;
  queued_send_t *s = NULL;
  for (int i = 0; i < R->send_count && !s; i++)
    if (!R->sends[i].taken && R->sends[i].channel == in->attrs.channel_id) s = &R->sends[i];
  if (!s) return NULL;
  int values = s->op->operand_count - 1; /* the last operand is the token */
  if (!hlo_shape_is_tuple(&in->shape) || in->shape.tuple_count != values + 1)
    return hlo_error_at(in->loc, "stablehlo.recv: receives %d values but the send at %s:%d:%d sends %d",
                        hlo_shape_is_tuple(&in->shape) ? in->shape.tuple_count - 1 : 0, s->op->loc.file,
                        s->op->loc.line, s->op->loc.col, values);
  hlo_instruction_t **v = run_alloc(R, sizeof(void *) * (size_t)(values + 1));
  if (!v) return VKHLO_NO_MEMORY();
  for (int i = 0; i < values; i++) {
    if (!hlo_shape_equal(&in->shape.tuple_shapes[i], &s->op->operands[i]->shape))
      return hlo_error_at(in->loc, "stablehlo.recv: value %d's type differs from what the send at %s:%d:%d sends",
                          i, s->op->loc.file, s->op->loc.line, s->op->loc.col);
    v[i] = mapped(R, &R->procs[s->process], s->op->operands[i]);
  }
  v[values] = mapped(R, P, in->operands[in->operand_count - 1]);
  hlo_instruction_t *t;
  vkhlo_status_t st = as_result(R, &in->shape, values + 1, v, &t);
  if (st) return st;
  s->taken = true;
  finish(R, pid, t);
  *done = true;
  return NULL;
}

/* ------------------------------------------------------- copying */

static vkhlo_status_t copy_infeed(run_t *R, process_t *P, const hlo_instruction_t *in, hlo_instruction_t **out) {
  const hlo_run_parallel_t *rp = R->rp;
  if (R->next_infeed >= rp->infeed_count)
    return hlo_error_at(in->loc, "stablehlo.infeed: run_parallel's infeed list has %d functions, all taken",
                        rp->infeed_count);
  int f = R->next_infeed++;
  const hlo_computation_t *fn = rp->infeed[f];
  int nres = rp->infeed_result_counts[f];
  if (fn->parameter_count != 0)
    return hlo_error_at(in->loc, "stablehlo.infeed: infeed function '@%s' must take no arguments", fn->name);
  int values = hlo_shape_is_tuple(&in->shape) ? in->shape.tuple_count - 1 : 0;
  if (nres != values)
    return hlo_error_at(in->loc, "stablehlo.infeed: gives %d values but infeed function '@%s' returns %d", values,
                        fn->name, nres);
  hlo_instruction_t **v = run_alloc(R, sizeof(void *) * (size_t)(values + 1));
  if (!v) return VKHLO_NO_MEMORY();
  if (values && !hlo_computation_inline(R->m, R->caller, fn, NULL, nres != 1, v)) return VKHLO_NO_MEMORY();
  for (int i = 0; i < values; i++)
    if (!hlo_shape_equal(&v[i]->shape, &in->shape.tuple_shapes[i]))
      return hlo_error_at(in->loc, "stablehlo.infeed: value %d's type differs from what '@%s' returns", i, fn->name);
  v[values] = mapped(R, P, in->operands[0]);
  return as_result(R, &in->shape, values + 1, v, out);
}

static vkhlo_status_t process_id_constant(run_t *R, const hlo_instruction_t *in, uint32_t id,
                                          hlo_instruction_t **out) {
  if (in->shape.element_type != HLO_U32 || in->shape.rank != 0)
    return hlo_error_at(in->loc, "stablehlo.%s must be a tensor<ui32>", hlo_opcode_name(in->opcode));
  *out = hlo_constant_create(R->m, &in->shape, &id);
  return append(R, *out);
}

/* Copies process |pid|'s instructions up to its next collective (or to
 * the end). */
static vkhlo_status_t advance(run_t *R, int pid, bool *progress) {
  process_t *P = &R->procs[pid];
  const hlo_computation_t *c = P->program;
  const hlo_instruction_t *root = c->root;
  bool skip_root = P->result_count != 1 && root && root->opcode == HLO_OPCODE_TUPLE;
  while (!P->waiting && P->next < c->instruction_count) {
    const hlo_instruction_t *in = c->instructions[P->next];
    hlo_instruction_t *v = NULL;
    vkhlo_status_t st = NULL;
    if (in->opcode == HLO_OPCODE_PARAMETER || (skip_root && in == root)) {
      P->next++;
      continue;
    }
    for (int k = 0; k < in->called_count; k++) {
      const hlo_instruction_t *f = process_op_in(in->called_computations[k], 0);
      if (f)
        return hlo_error_at(f->loc, "stablehlo.%s inside a region of a run_parallel program: the processes meet "
                            "only at the top level of their functions", hlo_opcode_name(f->opcode));
    }
    if (is_rendezvous(in->opcode)) {
      P->waiting = in;
      *progress = true;
      return NULL;
    }
    int np = R->rp->num_partitions;
    switch (in->opcode) {
      case HLO_OPCODE_REPLICA_ID: st = process_id_constant(R, in, (uint32_t)(pid / np), &v); break;
      case HLO_OPCODE_PARTITION_ID: st = process_id_constant(R, in, (uint32_t)(pid % np), &v); break;
      case HLO_OPCODE_INFEED: st = copy_infeed(R, P, in, &v); break;
      case HLO_OPCODE_OUTFEED: v = mapped(R, P, in->operands[in->operand_count - 1]); break;
      case HLO_OPCODE_SEND:
        R->sends[R->send_count++] = (queued_send_t){in->attrs.channel_id, in, pid, false};
        v = mapped(R, P, in->operands[in->operand_count - 1]);
        break;
      default: {
        hlo_instruction_t *small[8], **ops = small;
        if (in->operand_count > 8 && !(ops = run_alloc(R, sizeof(void *) * (size_t)in->operand_count)))
          return VKHLO_NO_MEMORY();
        for (int k = 0; k < in->operand_count; k++) ops[k] = mapped(R, P, in->operands[k]);
        v = hlo_instruction_clone(R->m, in, ops);
        st = append(R, v);
      }
    }
    if (st) return st;
    P->value[R->slot_of_id[in->id]] = v;
    P->next++;
    *progress = true;
  }
  return NULL;
}

static vkhlo_status_t start(run_t *R) {
  const hlo_run_parallel_t *rp = R->rp;
  R->count = rp->num_replicas * rp->num_partitions;
  R->procs = run_alloc(R, sizeof(process_t) * (size_t)R->count);
  R->slot_of_id = run_alloc(R, sizeof(int) * (size_t)(R->m->next_instruction_id + 1));
  R->members = run_alloc(R, sizeof(int) * (size_t)R->count);
  R->other = run_alloc(R, sizeof(int) * (size_t)R->count);
  R->received = run_alloc(R, sizeof(void *) * (size_t)R->count);
  if (!R->procs || !R->slot_of_id || !R->members || !R->other || !R->received) return VKHLO_NO_MEMORY();
  int sends = 0, arg = 0;
  for (int i = 0; i < R->count; i++) {
    const hlo_computation_t *c = rp->programs[i];
    process_t *P = &R->procs[i];
    *P = (process_t){.program = c, .result_count = rp->result_counts[i], .args = rp->args ? rp->args + arg : NULL};
    arg += c->parameter_count;
    P->value = run_alloc(R, sizeof(void *) * (size_t)(c->parameter_count + c->instruction_count));
    if (!P->value) return VKHLO_NO_MEMORY();
    for (int k = 0; k < c->parameter_count; k++) {
      R->slot_of_id[c->parameters[k]->id] = k;
      P->value[k] = P->args[k];
    }
    for (int k = 0; k < c->instruction_count; k++) {
      const hlo_instruction_t *in = c->instructions[k];
      if (in->opcode != HLO_OPCODE_PARAMETER) R->slot_of_id[in->id] = c->parameter_count + k;
      sends += in->opcode == HLO_OPCODE_SEND;
    }
  }
  R->sends = run_alloc(R, sizeof(queued_send_t) * (size_t)sends);
  return R->sends ? NULL : VKHLO_NO_MEMORY();
}

vkhlo_status_t hlo_run_parallel(hlo_module_t *m, hlo_computation_t *caller, const hlo_run_parallel_t *rp,
                                hlo_instruction_t **results) {
  run_t R = {.m = m, .caller = caller, .rp = rp};
  vkhlo_status_t st = start(&R);
  if (st) return st;
  for (;;) {
    bool progress = false, finished = true;
    for (int i = 0; i < R.count; i++)
      if ((st = advance(&R, i, &progress))) return st;
    for (int i = 0; i < R.count; i++) {
      const hlo_instruction_t *w = R.procs[i].waiting;
      if (!w) continue;
      bool done = false;
      st = w->opcode == HLO_OPCODE_RECV                  ? try_recv(&R, i, &done)
           : w->opcode == HLO_OPCODE_COLLECTIVE_PERMUTE ? try_permute(&R, i, &done)
                                                        : try_group(&R, i, &done);
      if (st) return st;
      progress |= done;
    }
    for (int i = 0; i < R.count; i++)
      finished &= !R.procs[i].waiting && R.procs[i].next >= R.procs[i].program->instruction_count;
    if (finished) break;
    if (!progress) {
      for (int i = 0; i < R.count; i++) {
        const hlo_instruction_t *w = R.procs[i].waiting;
        if (w)
          return hlo_error_at(w->loc, "stablehlo.%s of process %d (replica %d, partition %d) is never matched: "
                              "the processes it communicates with finish or wait elsewhere",
                              hlo_opcode_name(w->opcode), i, i / rp->num_partitions, i % rp->num_partitions);
      }
      return hlo_error_at(rp->loc, "interpreter.run_parallel: the processes cannot go on");
    }
  }
  int n = 0;
  for (int i = 0; i < R.count; i++) {
    const process_t *P = &R.procs[i];
    const hlo_instruction_t *root = P->program->root;
    if (P->result_count == 0) continue;
    if (P->result_count != 1 && root->opcode == HLO_OPCODE_TUPLE) {
      for (int k = 0; k < root->operand_count; k++) results[n++] = mapped(&R, P, root->operands[k]);
    } else {
      results[n++] = mapped(&R, P, root);
    }
  }
  return NULL;
}
