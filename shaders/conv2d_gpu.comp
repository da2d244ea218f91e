#version 450
/*
 * conv2d_gpu.comp: stablehlo.convolution as an implicit GEMM for GPUs, f32
 * in, f32 accumulated, f32 out (never TF32 or f16).
 *
 * What it computes: the same as conv2d_cpu.comp (see there for the index
 * map of a window tap, feature groups, lhs and rhs dilation, padding and
 * window reversal).  As a GEMM per feature group g: rows are the
 * GM = N * OH * OW output pixels of all images, columns the OG = O / G
 * output features of the group, the reduction the GK = CG * KH * KW taps
 * (input feature, window row, window column).  The "im2col" matrix is
 * never formed: each element is read from the input through the index map
 * when a slice of it is staged in shared memory, and taps in the padding
 * or in the holes of an lhs dilation, and reduction steps past GK, are 0.
 *
 * Tiling: gemm_gpu.comp's.  One workgroup of 256 invocations per 64 x 64
 * tile (64 output pixels by 64 output features of one group); invocation
 * (ty, tx) of the 16 x 16 grid accumulates 4 pixels x 4 features in
 * registers.  The reduction advances 16 taps at a time through two shared
 * slices (double buffering, one barrier per slice): each invocation
 * loads its 4 elements of the next input slice and 4 of the next weight
 * slice into registers while the workgroup computes on the current one.
 *
 * Order of the taps, and which loads coalesce.  When the input's features
 * are its minor dimension (LHS_SC 1: NHWC), the reduction runs the input
 * features innermost (k = (kh * KW + kw) * CG + ci) and consecutive
 * invocations load consecutive taps of one pixel: consecutive addresses.
 * Otherwise (NCHW) it runs the window columns innermost
 * (k = (ci * KH + kh) * KW + kw) and consecutive invocations load the same
 * tap of consecutive pixels, which lie next to each other along a row.
 * The weights: consecutive invocations take consecutive output features
 * where those are the weights' minor dimension (RHS_SO 1: HWIO), else
 * consecutive taps (OIHW, window columns innermost).  The sum of each
 * output runs over k in that order (a convolution's sum has no order in
 * the spec; the tests compare with the per-element kernel within 1e-5 of
 * the largest output).
 *
 * Workgroups: G * ceil(GM / 64) * ceil(OG / 64), numbered
 * gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x (2-D dispatch
 * for large counts), feature tiles fastest (neighbouring workgroups read
 * the same input slice); those past the count return at once (uniform in
 * the workgroup: no barrier is skipped by part of it).  Rows past GM and
 * columns past OG load a clamped pixel / feature and are not stored.
 *
 * Hooks: conv2d_cpu.comp's geometry, layout and binding #defines (CONV_N,
 * CONV_C, CONV_H, CONV_W, CONV_O, CONV_OH, CONV_OW, CONV_KH, CONV_KW,
 * CONV_G, CONV_SH/SW, CONV_DH/DW, CONV_LDH/LDW, CONV_PH/PW, CONV_REV_H/W,
 * CONV_CHECK, LHS_S*, RHS_S*, OUT_S*, LHS_BINDING, RHS_BINDING,
 * OUT_BINDING), CONV_EPILOGUE(acc, pos) and CONV_LHS_AT(i) /
 * CONV_RHS_AT(i) (element reads; default the storage buffers below).
 * None of the CPU kernel's tile and word hooks.  The tile shape is fixed
 * here; it is gemm_gpu.comp's untuned default, not a measured optimum: no
 * GPU was available when this was written, and it was checked for
 * correctness on lavapipe ($VKHLO_CONV_KERNEL=gpu, tests/e2e_conv.c).
 */
