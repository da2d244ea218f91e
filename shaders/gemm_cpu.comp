#version 450
/*
 * gemm_cpu.comp: C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] for CPU Vulkan
 * devices (lavapipe/llvmpipe, SwiftShader), f32 accumulated; operands and
 * results f32, f16 or bf16 (see "16-bit operands"), or integers
 * accumulated in int (see "Integer operands").
 *
 * Why this shape.  lavapipe runs the invocations of a workgroup as the
 * SIMD lanes of one CPU thread, and turns every storage-buffer access into
 * a loop over the lanes, one scalar load per lane and vector component; an
 * FMA on the other hand is one SIMD instruction for all lanes.  So the
 * kernel is register blocked: each invocation computes a TM x TN tile of C
 * (TM rows, TN consecutive columns), and per step of k loads TM elements
 * of A and TN of B for TM * TN FMAs.  No shared memory and no barriers
 * (lavapipe implements barriers by switching coroutines, and shared-memory
 * tiles measured 2-6.5 GFLOP/s at 1024^3 against 20+ for register tiles).
 * Consecutive invocations take consecutive column tiles of the same rows,
 * so the lanes of one SIMD group read neighbouring B elements and the same
 * A elements.  Invocations loop over the tiles with a grid stride (as the
 * other CPU kernels of codegen/emit.c): a capped number of workgroups.
 *
 * Subgroups.  With GEMM_SG (the subgroup size; the rhs in words, see
 * "Words", and K a multiple of 8) the lanes of a subgroup, which share
 * their TM rows, stop loading the same A elements each: lane l loads rows
 * l, l + SG, .. (8 k at a time) and the others get them by subgroupShuffle
 * with a constant lane, one vector permute on lavapipe, so A costs TM / SG
 * loads per lane instead of TM.  Each 8-step block of k then loads the rhs words of all 8 steps
 * first (8 independent loads in flight) and runs k innermost: every
 * accumulator takes its 8 steps in a row, in k order (one load and store
 * per 8 steps where the accumulators are spilled, as 256 of them are).  A
 * workgroup is GEMM_SGR subgroups down (TM rows each) by WG / GEMM_SGR
 * invocations across, and with GEMM_KB a barrier every GEMM_KB steps of k
 * keeps its subgroups, which lavapipe runs one after another on one
 * thread, on the same block of k: the block's B panel (GEMM_KB rows by the
 * workgroup's columns) and A panel are read from L2 by all of them.
 * Without it each subgroup streamed all of K x its columns of B once per
 * row tile, a 4 KiB-strided walk at N = 1024 that leaves a new page at
 * every step (no hardware prefetch) and aliases a few cache sets: at
 * 1024^3 a third of the time waited on the first B load of each step.
 *
 * Edges.  When M >= TM the last row tile is shifted back to end at row M
 * (its rows overlap the previous tile's and are not stored twice: a row is
 * stored by the tile that first covers it), so loads never need a clamp;
 * the same for columns.  When M < TM (N < TN) the rows (columns) past the
 * end repeat the last one and are not stored.
 *
 * Accumulation is f32 in k order for each element (the order of an
 * elemental dot); a * b + c may be contracted into an FMA, which a dot's
 * rounding allows (it is not elementwise arithmetic, which codegen marks
 * precise).
 *
 * Bindings and hooks.  The generated part (codegen/emit_gemm.c) is
 * prepended after the #version line and defines GEMM_GENERATED; it holds
 * the buffer declarations (the kernel's operands then results, as in
 * codegen/kernel.h), helper functions, and these macros (all int
 * constants or int/float expressions):
 *   GEMM_BATCH, GEMM_M, GEMM_N, GEMM_K  the problem (batch count may be 1);
 *   LHS_AT(b, m)   offset in the lhs binding of A[b, m, 0] (batch and free
 *                  dimensions in any order and layout: the emitter writes
 *                  their strides, or div/mod for unmergeable dimensions;
 *                  evaluated outside the k loop);
 *   LHS_KS         the stride of A along k (contracting dimensions merged);
 *   LHS_KOFF(k)    optional: the offset of A[b, m, k] from LHS_AT(b, m)
 *                  (default k * LHS_KS), for a contracting dimension split
 *                  in two strided parts (a reshape merging attention heads
 *                  x head size after a transpose); with LHS_LOADW, 8
 *                  consecutive k from a multiple of 8 stay consecutive;
 *   LHS_LOAD(off)  the float value of A at offset off (the operand prologue:
 *                  a convert, or a load through a transpose/broadcast/
 *                  reshape, which the strides already express; on CPU
 *                  devices through an R32UI texel view of the binding,
 *                  codegen_declare_element_view: one gather per load where
 *                  a storage buffer costs a loop over the lanes, 1.7x on
 *                  chess-9M's attention output projection);
 *   RHS_AT_d(b, n), RHS_KS_d, RHS_LOAD_d(off)  the same for B_d[b, k, n],
 *                  d = 0 .. NDOT - 1;
 *   NDOT           how many products share A (1 to 3; default 1): an output
 *                  fusion of several dots of the same lhs (a transformer's
 *                  q, k, v projections, or the gate and up projections of
 *                  a SwiGLU MLP) computes C_d = A B_d for every d in one
 *                  kernel, each A element loaded once for all of them;
 *   GEMM_STORE(idx, v)  the epilogue: stores C's element at row-major
 *                  position idx = (b * M + m) * N + n with value v (v0, v1,
 *                  .. : one value per product when NDOT > 1), after
 *                  the fused elementwise ops of an output fusion (bias add,
 *                  residual, activation; several outputs for a multi-output
 *                  fusion);
 *   GEMM_GROUPS, GEMM_GROUP_SIZE(g), RHS_GS_0  optional: a grouped
 *                  product (chlo.ragged_dot with the lhs rows in groups, see
 *                  "Groups"): G groups, the int size of group g (clamped to
 *                  [0, 2^30]), and the stride of B's group dimension
 *                  (B_g at RHS_AT_0(b, n) + g * RHS_GS_0); NDOT 1, GEMM_KB
 *                  0, TM <= 32, M < 2^30;
 *   GEMM_STORE8(idx, v)  instead of GEMM_STORE (TN and N multiples of 8):
 *                  the same for the 8 elements from idx (a multiple of 8),
 *                  v being two vec4s per product (a0, b0, a1, b1, ..).
 *                  Stores.  lavapipe pays for a storage-buffer store as for
 *                  a load, a loop over the lanes per component; the
 *                  emitter's GEMM_STORE8 stores each result's 8 floats as
 *                  one u64vec4 (4 components), which at K = 256 takes the
 *                  stores from 40% of the kernel's time to 20%.
 * Tile sizes are #defines the emitter may set (not specialization
 * constants: they size register arrays that the preprocessor unrolls, and
 * the kernels are already specialized per shape and compiled in process):
 *   TM   rows per invocation: 1, 2, 4, .. 64 (default 16);
 *   TN   columns per invocation: 4, 8, 16 or 32 (default 8 here; the
 *        emitter sets it), as TN / 4 vec4s.
 *   GEMM_MAX_GROUPS  workgroups in the grid-stride loop (64 invocations each);
 *   GEMM_SG, GEMM_SGR, GEMM_KB  see "Subgroups" (GEMM_KB a multiple of 8;
 *                  the generated part enables GL_KHR_shader_subgroup_shuffle);
 *                  without GEMM_SG, GEMM_SGR (default 1) still stacks that
 *                  many tiles of TM rows down the workgroup, WG / GEMM_SGR
 *                  invocations across: a narrow product (N = 32, TN = 16)
 *                  fills a SIMD group without narrowing TN below the 8
 *                  columns that words need.
 * Without GEMM_GENERATED the defaults below make a 64^3 problem on
 * bindings 0, 1 (A, B) and 2 (C), which is what the build compiles and
 * spirv-val checks.
 */
