/*
 * IR rewrite utilities shared by the passes (codegen/simplify.c, cse.c,
 * dce.c and others): replacing uses, inserting and removing instructions,
 * dropping unreachable computations, creating constants.  (The
 * side-effect predicate that decides what may be removed, merged or
 * reordered is hlo_instruction_has_side_effect, in hlo/hlo.c.)
 *
 * Invariants kept: every function here leaves a computation's
 * |instructions| in def-before-use order and its |parameters| untouched,
 * and module->computations callees-before-callers.  Nothing is freed:
 * removed instructions and computations stay in the module's arena.
 *
 * What it does not do: it does not check shapes (a replacement must have
 * the shape of what it replaces; the caller guarantees it) and does not
 * keep |users| up to date (call hlo_compute_users again when needed).
 */
#include "hlo/hlo.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- replacing uses */

int hlo_replace_all_uses(hlo_computation_t *c, hlo_instruction_t *old,
                         hlo_instruction_t *replacement) {
  int n = 0;
  for (int i = 0; i < c->instruction_count; i++) {
    hlo_instruction_t *in = c->instructions[i];
    if (in == replacement) continue; /* never make an instruction its own operand */
    for (int k = 0; k < in->operand_count; k++)
      if (in->operands[k] == old) {
        in->operands[k] = replacement;
        n++;
      }
  }
  if (c->root == old) {
    c->root = replacement;
    n++;
  }
  return n;
}

void hlo_computation_set_root(hlo_computation_t *c, hlo_instruction_t *root) { c->root = root; }

bool hlo_computation_insert_before(hlo_module_t *m, hlo_computation_t *c, hlo_instruction_t *instr,
                                   const hlo_instruction_t *before) {
  int pos = c->instruction_count;
  for (int i = 0; before && i < c->instruction_count; i++)
    if (c->instructions[i] == before) {
      pos = i;
      break;
    }
  /* Append (which grows the array and handles parameters), then rotate. */
  if (!hlo_computation_append(m, c, instr)) return false;
  int last = c->instruction_count - 1;
  if (pos < last) {
    memmove(&c->instructions[pos + 1], &c->instructions[pos],
            sizeof(void *) * (size_t)(last - pos));
    c->instructions[pos] = instr;
  }
  return true;
}

/* ------------------------------------------------------- removing */

int hlo_computation_remove_dead(hlo_computation_t *c) {
  /* Marks live instructions in reverse order (users come after their
   * operands, so an instruction's liveness is known when it is reached):
   * scratch == c means live. */
  for (int i = 0; i < c->instruction_count; i++) c->instructions[i]->scratch = NULL;
  if (c->root) c->root->scratch = c;
  for (int i = c->instruction_count - 1; i >= 0; i--) {
    hlo_instruction_t *in = c->instructions[i];
    if (in->scratch != c && in->opcode != HLO_OPCODE_PARAMETER && !hlo_instruction_has_side_effect(in))
      continue;
    in->scratch = c;
    for (int k = 0; k < in->operand_count; k++) in->operands[k]->scratch = c;
  }
  int kept = 0;
  for (int i = 0; i < c->instruction_count; i++) {
    hlo_instruction_t *in = c->instructions[i];
    if (in->scratch == c) c->instructions[kept++] = in;
    in->scratch = NULL;
  }
  int removed = c->instruction_count - kept;
  c->instruction_count = kept;
  return removed;
}

/* A small open-addressing set of computation pointers. */
typedef struct comp_set {
  const hlo_computation_t **slots;
  size_t mask;
} comp_set_t;

static bool comp_set_init(comp_set_t *s, const vkhlo_allocator_t *allocator, int count) {
  size_t cap = 16;
  while (cap < (size_t)count * 2 + 2) cap *= 2;
  s->slots = vkhlo_calloc(allocator, cap, sizeof *s->slots);
  s->mask = cap - 1;
  return s->slots != NULL;
}

static size_t comp_hash(const hlo_computation_t *c) {
  uint64_t x = (uint64_t)(uintptr_t)c;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

/* Inserts |c|; returns true if it was not there yet. */
static bool comp_set_add(comp_set_t *s, const hlo_computation_t *c) {
  for (size_t h = comp_hash(c) & s->mask;; h = (h + 1) & s->mask) {
    if (s->slots[h] == c) return false;
    if (!s->slots[h]) {
      s->slots[h] = c;
      return true;
    }
  }
}

static bool comp_set_has(const comp_set_t *s, const hlo_computation_t *c) {
  for (size_t h = comp_hash(c) & s->mask;; h = (h + 1) & s->mask) {
    if (s->slots[h] == c) return true;
    if (!s->slots[h]) return false;
  }
}

vkhlo_status_t hlo_module_remove_unreachable_computations(hlo_module_t *m, int *out_removed) {
  *out_removed = 0;
  if (!m->entry_computation) return NULL;
  comp_set_t live;
  if (!comp_set_init(&live, m->arena.allocator, m->computation_count + 1)) return VKHLO_NO_MEMORY();
  comp_set_add(&live, m->entry_computation);
  /* Callers come after their callees: walking backwards, every caller of
   * a computation has been seen (and has marked it) before it is reached. */
  for (int i = m->computation_count - 1; i >= -1; i--) {
    const hlo_computation_t *c = i >= 0 ? m->computations[i] : m->entry_computation;
    if (!comp_set_has(&live, c)) continue;
    for (int j = 0; j < c->instruction_count; j++) {
      const hlo_instruction_t *in = c->instructions[j];
      for (int k = 0; k < in->called_count; k++) comp_set_add(&live, in->called_computations[k]);
    }
  }
  int kept = 0;
  for (int i = 0; i < m->computation_count; i++)
    if (comp_set_has(&live, m->computations[i])) m->computations[kept++] = m->computations[i];
  *out_removed = m->computation_count - kept;
  m->computation_count = kept;
  vkhlo_free(m->arena.allocator, live.slots);
  return NULL;
}

/* ------------------------------------------------------- creating */

hlo_instruction_t *hlo_constant_create(hlo_module_t *m, const hlo_shape_t *shape, const void *data) {
  hlo_instruction_t *c = hlo_instruction_create(m, HLO_OPCODE_CONSTANT, shape, 0, NULL);
  if (!c) return NULL;
  hlo_literal_t *lit = arena_alloc(&m->arena, sizeof *lit);
  if (!lit) return NULL;
  lit->shape = *shape;
  lit->size_bytes = hlo_shape_size_bytes(shape);
  if (lit->size_bytes) {
    lit->data = data ? arena_memdup(&m->arena, data, lit->size_bytes)
                     : arena_alloc(&m->arena, lit->size_bytes);
    if (!lit->data) return NULL;
  }
  c->literal = lit;
  return c;
}