#ifndef CONV_N
#define CONV_N 1
#define CONV_C 8
#define CONV_H 9
#define CONV_W 9
#define CONV_O 16
#define CONV_OH 9
#define CONV_OW 9
#define CONV_KH 3
#define CONV_KW 3
#define CONV_G 1
#define CONV_SH 1
#define CONV_SW 1
#define CONV_DH 1
#define CONV_DW 1
#define CONV_LDH 1
#define CONV_LDW 1
#define CONV_PH 1
#define CONV_PW 1
#define CONV_REV_H 0
#define CONV_REV_W 0
#define CONV_CHECK 1
#define LHS_SN (CONV_C * CONV_H * CONV_W)
#define LHS_SC (CONV_H * CONV_W)
#define LHS_SH CONV_W
#define LHS_SW 1
#define RHS_SO (CONV_C / CONV_G * CONV_KH * CONV_KW)
#define RHS_SI (CONV_KH * CONV_KW)
#define RHS_SH CONV_KW
#define RHS_SW 1
#define OUT_SN (CONV_O * CONV_OH * CONV_OW)
#define OUT_SC (CONV_OH * CONV_OW)
#define OUT_SH CONV_OW
#define OUT_SW 1
#define LHS_BINDING 0
#define RHS_BINDING 1
#define OUT_BINDING 2
#endif
#ifndef CONV_EPILOGUE
#define CONV_EPILOGUE(acc, pos) (acc)
#endif

layout(local_size_x = 256) in;
layout(std430, set = 0, binding = LHS_BINDING) readonly buffer ConvLhs { float conv_lhs[]; };
layout(std430, set = 0, binding = RHS_BINDING) readonly buffer ConvRhs { float conv_rhs[]; };
layout(std430, set = 0, binding = OUT_BINDING) writeonly buffer ConvOut { float conv_out[]; };
#ifndef CONV_LHS_AT
#define CONV_LHS_AT(i) conv_lhs[i]
#endif
#ifndef CONV_RHS_AT
#define CONV_RHS_AT(i) conv_rhs[i]
#endif

#define BM 64
#define BN 64
#define BK 16

const int CONV_P = CONV_OH * CONV_OW;       /* output pixels per image */
const int CONV_CG = CONV_C / CONV_G;        /* input features per group */
const int CONV_OG = CONV_O / CONV_G;        /* output features per group */
const int GM = CONV_N * CONV_P;             /* GEMM rows */
const int GK = CONV_CG * CONV_KH * CONV_KW; /* reduction length */
const int TILES_M = (GM + BM - 1) / BM;
const int TILES_N = (CONV_OG + BN - 1) / BN;
const int TILES = CONV_G * TILES_M * TILES_N;
const int SLICES = (GK + BK - 1) / BK;

shared vec4 As[2][BK][BM / 4]; /* input tap k0 + kk of pixel m0 + 4 i + c at As[.][kk][i][c] */
shared vec4 Bs[2][BK][BN / 4]; /* weight tap k0 + kk of feature n0 + 4 j + c at Bs[.][kk][j][c] */

/* Reduction index k -> input feature ci, window row kh, window column kw
 * (the order in the essay). */
void conv_tap(int k, out int ci, out int kh, out int kw) {
#if LHS_SC == 1
  ci = k % CONV_CG;
  kw = (k / CONV_CG) % CONV_KW;
  kh = k / (CONV_CG * CONV_KW);
#else
  kw = k % CONV_KW;
  kh = (k / CONV_KW) % CONV_KH;
  ci = k / (CONV_KW * CONV_KH);
#endif
}

/* The input pixel a GEMM row reads from: (offset of its image and group's
 * first feature, y and x of its window's first tap before lhs dilation). */
ivec3 conv_row(int g, int m) {
  int n = m / CONV_P, p = m % CONV_P;
  return ivec3(n * LHS_SN + g * CONV_CG * LHS_SC, (p / CONV_OW) * CONV_SH - CONV_PH, (p % CONV_OW) * CONV_SW - CONV_PW);
}

/* Element k of a GEMM row (0 in the padding, the dilation holes, past GK). */
float conv_a(ivec3 row, int k) {
  if (k >= GK) return 0.0;
  int ci, kh, kw;
  conv_tap(k, ci, kh, kw);
  int y = row.y + kh * CONV_DH, x = row.z + kw * CONV_DW;
#if CONV_CHECK
  if (y < 0 || x < 0 || y > (CONV_H - 1) * CONV_LDH || x > (CONV_W - 1) * CONV_LDW || y % CONV_LDH != 0 ||
      x % CONV_LDW != 0)
    return 0.0;
  y /= CONV_LDH;
  x /= CONV_LDW;
#endif
  return CONV_LHS_AT(row.x + ci * LHS_SC + y * LHS_SH + x * LHS_SW);
}