#ifndef GEMM_GENERATED
#define GEMM_BATCH 1
#define GEMM_M 64
#define GEMM_N 64
#define GEMM_K 64
layout(std430, set = 0, binding = 0) readonly buffer Buffer0 { float data[]; } in0;
layout(std430, set = 0, binding = 1) readonly buffer Buffer1 { float data[]; } in1;
layout(std430, set = 0, binding = 2) writeonly buffer Buffer2 { float data[]; } out0;
#define LHS_AT(b, m) ((m) * GEMM_K)
#define LHS_KS 1
#define LHS_LOAD(off) in0.data[off]
#define RHS_AT_0(b, n) (n)
#define RHS_KS_0 GEMM_N
#define RHS_LOAD_0(off) in1.data[off]
#define GEMM_STORE(idx, v) out0.data[idx] = (v)
#endif
#ifndef NDOT
#define NDOT 1
#endif
#ifndef LHS_KOFF
#define LHS_KOFF(k) ((k) * LHS_KS)
#endif

#ifndef TM
#define TM 16
#endif
#ifndef TN
#define TN 8
#endif
#ifndef WG
#define WG 64
#endif
#ifndef GEMM_MAX_GROUPS
#define GEMM_MAX_GROUPS 256
#endif

/* Unrolling by the preprocessor: FOR_M(X) is X(0) ... X(TM - 1), FOR_V(X, i)
 * is X(i, 0) ... X(i, TN / 4 - 1), so every array index is a constant and
 * the arrays become registers. */
#if TM == 1
#define FOR_M(X) X(0)
#elif TM == 2
#define FOR_M(X) X(0) X(1)
#elif TM == 4
#define FOR_M(X) X(0) X(1) X(2) X(3)
#elif TM == 8
#define FOR_M(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#elif TM == 16
#define FOR_M(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#elif TM == 32
#define FOR_M(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) \
  X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
#elif TM == 64
#define FOR_M32(X, o) X(o + 0) X(o + 1) X(o + 2) X(o + 3) X(o + 4) X(o + 5) X(o + 6) X(o + 7) X(o + 8) X(o + 9) \
  X(o + 10) X(o + 11) X(o + 12) X(o + 13) X(o + 14) X(o + 15) X(o + 16) X(o + 17) X(o + 18) X(o + 19) X(o + 20) \
  X(o + 21) X(o + 22) X(o + 23) X(o + 24) X(o + 25) X(o + 26) X(o + 27) X(o + 28) X(o + 29) X(o + 30) X(o + 31)
