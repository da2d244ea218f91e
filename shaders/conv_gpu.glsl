/*
 * conv_gpu.glsl: stablehlo.convolution as an implicit GEMM for GPUs, f32
 * (or f16/bf16 loaded as f32) in, f32 accumulated (never TF32 or f16), the
 * result stored by CONV_STORE (narrowed to a 16-bit type once, as
 * codegen/emit_conv.c's "16-bit and integer convolutions" says; integers
 * as ints with CONV_INT and GEMM_INT): the hooks through
 * which shaders/gemm_gpu.comp computes it (codegen/emit_conv.c puts this
 * file, after its #defines, in front of gemm_gpu.comp's body).
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
 * Tiling: gemm_gpu.comp's, with GEMM_BATCH the feature groups, GEMM_M = GM,
 * GEMM_N = OG, GEMM_K = GK: one workgroup of 256 invocations per 64 x 64
 * tile (64 output pixels by 64 output features of one group), 4 x 4 per
 * invocation, the reduction 16 taps at a time through double-buffered
 * shared slices.  A's rows are known by conv_row's (offset, y, x), its
 * elements read by conv_a; B's by conv_b; results stored by conv_store.
 *
 * Order of the taps, and which loads coalesce.  When the input's features
 * are its minor dimension (LHS_SC 1: NHWC), the reduction runs the input
 * features innermost (k = (kh * KW + kw) * CG + ci) and consecutive
 * invocations load consecutive taps of one pixel: consecutive addresses.
 * Otherwise (NCHW) it runs the window columns innermost
 * (k = (ci * KH + kh) * KW + kw) and consecutive invocations load the same
 * tap of consecutive pixels, which lie next to each other along a row
 * (GEMM_A_M_FAST).  The weights: consecutive invocations take consecutive
 * output features where those are the weights' minor dimension (RHS_SO 1:
 * HWIO), else consecutive taps (OIHW, window columns innermost:
 * GEMM_B_K_FAST).  The sum of each output runs over k in that order (a
 * convolution's sum has no order in the spec; the tests compare with the
 * per-element kernel within 1e-5 of the largest output).
 *
 * Workgroups: G * ceil(GM / 64) * ceil(OG / 64), feature tiles fastest
 * (neighbouring workgroups read the same input slice).
 *
 * Its own hooks: conv2d_cpu.comp's geometry, layout and binding #defines (CONV_N,
 * CONV_C, CONV_H, CONV_W, CONV_O, CONV_OH, CONV_OW, CONV_KH, CONV_KW,
 * CONV_G, CONV_SH/SW, CONV_DH/DW, CONV_LDH/LDW, CONV_PH/PW, CONV_REV_H/W,
 * CONV_CHECK, LHS_S*, RHS_S*, OUT_S*, LHS_BINDING, RHS_BINDING,
 * OUT_BINDING), CONV_EPILOGUE(acc, pos) and CONV_LHS_AT(i) /
 * CONV_RHS_AT(i) (element reads; default the storage buffers below).
 * None of the CPU kernel's tile and word hooks; no defaults (the emitter
 * always writes them).  The tile shape is gemm_gpu.comp's untuned default,
 * not a measured optimum: no GPU was available when this was written, and
 * it was checked for correctness on lavapipe ($VKHLO_CONV_KERNEL=gpu,
 * tests/e2e_conv.c).
 */
#ifndef CONV_EPILOGUE
#define CONV_EPILOGUE(acc, pos) (acc)
#endif
layout(std430, set = 0, binding = LHS_BINDING) readonly buffer ConvLhs { float conv_lhs[]; };
layout(std430, set = 0, binding = RHS_BINDING) readonly buffer ConvRhs { float conv_rhs[]; };
layout(std430, set = 0, binding = OUT_BINDING) writeonly buffer ConvOut { float conv_out[]; };
/* the kernel's value type: int for integer convolutions (CONV_INT: sums
 * wrapping modulo 2^32, the result's low bits taken by the epilogue, as
 * shaders/gemm_cpu.comp's "Integer operands"), else float */
#if defined(CONV_INT)
#define CONV_T int
#else
#define CONV_T float
#endif
#ifndef CONV_STORE
#define CONV_STORE(pos, v) conv_out[pos] = (v)
#endif
#ifndef CONV_LHS_AT
#define CONV_LHS_AT(i) conv_lhs[i]
#endif
#ifndef CONV_RHS_AT
#define CONV_RHS_AT(i) conv_rhs[i]
#endif

const int CONV_P = CONV_OH * CONV_OW; /* output pixels per image */
const int CONV_CG = CONV_C / CONV_G;  /* input features per group */
const int CONV_OG = CONV_O / CONV_G;  /* output features per group */
#define GEMM_GENERATED
#define GEMM_BATCH CONV_G
#define GEMM_M (CONV_N * CONV_P)
#define GEMM_N CONV_OG
#define GEMM_K (CONV_CG * CONV_KH * CONV_KW)

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

/* Element k of a GEMM row (0 in the padding, the dilation holes, past K). */
CONV_T conv_a(ivec3 row, int k) {
  if (k >= GEMM_K) return CONV_T(0);
  int ci, kh, kw;
  conv_tap(k, ci, kh, kw);
  int y = row.y + kh * CONV_DH, x = row.z + kw * CONV_DW;
#if CONV_CHECK
  if (y < 0 || x < 0 || y > (CONV_H - 1) * CONV_LDH || x > (CONV_W - 1) * CONV_LDW || y % CONV_LDH != 0 ||
      x % CONV_LDW != 0)
    return CONV_T(0);
  y /= CONV_LDH;
  x /= CONV_LDW;
#endif
  return CONV_LHS_AT(row.x + ci * LHS_SC + y * LHS_SH + x * LHS_SW);
}

/* Weight k of the output feature whose weights start at |col|. */
CONV_T conv_b(int col, int k) {
  if (k >= GEMM_K) return CONV_T(0);
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

/* The result of output feature |n| of group |g| at GEMM row |m|. */
void conv_store(int g, int m, int n, CONV_T acc) {
  int img = m / CONV_P, p = m % CONV_P;
  int pos = img * OUT_SN + (g * CONV_OG + n) * OUT_SC + (p / CONV_OW) * OUT_SH + (p % CONV_OW) * OUT_SW;
  CONV_STORE(pos, CONV_EPILOGUE(acc, pos));
}

#define GEMM_A_ROW_T ivec3
#define GEMM_A_ROW(g, m) conv_row(g, m)
#define GEMM_A(row, k) conv_a(row, k)
#define GEMM_B_COL(g, n) (((g) * CONV_OG + (n)) * RHS_SO)
#define GEMM_B(col, k) conv_b(col, k)
#define GEMM_STORE_AT(g, m, n, v) conv_store(g, m, n, v)
#if LHS_SC != 1
#define GEMM_A_M_FAST 1
#endif
#if RHS_SO != 1
#define GEMM_B_K_FAST 1
#endif
