#version 450
/*
 * loop_gate.comp: the gate of a while loop whose iterations run in
 * batches (api/execute.c, "Batched iterations").
 *
 * A while loop whose trip count the program does not fix decides after
 * every cond whether to run the body.  Instead of reading the predicate
 * back on the host after each cond (a submission and a wait per
 * iteration), the executor records U iterations in a row, each cond and
 * each body inside a conditional-rendering region (VK_EXT_conditional_
 * rendering) keyed on a gate word, and reads the gates back once per U.
 * Gate word g[0] is 1 when the batch starts (the loop was running);
 * iteration i's cond runs under g[i], and this kernel, dispatched
 * unconditionally after it, sets
 *     g[i + 1] = g[i] != 0 && predicate
 * under which iteration i's body runs.  Once a predicate is false every
 * later gate is 0, so every later cond and body is skipped: the gates
 * after a batch are 1 .. 1 0 .. 0, the number of ones after g[0] being
 * how many bodies ran.  Where g[i] is 0 the predicate word is a stale one
 * (from the cond that ended the loop, or older), which the && ignores.
 *
 * Bindings: 0 the loop's predicate, an i1 in the low byte of the first
 * 32-bit word (as the host reads it: nonzero low byte is true); 1 the
 * gate words (read and written).  Push constant: i, the iteration within
 * the batch.  One invocation.
 */
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) readonly buffer Predicate { uint pred[]; };
layout(std430, set = 0, binding = 1) buffer Gates { uint gate[]; };
layout(push_constant) uniform Iteration { uint i; } iteration;

void main() {
  uint i = iteration.i;
  gate[i + 1u] = (gate[i] != 0u && (pred[0] & 0xFFu) != 0u) ? 1u : 0u;
}
