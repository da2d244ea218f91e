#version 450
/*
 * gemm_gpu.comp: C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] for GPUs, f32
 * in, f32 accumulated, f32 out (never TF32 or f16).
 *
 * Tiling.  One workgroup of 256 invocations per BM x BN = 64 x 64 tile of
 * C; invocation (ty, tx) of the 16 x 16 grid accumulates the 4 x 4
 * elements rows 4 ty .. 4 ty + 3, columns 4 tx .. 4 tx + 3 in registers.
 * Products of at most 16 rows (a decoding step's GEMV, split along k by
 * codegen/expand.c) take a 4 x 64 grid instead, a 16 x 256 tile (GEMM_TY
 * 4, GEMM_BK 8), so a row computes 16 times, not 64.
 * k advances BK = 16 at a time through shared memory: the workgroup
 * copies the 64 x 16 slice of A and the 16 x 64 slice of B into shared
 * arrays (4 elements of each per invocation, consecutive invocations on
 * consecutive k of A and n of B so that row-major operands coalesce), then
 * each invocation reads a vec4 of A's column and a vec4 of B's row per k
 * (shared arrays of vec4 along m and n) for 16 FMAs.  Double buffering:
 * two shared slices; while the workgroup computes on one, each invocation
 * has already loaded its part of the next slice into registers and writes
 * it to the other slice afterwards, so one barrier per slice suffices
 * (the barrier after slice t's compute also orders every read of the
 * other slice, from t - 1, before its rewrite).
 *
 * Edges: rows and columns past M, N load a clamped element and are not
 * stored; k past K loads zero.  Workgroups are numbered along x then y
 * (gl_NumWorkGroups.x per row), tiles past the end return at once.
 *
 * Hooks: the same as gemm_cpu.comp (GEMM_BATCH, GEMM_M, GEMM_N, GEMM_K,
 * LHS_AT, LHS_KS, LHS_KOFF, LHS_LOAD, RHS_AT, RHS_KS, RHS_LOAD, GEMM_STORE; see
 * there); the generated part defines GEMM_GENERATED.  Through these
 * optional ones the operands need not be strided arrays (the convolution,
 * shaders/conv_gpu.glsl, reads A through its index map):
 *   GEMM_A_ROW_T, GEMM_A_ROW(b, m)  what A's row m of batch b is known by
 *                  in the loads (default int, LHS_AT(b, m)), computed once;
 *   GEMM_A(row, k)  A's element k of that row, 0 for k >= GEMM_K;
 *   GEMM_B_COL(b, n), GEMM_B(col, k)  the same for B's column n (an int);
 *   GEMM_STORE_AT(b, m, n, v)  stores C[b, m, n] (default GEMM_STORE at the
 *                  row-major position);
 *   GEMM_A_M_FAST, GEMM_B_K_FAST  1: consecutive invocations stage
 *                  consecutive rows of A (columns of B) of one k, for
 *                  operands laid out that way; 0 (default): consecutive k
 *                  of A (the row-major lhs), consecutive n of B.
 * The tile shapes are
 * fixed here (codegen/emit_gemm.c picks one, codegen_gemm_gpu_rows, and
 * computes the group count from it); they are what an untuned GPU default
 * should be, not measured optima:
 * no GPU was available when this was written, and it was checked for
 * correctness on lavapipe (VKHLO_GEMM=gpu).
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
#define RHS_AT(b, n) (n)
#define RHS_KS GEMM_N
#define RHS_LOAD(off) in1.data[off]
#define GEMM_STORE(idx, v) out0.data[idx] = (v)
#endif
#ifndef LHS_KOFF
#define LHS_KOFF(k) ((k) * LHS_KS)
#endif
/* Integer products (GEMM_INT): as gemm_cpu.comp's "Integer operands",
 * int values and ivec4 accumulators wrapping modulo 2^32 */