#define FOR_M(X) FOR_M32(X, 0) FOR_M32(X, 32)
#else
#error TM must be 1, 2, 4, 8, 16, 32 or 64
#endif
#if TN == 4
#define FOR_V(X, i) X(i, 0)
#elif TN == 8
#define FOR_V(X, i) X(i, 0) X(i, 1)
#elif TN == 16
#define FOR_V(X, i) X(i, 0) X(i, 1) X(i, 2) X(i, 3)
#elif TN == 32
#define FOR_V(X, i) X(i, 0) X(i, 1) X(i, 2) X(i, 3) X(i, 4) X(i, 5) X(i, 6) X(i, 7)
#else
#error TN must be 4, 8, 16 or 32
#endif
/* FOR_W(X, i) is X(i, 0) .. X(i, TN / 8 - 1): the words of a row's TN
 * columns (GEMM_STORE8) */
#if defined(GEMM_STORE8)
#if TN == 8
#define FOR_W(X, i) X(i, 0)
#elif TN == 16
#define FOR_W(X, i) X(i, 0) X(i, 1)
#elif TN == 32
#define FOR_W(X, i) X(i, 0) X(i, 1) X(i, 2) X(i, 3)
#else
#error GEMM_STORE8 needs TN a multiple of 8
#endif
#if GEMM_N % 8 != 0
#error GEMM_STORE8 needs N a multiple of 8
#endif
#endif

/* Words.  When the generated part defines RHS_LOADW_d(off) (LHS_LOADW(off)),
 * the rhs (lhs) is also bound as an array of u64vec4, 8 floats per element,
 * and the kernel reads 8 consecutive columns of B (8 consecutive k of a
 * row of A) with one load: lavapipe's cost is per loaded component, and a
 * 64-bit component costs what a 32-bit one does.  The emitter defines them
 * only when the offsets are multiples of 8 and the 8 elements consecutive
 * (B: N stride 1, N % 8 == 0; A: k stride 1, K % 8 == 0), and enables
 * GL_EXT_shader_explicit_arithmetic_types_int64.  In the subgroup path the
 * rhs may instead come in words along k (RHS_LOADWK_d(off): B's k stride
 * 1, K % 8 == 0, column offsets multiples of 8, as attention's q k^T has
 * it): one word then holds 8 steps of one column, TN words per 8 steps,
 * the same count as 8 steps of TN / 8 words along n.  Where the device has
 * texel buffers the emitter's LOADW macros read the words through a
 * uniform texel buffer view of the binding (codegen_declare_word_view,
 * shaders/texel_words.glsl): two RGBA32UI texels per word, one vector load
 * per lane each on lavapipe instead of a loop over the lanes per
 * component, which makes this kernel about 1.5x faster there at 1024^3. */
#if defined(GEMM_INT)
#define WORD_F2(u) ivec2(unpackUint2x32(u))
#else
#define WORD_F2(u) uintBitsToFloat(unpackUint2x32(u))
#endif
/* 16-bit operands.  LHS_LOAD and RHS_LOAD_d give an f16 or bf16 element
 * as its f32 value; with GEMM_WORDS16 the generated part reads 8 of them
 * as one u64vec2 word (one RGBA32UI texel: half the loads of 8 floats)
 * and widens it here into the u64vec4 of 8 floats the kernel reads
 * everywhere.  Every f16 and bf16 value is exact in f32 and so is the
 * product of two (11 + 11 or 8 + 8 significant bits), so the f32 sums are
 * the elemental dot's, which converts each element the same way; the
 * epilogue rounds each sum to the product's type once (the generated
 * part's first statement). */
#if defined(GEMM_WORDS16)
uint64_t gemm_f16_pair(uint h) { return packUint2x32(floatBitsToUint(unpackHalf2x16(h))); }
u64vec4 gemm_f16x8(u64vec2 w) {
  uvec2 a = unpackUint2x32(w.x), b = unpackUint2x32(w.y);
  return u64vec4(gemm_f16_pair(a.x), gemm_f16_pair(a.y), gemm_f16_pair(b.x), gemm_f16_pair(b.y));
}
uint64_t gemm_bf16_pair(uint h) { return packUint2x32(uvec2(h << 16, h & 0xFFFF0000u)); }
u64vec4 gemm_bf16x8(u64vec2 w) {
  uvec2 a = unpackUint2x32(w.x), b = unpackUint2x32(w.y);
  return u64vec4(gemm_bf16_pair(a.x), gemm_bf16_pair(a.y), gemm_bf16_pair(b.x), gemm_bf16_pair(b.y));
}
#endif
/* Integer operands.  With GEMM_INT (an integer dot_general: operands
 * and result integers of 8, 16 or 32 bits) the accumulators are ivec4
 * and every value an int: LHS_LOAD and RHS_LOAD_d give the element
 * widened by its own signedness, the LOADW macros 8 such 32-bit values in
 * a u64vec4 (the widening helpers below for 8- and 16-bit words).  Sums
 * wrap modulo 2^32, and the epilogue takes the low bits of the result's
 * type: that is the elemental dot's value (each operand converted to the
 * result type, products and sums wrapping in it) for any order of the
 * sums, since reduction modulo 2^w commutes with + and *.
 * A float product may read integers too, where its operand is their
 * exact convert (8-bit integers, or 16-bit ones into f32: weights stored
 * as integers, the scale applied after the product): the same loads, each
 * value then made a float (gemm_i2f8 for words). */