/* Weight k of the output feature whose weights start at |col|. */
float conv_b(int col, int k) {
  if (k >= GK) return 0.0;
  int ci, kh, kw;
  conv_tap(k, ci, kh, kw);
#if CONV_REV_H
  kh = CONV_KH - 1 - kh;
#endif
#if CONV_REV_W
  kw = CONV_KW - 1 - kw;
#endif
  return CONV_RHS_AT(col + ci * RHS_SI + kh * RHS_SH + kw * RHS_SW);
}

void main() {
  int tile = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  if (tile >= TILES) return;
  int tid = int(gl_LocalInvocationID.x);
  int tn = tile % TILES_N, tm = (tile / TILES_N) % TILES_M, g = tile / (TILES_N * TILES_M);
  int m0 = tm * BM, n0 = tn * BN;
  /* this invocation's 4 elements of each slice: input (am[e], ak[e]),
   * weights (bk[e], bn[e]), the fastest index following the tid */
  int am[4], ak[4], bk[4], bn[4];
  ivec3 rows[4];
  int cols[4];
  for (int e = 0; e < 4; e++) {
#if LHS_SC == 1
    ak[e] = tid % BK;
    am[e] = tid / BK + (256 / BK) * e;
#else
    am[e] = tid % BM;
    ak[e] = tid / BM + (256 / BM) * e;
#endif
#if RHS_SO == 1
    bn[e] = tid % BN;
    bk[e] = tid / BN + (256 / BN) * e;
#else
    bk[e] = tid % BK;
    bn[e] = tid / BK + (256 / BK) * e;
#endif
    rows[e] = conv_row(g, min(m0 + am[e], GM - 1));
    cols[e] = (g * CONV_OG + min(n0 + bn[e], CONV_OG - 1)) * RHS_SO;
  }
  float ra[4], rb[4];
  for (int e = 0; e < 4; e++) {
    ra[e] = conv_a(rows[e], ak[e]);
    rb[e] = conv_b(cols[e], bk[e]);
  }
  for (int e = 0; e < 4; e++) {
    As[0][ak[e]][am[e] / 4][am[e] % 4] = ra[e];
    Bs[0][bk[e]][bn[e] / 4][bn[e] % 4] = rb[e];
  }
  barrier();
  int tx = tid % 16, ty = tid / 16;
  vec4 acc[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
  for (int s = 0; s < SLICES; s++) {
    int cur = s & 1;
    bool more = s + 1 < SLICES;
    if (more) { /* the next slice, into registers */
      int k1 = (s + 1) * BK;
      for (int e = 0; e < 4; e++) {
        ra[e] = conv_a(rows[e], k1 + ak[e]);
        rb[e] = conv_b(cols[e], k1 + bk[e]);
      }
    }
    for (int kk = 0; kk < BK; kk++) {
      vec4 a = As[cur][kk][ty];
      vec4 bv = Bs[cur][kk][tx];
      acc[0] += a.x * bv;
      acc[1] += a.y * bv;
      acc[2] += a.z * bv;
      acc[3] += a.w * bv;
    }
    if (more) {
      for (int e = 0; e < 4; e++) {
        As[cur ^ 1][ak[e]][am[e] / 4][am[e] % 4] = ra[e];
        Bs[cur ^ 1][bk[e]][bn[e] / 4][bn[e] % 4] = rb[e];
      }
    }
    barrier();
  }
  for (int i = 0; i < 4; i++) {
    int m = m0 + 4 * ty + i;
    if (m >= GM) continue;
    int n = m / CONV_P, p = m % CONV_P;
    int base = n * OUT_SN + (p / CONV_OW) * OUT_SH + (p % CONV_OW) * OUT_SW;
    for (int c = 0; c < 4; c++) {
      int col = n0 + 4 * tx + c;
      if (col >= CONV_OG) continue;
      int pos = base + (g * CONV_OG + col) * OUT_SC;
      conv_out[pos] = CONV_EPILOGUE(acc[i][c], pos);
    }
  }
}