#if defined(GEMM_INT)
#define GEMM_T int
#define GEMM_V ivec4
#else
#define GEMM_T float
#define GEMM_V vec4
#endif
#ifndef GEMM_A
#define GEMM_A_ROW_T int
#define GEMM_A_ROW(b, m) LHS_AT(b, m)
#define GEMM_A(row, k) ((k) < GEMM_K ? LHS_LOAD((row) + LHS_KOFF(k)) : GEMM_T(0))
#endif
#ifndef GEMM_B
#define GEMM_B_COL(b, n) RHS_AT(b, n)
#define GEMM_B(col, k) ((k) < GEMM_K ? RHS_LOAD((col) + (k) * RHS_KS) : GEMM_T(0))
#endif
#ifndef GEMM_STORE_AT
#define GEMM_STORE_AT(b, m, n, v) GEMM_STORE(((b) * GEMM_M + (m)) * GEMM_N + (n), v)
#endif
#ifndef GEMM_A_M_FAST
#define GEMM_A_M_FAST 0
#endif
#ifndef GEMM_B_K_FAST
#define GEMM_B_K_FAST 0
#endif

/* The tile: GEMM_TY x (256 / GEMM_TY) invocations of 4 x 4 results each
 * (16: 64 x 64, the default; 4: 16 x 256 for products of at most 16 rows,
 * GEMM_BK 8 so that the slices stay within 17 KiB of shared memory), k in
 * slices of GEMM_BK. */
#ifndef GEMM_TY
#define GEMM_TY 16
#endif
#ifndef GEMM_BK
#define GEMM_BK 16
#endif
#define TX (256 / GEMM_TY)
#define BM (4 * GEMM_TY)
#define BN (4 * TX)
#define BK GEMM_BK
#define A_LOADS ((BM * BK + 255) / 256) /* elements of an A slice per invocation (the last ones guarded) */
#define B_LOADS (BK * BN / 256)

layout(local_size_x = 256) in;

const int TILES_M = (GEMM_M + BM - 1) / BM;
const int TILES_N = (GEMM_N + BN - 1) / BN;
const int TILES = GEMM_BATCH * TILES_M * TILES_N;
const int SLICES = (GEMM_K + BK - 1) / BK;

shared GEMM_V As[2][BK][BM / 4]; /* A[m0 + 4 i + c, k0 + kk] at As[.][kk][i][c] */
shared GEMM_V Bs[2][BK][BN / 4]; /* B[k0 + kk, n0 + 4 j + c] at Bs[.][kk][j][c] */