#if defined(GEMM_INT)
#define GEMM_T int
#define GEMM_V ivec4
#else
#define GEMM_T float
#define GEMM_V vec4
#endif
#if defined(GEMM_WORDS16)
/* 8 16-bit integers (a u64vec2 word) as 8 ints, sign or zero extended */
uint64_t gemm_s16_pair(uint h) {
  return packUint2x32(uvec2(bitfieldExtract(int(h), 0, 16), bitfieldExtract(int(h), 16, 16)));
}
uint64_t gemm_u16_pair(uint h) { return packUint2x32(uvec2(h & 0xFFFFu, h >> 16)); }
u64vec4 gemm_s16x8(u64vec2 w) {
  uvec2 a = unpackUint2x32(w.x), b = unpackUint2x32(w.y);
  return u64vec4(gemm_s16_pair(a.x), gemm_s16_pair(a.y), gemm_s16_pair(b.x), gemm_s16_pair(b.y));
}
u64vec4 gemm_u16x8(u64vec2 w) {
  uvec2 a = unpackUint2x32(w.x), b = unpackUint2x32(w.y);
  return u64vec4(gemm_u16_pair(a.x), gemm_u16_pair(a.y), gemm_u16_pair(b.x), gemm_u16_pair(b.y));
}
#endif
#if defined(GEMM_WORDS8)
/* 8 8-bit integers as 8 ints: the generated part reads the 16-byte word
 * (one RGBA32UI texel) holding them and passes the half, w.x or w.y,
 * the 8 elements from off start (off / 8 odd: the upper half) */
uint64_t gemm_s8_pair(uint q, int at) {
  return packUint2x32(uvec2(bitfieldExtract(int(q), at, 8), bitfieldExtract(int(q), at + 8, 8)));
}
uint64_t gemm_u8_pair(uint q, int at) {
  return packUint2x32(uvec2(bitfieldExtract(q, at, 8), bitfieldExtract(q, at + 8, 8)));
}
u64vec4 gemm_s8x8(uint64_t h) {
  uvec2 q = unpackUint2x32(h);
  return u64vec4(gemm_s8_pair(q.x, 0), gemm_s8_pair(q.x, 16), gemm_s8_pair(q.y, 0), gemm_s8_pair(q.y, 16));
}
u64vec4 gemm_u8x8(uint64_t h) {
  uvec2 q = unpackUint2x32(h);
  return u64vec4(gemm_u8_pair(q.x, 0), gemm_u8_pair(q.x, 16), gemm_u8_pair(q.y, 0), gemm_u8_pair(q.y, 16));
}
#define GEMM_HALF8(w, off) ((((off) >> 3) & 1) != 0 ? (w).y : (w).x)
#endif
#if defined(GEMM_WORDS8) || defined(GEMM_WORDS16)
/* 8 ints as 8 floats: integer weights (8 bits, or 16 into an f32
 * product) that a float product reads through their exact convert */
uint64_t gemm_i2f_pair(uint64_t h) { return packUint2x32(floatBitsToUint(vec2(ivec2(unpackUint2x32(h))))); }
u64vec4 gemm_i2f8(u64vec4 w) {
  return u64vec4(gemm_i2f_pair(w.x), gemm_i2f_pair(w.y), gemm_i2f_pair(w.z), gemm_i2f_pair(w.w));
}
#endif
#if defined(RHS_LOADW_0) && TN % 8 != 0
#error RHS_LOADW needs TN a multiple of 8
#endif
/* Scaled weights.  Where the generated part defines RHS_SCALE_AT_d(b, n)
 * and RHS_SCALE_LOAD_d(off), B_d is integers times a per-column scale
 * (weights dequantized before the product: convert(q) * broadcast(s),
 * the scale the same at every k): the kernel loads its TN columns' scales
 * once per tile and multiplies each loaded B value by its column's
 * scale, one f32 multiply, so each value is exactly the f32 product the
 * program's multiply makes (a multiply feeding a multiply is never
 * contracted), while B is read as integers, a quarter of the bytes for
 * 8-bit weights.  Where only some products of the kernel (NDOT) are
 * scaled, the others' scale is the constant 1 (x * 1 is x exactly).
 * Zero points: with RHS_ZERO_AT_d(b, n) and RHS_ZERO_LOAD_d(off) too, B_d
 * is (q - z) * s, the program's f32 subtract then multiply (asymmetric
 * quantization); a product without one where others have one gets 0.
 * RHS_QROUND_d(x) rounds the subtract and the multiply to a 16-bit
 * dequantization's type (f16 or bf16 weights: the program's ops in that
 * type), as the elemental path rounds its f32 result; (x) for f32.
 * Group-wise: the scale of step k is at RHS_SCALE_AT_d(b, n) +
 * RHS_SCALE_KOFF_d(k), its zero point's at RHS_ZERO_AT_d(b, n) +
 * RHS_ZERO_KOFF_d(k) (0 for one per column), for weights quantized per
 * group of G rows as GPTQ/AWQ-style int8 and int4 weights are; with
 * GEMM_SCALE_GROUPS the tile reloads its scales and zero points at each
 * step where RHS_SCALE_NEW_d(k) (a group's first; G a multiple of 8, so
 * every block of 8 steps lies in one group).  The generated part defines
 * these for every product of a kernel with a scale. */

/* Groups.  A ragged product (chlo.ragged_dot, its ragged dimension the
 * lhs's one free dimension m) multiplies the rows of group g, rows
 * [end(g - 1), end(g - 1) + size(g)) with end the running sum of the
 * sizes, by B_g, and stores zeros in rows no group covers (past the last
 * group's end).  A tile of TM rows takes one pass per group that covers
 * some of its rows, each with fresh accumulators and B_g's offset, and
 * stores those rows only (gmask: bit i for row m0 + i); a last pass stores
 * zeros in the rows no group covered.  Most tiles lie in one group, so the
 * product costs about what the plain one does, instead of a product per
 * group.  An invocation's tiles come in increasing rows (per batch
 * element), so it keeps where its last tile's rows started in the groups
 * (gfirst, starting at row gbase) and reads only the sizes of groups from
 * there until one ends past the tile: O(G) loads per invocation, not per
 * tile.  With many small groups the product is bound by reading the
 * weights: on lavapipe 2048 x 512 x 256 takes 8.7 ms as one group and 26
 * ms as 64 groups of 32 rows or 32 of 64 (no tile straddling two), each
 * group's 512 KiB of B read by a few tiles only.  A tile's
 * rows belong to one subgroup, so the passes stay uniform where the lhs is
 * shared by shuffles; the k-block barriers (GEMM_KB) are off, as tiles of
 * one workgroup may take different numbers of passes.  Group sizes are
 * nonnegative in every program the spec defines; a negative one counts as
 * 0 here. */
#if defined(GEMM_GROUPS)
#if NDOT != 1 || (defined(GEMM_KB) && GEMM_KB != 0) || TM > 32
#error GEMM_GROUPS needs NDOT 1, GEMM_KB 0 and TM <= 32
#endif
#define GEMM_ROW_STORED(i, m) (((gmask >> uint(i)) & 1u) != 0u)
#define GEMM_GOFF goff
#else
#define GEMM_ROW_STORED(i, m) ((m) >= mfirst && (m) < GEMM_M)
#define GEMM_GOFF 0
#endif

/* FOR_D(X) is X(0) .. X(NDOT - 1); ACCS(i, v, c) the accumulators of
 * every product at one position, ACCS8(i, w) their vec4s of row i's
 * word w (columns 8w .. 8w + 7 of the invocation's TN). */
#define ACC8(d, i, w) acc[d][i][2 * w], acc[d][i][2 * w + 1]
#if NDOT == 1
#define FOR_D(X) X(0)
#define ACCS(i, v, c) acc[0][i][v][c]
#define ACCS8(i, w) ACC8(0, i, w)
#elif NDOT == 2
#define FOR_D(X) X(0) X(1)
#define ACCS(i, v, c) acc[0][i][v][c], acc[1][i][v][c]
#define ACCS8(i, w) ACC8(0, i, w), ACC8(1, i, w)
#elif NDOT == 3
#define FOR_D(X) X(0) X(1) X(2)
#define ACCS(i, v, c) acc[0][i][v][c], acc[1][i][v][c], acc[2][i][v][c]
#define ACCS8(i, w) ACC8(0, i, w), ACC8(1, i, w), ACC8(2, i, w)
#else
#error NDOT must be 1, 2 or 3
#endif

#if defined(GEMM_SG)
#if !(defined(RHS_LOADW_0) || defined(RHS_LOADWK_0)) || GEMM_K % 8 != 0 || WG % GEMM_SG != 0
#error GEMM_SG needs the rhs in words, K a multiple of 8 and whole subgroups
#endif
const int AS = (TM + GEMM_SG - 1) / GEMM_SG; /* lhs words per lane per 8 k */
#endif

layout(local_size_x = WG) in;

#ifndef GEMM_SGR
#define GEMM_SGR 1
#endif
#ifndef GEMM_KB
#define GEMM_KB 0
#endif
/* A workgroup's tile: RB rows by CB columns (GEMM_SGR subgroups down, the
 * rest across). */
const int RB = GEMM_SGR * TM;
const int CB = WG / GEMM_SGR * TN;
const int TILES_M = (GEMM_M + RB - 1) / RB;
const int TILES_N = (GEMM_N + CB - 1) / CB;
const int TILES = GEMM_BATCH * TILES_M * TILES_N;

/* Row q of a tile starting at m0; see "Edges".  Columns past the end
 * repeat the last one and are not stored. */
#if GEMM_M >= TM
#define ROW(q) (m0 + (q))
#else
#define ROW(q) min(m0 + (q), GEMM_M - 1)
#endif
#define COL(j) min(n0 + (j), GEMM_N - 1)