void main() {
  int tile = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  if (tile >= TILES) return; /* uniform over the workgroup: no barrier is skipped by part of it */
  int tid = int(gl_LocalInvocationID.x);
  int tn = tile % TILES_N, tm = (tile / TILES_N) % TILES_M, b = tile / (TILES_N * TILES_M);
  int m0 = tm * BM, n0 = tn * BN;
  /* this invocation's elements of each slice, element q = tid + 256 e of
   * the slice: A (am[e], ak[e]), B (bk[e], bn[e]), the fastest index
   * following the tid */
  int am[A_LOADS], ak[A_LOADS], bk[B_LOADS], bn[B_LOADS], bcol[B_LOADS];
  GEMM_A_ROW_T arow[A_LOADS];
  for (int e = 0; e < A_LOADS; e++) {
    int q = tid + 256 * e;
#if GEMM_A_M_FAST
    am[e] = q % BM;
    ak[e] = q / BM;
#else
    ak[e] = q % BK;
    am[e] = q / BK;
#endif
    arow[e] = GEMM_A_ROW(b, min(m0 + min(am[e], BM - 1), GEMM_M - 1));
  }
  for (int e = 0; e < B_LOADS; e++) {
    int q = tid + 256 * e;
#if GEMM_B_K_FAST
    bk[e] = q % BK;
    bn[e] = q / BK;
#else
    bn[e] = q % BN;
    bk[e] = q / BN;
#endif
    bcol[e] = GEMM_B_COL(b, min(n0 + bn[e], GEMM_N - 1));
  }
  /* an A slice of fewer than 256 elements (16 x 8): the invocations past
   * it load and store none */
  bool a_in[A_LOADS];
  for (int e = 0; e < A_LOADS; e++) a_in[e] = tid + 256 * e < BM * BK;
  GEMM_T ra[A_LOADS], rb[B_LOADS];
#if defined(RHS_SCALE_AT)
  /* scaled weights (gemm_cpu.comp's "Scaled weights"): each loaded B
   * element minus its zero point (the generated part's 0 without one)
   * times its scale, rounded by RHS_QROUND, per column loaded once; k
   * past K stays 0 */
#if defined(GEMM_SCALE_GROUPS)
  /* a scale and zero point per group of k (RHS_SCALE_KOFF, RHS_ZERO_KOFF):
   * their offsets at k = 0 kept, each element's group's loaded with it */
  int bscale_at[B_LOADS], bzero_at[B_LOADS];
  for (int e = 0; e < B_LOADS; e++) {
    bscale_at[e] = RHS_SCALE_AT(b, min(n0 + bn[e], GEMM_N - 1));
    bzero_at[e] = RHS_ZERO_AT(b, min(n0 + bn[e], GEMM_N - 1));
  }
#define GEMM_B_AT(e, k)                                                                                        \
  ((k) < GEMM_K ? RHS_QROUND(RHS_QROUND(RHS_LOAD(bcol[e] + (k) * RHS_KS) - RHS_ZERO_LOAD(bzero_at[e] + RHS_ZERO_KOFF(k))) * \
                             RHS_SCALE_LOAD(bscale_at[e] + RHS_SCALE_KOFF(k)))                                    \
                : 0.0)
#else
  float bscale[B_LOADS], bzero[B_LOADS];
  for (int e = 0; e < B_LOADS; e++) {
    bscale[e] = RHS_SCALE_LOAD(RHS_SCALE_AT(b, min(n0 + bn[e], GEMM_N - 1)));
    bzero[e] = RHS_ZERO_LOAD(RHS_ZERO_AT(b, min(n0 + bn[e], GEMM_N - 1)));
  }
#define GEMM_B_AT(e, k) ((k) < GEMM_K ? RHS_QROUND(RHS_QROUND(RHS_LOAD(bcol[e] + (k) * RHS_KS) - bzero[e]) * bscale[e]) : 0.0)
#endif
#else
#define GEMM_B_AT(e, k) GEMM_B(bcol[e], k)
#endif
  for (int e = 0; e < A_LOADS; e++) ra[e] = a_in[e] ? GEMM_A(arow[e], ak[e]) : GEMM_T(0);
  for (int e = 0; e < B_LOADS; e++) rb[e] = GEMM_B_AT(e, bk[e]);
  for (int e = 0; e < A_LOADS; e++)
    if (a_in[e]) As[0][ak[e]][am[e] / 4][am[e] % 4] = ra[e];
  for (int e = 0; e < B_LOADS; e++) Bs[0][bk[e]][bn[e] / 4][bn[e] % 4] = rb[e];
  barrier();
  int tx = tid % TX, ty = tid / TX;
  GEMM_V acc[4] = GEMM_V[4](GEMM_V(0), GEMM_V(0), GEMM_V(0), GEMM_V(0));
  for (int s = 0; s < SLICES; s++) {
    int cur = s & 1;
    bool more = s + 1 < SLICES;
    if (more) { /* the next slice, into registers */
      int k1 = (s + 1) * BK;
      for (int e = 0; e < A_LOADS; e++)
        if (a_in[e]) ra[e] = GEMM_A(arow[e], k1 + ak[e]);
      for (int e = 0; e < B_LOADS; e++) rb[e] = GEMM_B_AT(e, k1 + bk[e]);
    }
    for (int kk = 0; kk < BK; kk++) {
      GEMM_V a = As[cur][kk][ty];
      GEMM_V bv = Bs[cur][kk][tx];
      acc[0] += a.x * bv;
      acc[1] += a.y * bv;
      acc[2] += a.z * bv;
      acc[3] += a.w * bv;
    }
    if (more) {
      for (int e = 0; e < A_LOADS; e++)
        if (a_in[e]) As[cur ^ 1][ak[e]][am[e] / 4][am[e] % 4] = ra[e];
      for (int e = 0; e < B_LOADS; e++) Bs[cur ^ 1][bk[e]][bn[e] / 4][bn[e] % 4] = rb[e];
    }
    barrier();
  }
  for (int i = 0; i < 4; i++) {
    int m = m0 + 4 * ty + i;
    for (int c = 0; c < 4; c++) {
      int n = n0 + 4 * tx + c;
      if (m < GEMM_M && n < GEMM_N) GEMM_STORE_AT(b, m, n, acc[i][c]);
    }
  }
}