void main() {
#if defined(GEMM_SG)
  uint gsub = gl_SubgroupID;
  int grow = int(gsub % uint(GEMM_SGR)); /* which TM rows of the workgroup's RB */
  int lane = int(gsub / uint(GEMM_SGR)) * GEMM_SG + int(gl_SubgroupInvocationID);
#else
  int grow = int(gl_LocalInvocationID.x / uint(WG / GEMM_SGR));
  int lane = int(gl_LocalInvocationID.x % uint(WG / GEMM_SGR));
#endif
  /* unsigned tile arithmetic: see "Unsigned division" in codegen/emit_gemm.c */
  uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
#if defined(GEMM_GROUPS)
  int gfirst = 0, gbase = 0; /* see "Groups" */
#endif
  /* uniform over the workgroup (t; the rows too where GEMM_SGR is 1) */
  for (uint t = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; t < uint(TILES); t += groups) {
    int tn = int(t % uint(TILES_N));
    uint tr = t / uint(TILES_N);
#if GEMM_BATCH == 1
    /* t < TILES_M * TILES_N: no division (LLVM does not know the bound,
     * and scalarizes the store addresses per lane, division included) */
    int tm = int(tr);
    int b = 0;
#else
    int tm = int(tr % uint(TILES_M));
    int b = int(tr / uint(TILES_M));
#endif
    int mfirst = tm * RB + grow * TM;
#if GEMM_M >= TM
    int m0 = min(mfirst, GEMM_M - TM);
#else
    int m0 = 0;
#endif
    int n0 = tn * CB + lane * TN;
#if defined(GEMM_GROUPS)
    /* one pass per group covering rows of the tile, then the zeros (see
     * "Groups") */
    if (mfirst < gbase) { /* a new batch element: its rows from 0 again */
      gfirst = 0;
      gbase = 0;
    }
    uint gcovered = 0u;
    int gend = gbase, tile_end = min(m0 + TM, GEMM_M);
    for (int g = gfirst; g <= GEMM_GROUPS; g++) {
      uint gmask = 0u;
      int glo = gend;
      if (g < GEMM_GROUPS && gend >= tile_end) g = GEMM_GROUPS; /* no later group has rows here */
      if (g < GEMM_GROUPS) {
        gend = min(gend + GEMM_GROUP_SIZE(g), GEMM_M);
        /* groups ending by this tile's first row end before every later
         * tile's of this batch element */
        if (gend <= mfirst) {
          gfirst = g + 1;
          gbase = gend;
        }
      }
      /* the tile's rows to store, [mfirst, tile_end), those of the group
       * (or none's), as bits from m0 (no loop: lavapipe counts every loop
       * iteration against its limit) */
      int lo = mfirst, hi = tile_end;
      if (g < GEMM_GROUPS) {
        lo = max(lo, glo);
        hi = min(hi, gend);
      }
      if (lo < hi)
        gmask = (hi - lo == 32 ? 0xFFFFFFFFu : (1u << uint(hi - lo)) - 1u) << uint(lo - m0);
      if (g == GEMM_GROUPS) gmask &= ~gcovered;
      if (gmask == 0u) continue;
      gcovered |= gmask;
      int goff = g < GEMM_GROUPS ? g * RHS_GS_0 : 0;
#endif
    int arow[TM];
#define ROW_AT(i) arow[i] = LHS_AT(b, ROW(i));
    FOR_M(ROW_AT)
    int bcols[NDOT][TN];
#define COL_AT(d, v) bcols[d][4 * v] = RHS_AT_##d(b, COL(4 * v)) + GEMM_GOFF; \
    bcols[d][4 * v + 1] = RHS_AT_##d(b, COL(4 * v + 1)) + GEMM_GOFF; \
    bcols[d][4 * v + 2] = RHS_AT_##d(b, COL(4 * v + 2)) + GEMM_GOFF; \
    bcols[d][4 * v + 3] = RHS_AT_##d(b, COL(4 * v + 3)) + GEMM_GOFF;
#define COLS_AT(d) FOR_V(COL_AT, d)
    FOR_D(COLS_AT)
#if defined(RHS_SCALE_AT_0)
    /* each column's scale, loaded once per tile, or at each group's first
     * step of k (SCALES_NEW; see "Scaled weights") */
    vec4 bscale[NDOT][TN / 4];
    /* columns 4 v .. 4 v + 3's scales (Q SCALE) or zero points (ZERO) at step ks */
#define QVEC(Q, d, v) vec4(RHS_##Q##_LOAD_##d(RHS_##Q##_AT_##d(b, COL(4 * v)) + RHS_##Q##_KOFF_##d(ks)),     \
                           RHS_##Q##_LOAD_##d(RHS_##Q##_AT_##d(b, COL(4 * v + 1)) + RHS_##Q##_KOFF_##d(ks)), \
                           RHS_##Q##_LOAD_##d(RHS_##Q##_AT_##d(b, COL(4 * v + 2)) + RHS_##Q##_KOFF_##d(ks)), \
                           RHS_##Q##_LOAD_##d(RHS_##Q##_AT_##d(b, COL(4 * v + 3)) + RHS_##Q##_KOFF_##d(ks)))
#if defined(RHS_ZERO_AT_0)
    vec4 bzero[NDOT][TN / 4];
#define QPARAM_AT(d, v) bscale[d][v] = QVEC(SCALE, d, v); bzero[d][v] = QVEC(ZERO, d, v);
#define RHS_SCALED(d, v, x) RHS_QROUND_##d(RHS_QROUND_##d((x) - bzero[d][v]) * bscale[d][v])
#else
#define QPARAM_AT(d, v) bscale[d][v] = QVEC(SCALE, d, v);
#define RHS_SCALED(d, v, x) RHS_QROUND_##d((x) * bscale[d][v])
#endif
#define SCALES_AT(d) FOR_V(QPARAM_AT, d)
    { const int ks = 0; FOR_D(SCALES_AT) }
#else
#define RHS_SCALED(d, v, x) (x)
#endif
#if defined(GEMM_SCALE_GROUPS)
#define SCALE_NEW(d) if (ks > 0 && RHS_SCALE_NEW_##d(ks)) { FOR_V(QPARAM_AT, d) }
#define SCALES_NEW(k) { const int ks = k; FOR_D(SCALE_NEW) }
#else
#define SCALES_NEW(k)
#endif
    GEMM_V acc[NDOT][TM][TN / 4];
#define ZERO(d, v) for (int i = 0; i < TM; i++) acc[d][i][v] = GEMM_V(0);
#define ZERO_D(d) FOR_V(ZERO, d)
    FOR_D(ZERO_D)
    /* B_d's step kc into bv[d] */
#if defined(RHS_LOADW_0)
    /* rhs in 64-bit words: 8 columns per u64vec4 (see "Words") */
    int bw[NDOT][TN / 8];
#define WORD_AT(d) for (int w = 0; w < TN / 8; w++) bw[d][w] = RHS_AT_##d(b, min(n0 + 8 * w, GEMM_N - 8)) + GEMM_GOFF;
    FOR_D(WORD_AT)
#define LOAD_BD(d)                                                                       \
    for (int w = 0; w < TN / 8; w++) {                                                   \
      u64vec4 x = RHS_LOADW_##d(bw[d][w] + kc * RHS_KS_##d);                             \
      bv[d][2 * w] = RHS_SCALED(d, 2 * w, GEMM_V(WORD_F2(x.x), WORD_F2(x.y)));           \
      bv[d][2 * w + 1] = RHS_SCALED(d, 2 * w + 1, GEMM_V(WORD_F2(x.z), WORD_F2(x.w)));   \
    }
#else
#define LOAD_B(d, v) bv[d][v] = RHS_SCALED(d, v, GEMM_V(RHS_LOAD_##d(bcols[d][4 * v] + kc * RHS_KS_##d),  \
                                                     RHS_LOAD_##d(bcols[d][4 * v + 1] + kc * RHS_KS_##d), \
                                                     RHS_LOAD_##d(bcols[d][4 * v + 2] + kc * RHS_KS_##d), \
                                                     RHS_LOAD_##d(bcols[d][4 * v + 3] + kc * RHS_KS_##d)));
#define LOAD_BD(d) FOR_V(LOAD_B, d)
#endif
#define LOAD_B_STEP GEMM_V bv[NDOT][TN / 4]; FOR_D(LOAD_BD)
#define MAC(d, v) acc[d][I][v] += a * bv[d][v];
#define MAC_D(d) FOR_V(MAC, d)
#if defined(GEMM_GROUPS)
    if (g < GEMM_GROUPS) { /* the zeros' pass computes nothing */
#endif
#if defined(GEMM_SG)
    /* The lhs shared by the subgroup (see "Subgroups"): this lane loads
     * rows sl, sl + SG, .. of the TM, 8 k at a time (one word, or 8
     * elements when the lhs is not in words), and row I's value at step kk
     * comes from lane I % SG. */
    int sl = int(gl_SubgroupInvocationID);
    int acoop[AS];
    for (int s = 0; s < AS; s++) acoop[s] = LHS_AT(b, ROW(min(sl + GEMM_SG * s, TM - 1)));
    for (int k = 0; k < GEMM_K; k += 8) {
      SCALES_NEW(k)
#if defined(LHS_LOADW)
      u64vec4 aw[AS];
      for (int s = 0; s < AS; s++) aw[s] = LHS_LOADW(acoop[s] + LHS_KOFF(k));
#define A8(kk) subgroupShuffle(WORD_F2(aw[I / GEMM_SG][kk >> 1])[kk & 1], uint(I % GEMM_SG))
#else
      GEMM_T af[AS][8];
      for (int s = 0; s < AS; s++)
        for (int j = 0; j < 8; j++) af[s][j] = LHS_LOAD(acoop[s] + LHS_KOFF(k + j));
#define A8(kk) subgroupShuffle(af[I / GEMM_SG][kk], uint(I % GEMM_SG))
#endif
#if defined(RHS_LOADWK_0)
      /* the rhs in words along k (RHS_LOADWK_d, B's k stride 1): one word
       * holds a column's 8 steps */
      u64vec4 bk[NDOT][TN];
#define BK_D(d) for (int c = 0; c < TN; c++) bk[d][c] = RHS_LOADWK_##d(bcols[d][c] + k);
      FOR_D(BK_D)
      GEMM_V bb[8][NDOT][TN / 4];
#define KCOL(d, c, j) WORD_F2(bk[d][c][(j) >> 1])[(j) & 1]
#define UNPACKK_D(d)                                                                                      \
      for (int v = 0; v < TN / 4; v++)                                                                    \
        bb[j][d][v] = RHS_SCALED(d, v, GEMM_V(KCOL(d, 4 * v, j), KCOL(d, 4 * v + 1, j), KCOL(d, 4 * v + 2, j),   \
                                              KCOL(d, 4 * v + 3, j)));
      for (int j = 0; j < 8; j++) { FOR_D(UNPACKK_D) }
#else
      /* the rhs words of all 8 steps first (independent loads in flight) */
      u64vec4 bq[8][NDOT][TN / 8];
#define BQ_D(d) for (int w = 0; w < TN / 8; w++) bq[j][d][w] = RHS_LOADW_##d(bw[d][w] + (k + j) * RHS_KS_##d);
      for (int j = 0; j < 8; j++) { FOR_D(BQ_D) }
      GEMM_V bb[8][NDOT][TN / 4];
#define UNPACK_D(d)                                                                      \
      for (int w = 0; w < TN / 8; w++) {                                                 \
        u64vec4 x = bq[j][d][w];                                                         \
        bb[j][d][2 * w] = RHS_SCALED(d, 2 * w, GEMM_V(WORD_F2(x.x), WORD_F2(x.y)));        \
        bb[j][d][2 * w + 1] = RHS_SCALED(d, 2 * w + 1, GEMM_V(WORD_F2(x.z), WORD_F2(x.w)));\
      }
      for (int j = 0; j < 8; j++) { FOR_D(UNPACK_D) }
#endif
      /* k innermost: each accumulator takes its 8 steps in a row, in k
       * order (one load and store per 8 steps where it is spilled) */
#define MAC8(d, v)                                                                                           \
      acc[d][I][v] = acc[d][I][v] + a8[0] * bb[0][d][v] + a8[1] * bb[1][d][v] + a8[2] * bb[2][d][v] +        \
                     a8[3] * bb[3][d][v] + a8[4] * bb[4][d][v] + a8[5] * bb[5][d][v] + a8[6] * bb[6][d][v] + \
                     a8[7] * bb[7][d][v];
#define MAC8_D(d) FOR_V(MAC8, d)
#define ROW8(i) { const int I = i; GEMM_T a8[8] = GEMM_T[8](A8(0), A8(1), A8(2), A8(3), A8(4), A8(5), A8(6), A8(7)); FOR_D(MAC8_D) }
      FOR_M(ROW8)
#if GEMM_KB > 0
      /* the subgroups step through k together (see "Subgroups") */
      if ((k + 8) % GEMM_KB == 0 && k + 8 < GEMM_K) barrier();
#endif
    }
#elif defined(LHS_LOADW)
    /* lhs in 64-bit words along k: 8 k per u64vec4 per row */
    for (int k = 0; k < GEMM_K; k += 8) {
      SCALES_NEW(k)
      u64vec4 aw[TM];
#define LOAD_AW(i) aw[i] = LHS_LOADW(arow[i] + LHS_KOFF(k));
      FOR_M(LOAD_AW)
#define MAC_ROW_W(i) { const int I = i; GEMM_T a = WORD_F2(aw[i][kk >> 1])[kk & 1]; FOR_D(MAC_D) }
#ifdef GEMM_UNROLL_K8
      /* the 8 steps unrolled: no component selects, 8 times the code
       * (and LLVM compile time) */
#define K_STEP(j) { const int kk = j; int kc = k + kk; LOAD_B_STEP FOR_M(MAC_ROW_W) }
      K_STEP(0) K_STEP(1) K_STEP(2) K_STEP(3) K_STEP(4) K_STEP(5) K_STEP(6) K_STEP(7)
#else
      for (int kk = 0; kk < 8; kk++) {
        int kc = k + kk;
        LOAD_B_STEP
        FOR_M(MAC_ROW_W)
      }
#endif
    }
#else
    for (int kc = 0; kc < GEMM_K; kc++) {
      SCALES_NEW(kc)
      LOAD_B_STEP
#define MAC_ROW(i) { const int I = i; GEMM_T a = LHS_LOAD(arow[i] + LHS_KOFF(kc)); FOR_D(MAC_D) }
      FOR_M(MAC_ROW)
    }
#endif
#if defined(GEMM_GROUPS)
    }
#endif
    /* Positions: one vector, obase, that the rows and columns add
     * constants to.  lavapipe stores lane by lane, and LLVM computes each
     * lane's position inside that loop from the vectors it is made of:
     * from one, the loop is shorter (ffn_up's epilogue 13% -> 10% of the
     * kernel's samples, q/k/v 2607x256x256 3.35-3.51 -> 3.17-3.32 ms) */
    int obase = (b * GEMM_M + m0) * GEMM_N + n0;
#define STORE(i, v)                                                                          \
    for (int c = 0; c < 4; c++) {                                                            \
      if (n0 + 4 * v + c < GEMM_N) GEMM_STORE(obase + (i * GEMM_N + 4 * v + c), ACCS(i, v, c)); \
    }
#if defined(GEMM_STORE8)
    /* 8 columns (one word) of every product per store (see "Stores") */
#define STORE8(i, w) \
    if (n0 + 8 * w < GEMM_N) GEMM_STORE8(obase + (i * GEMM_N + 8 * w), ACCS8(i, w));
#define STORE_ROW(i) { int m = m0 + i; if (GEMM_ROW_STORED(i, m)) { FOR_W(STORE8, i) } }
#else
#define STORE_ROW(i) { int m = m0 + i; if (GEMM_ROW_STORED(i, m)) { FOR_V(STORE, i) } }
#endif
    FOR_M(STORE_ROW)
#if defined(GEMM_GROUPS)
    }
#endif
  }
}
