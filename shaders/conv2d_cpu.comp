#version 450
/*
 * conv2d_cpu.comp: stablehlo.convolution as an implicit GEMM, register-
 * blocked for CPU Vulkan devices (lavapipe, SwiftShader), f32.
 *
 * What it computes.  For every output element (n, o, oh, ow):
 *   out = EPILOGUE(sum over ci < CG, kh < KH, kw < KW of
 *                  lhs[n, g * CG + ci, y, x] * rhs[o, ci, kh', kw'], pos)
 * with g = o / OG (feature groups: CG = C / G input and OG = O / G output
 * features per group; depthwise is G = C), kh' = KH - 1 - kh where the
 * window is reversed, and the input position of the (lhs-dilated, padded)
 * window tap
 *   y' = oh * SH + kh * DH - PH,  x' = ow * SW + kw * DW - PW,
 *   y = y' / LDH, x = x' / LDW (taps with y' % LDH != 0 or outside
 *   [0, (H - 1) * LDH] read zero).
 * As a GEMM: M = N * OH * OW output pixels, N_gemm = O output features,
 * K = CG * KH * KW; the "im2col" matrix is never formed, its elements are
 * read from lhs through the index map above.  A 1x1 convolution without
 * padding or strides is a plain GEMM here: every tap is in range (CONV_CHECK
 * 0), so the loop is loads and FMAs only.
 *
 * Layouts.  Any dimension_numbers: the emitter (codegen/emit_conv.c) passes
 * the element strides of each logical dimension in each tensor (LHS_S*,
 * RHS_S*, OUT_S*), so NCHW/OIHW (PyTorch), NHWC/HWIO (JAX) and any other
 * permutation are the same kernel.  A 1-D convolution is a 2-D one with H = 1.
 *
 * Tiling (why this shape on a CPU device).  lavapipe runs the 64
 * invocations of a workgroup as SIMD lanes, and every storage-buffer access
 * is a loop over the lanes, one scalar load per lane and vector component:
 * the cost is the number of accesses, not bytes.  So each invocation
 * computes a tile of TILE_P consecutive output pixels (row-major over
 * OH x OW, within one image) by TILE_C consecutive output features (in one
 * group), and per reduction step loads TILE_P input elements and TILE_C
 * weights for TILE_P * TILE_C multiply-adds.  The loop runs kh, kw outside
 * and the input features inside, so the bounds checks and addresses of a
 * tap are computed once per tap and the inner loop only adds the feature
 * strides.  No shared memory and no barriers (both slow on lavapipe).
 * A workgroup's 64 lanes take CONV_LP adjacent pixel tiles (of one image)
 * times 64 / CONV_LP adjacent feature tiles: LP = 64 on large images, so
 * the lanes read neighbouring inputs and the same weights; fewer on small
 * ones (7x7 in ResNet's last stage has 7 tiles of 8 pixels), where the
 * other lanes take further feature tiles instead of idling.  Pixels past
 * the end of the last tile repeat the last pixel and are not stored.
 *
 * Workgroups: N * ceil(PT / LP) * ceil(CT / (64 / LP)) (PT pixel tiles,
 * CT = O / TILE_C feature tiles), numbered gl_WorkGroupID.x +
 * gl_WorkGroupID.y * gl_NumWorkGroups.x (2-D dispatch for large counts);
 * those past the count, and lanes past the last tile, return.
 *
 * Bindings (set 0, std430): LHS_BINDING the input, RHS_BINDING the kernel
 * (weights), OUT_BINDING the result, all dense f32 arrays.  In an output
 * fusion these are the fusion's bindings (its operands, then its result),
 * and the epilogue may read other operands through its own declarations.
 *
 * #define hooks (all compile-time literals: the runtime passes no
 * specialization constants, and literal bounds let the compiler unroll the
 * tile loops into registers).  The emitter prepends them after #version;
 * the defaults below describe a small NCHW 3x3 convolution so that the file
 * compiles standalone (the build checks it with spirv-val).
 *   CONV_N, CONV_C, CONV_H, CONV_W      input batch, features, spatial size
 *   CONV_O, CONV_OH, CONV_OW            output features, spatial size
 *   CONV_KH, CONV_KW, CONV_G            window size, feature_group_count
 *   CONV_SH/SW, CONV_DH/DW, CONV_LDH/LDW, CONV_PH/PW
 *                                       window strides, rhs dilation, lhs
 *                                       dilation, low padding
 *   CONV_REV_H/W                        1 where the window is reversed
 *   CONV_CHECK                          0 when every tap is in range
 *   LHS_SN/SC/SH/SW, RHS_SO/SI/SH/SW, OUT_SN/SC/SH/SW
 *                                       element strides (the layouts)
 *   LHS_BINDING, RHS_BINDING, OUT_BINDING
 *   TILE_P, TILE_C                      the register tile (TILE_C divides
 *                                       O / G)
 *   CONV_LP                             pixel tiles per workgroup (a power
 *                                       of two dividing 64; the other
 *                                       64 / LP lanes take feature tiles)
 *   CONV_SGS                            the subgroup size, when the weights
 *                                       are shared by subgroup shuffles
 *                                       (needs CONV_LP a multiple of it);
 *                                       0: every lane loads its own
 *   CONV_EPILOGUE(acc, pos)             the value stored at linear output
 *                                       position pos (an int) for the sum
 *                                       acc: the fused epilogue (bias,
 *                                       batch-norm, residual, relu) as a
 *                                       generated function; default acc.
 */
#extension GL_EXT_control_flow_attributes : require

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
#define TILE_P 4
#define TILE_C 8
#define CONV_LP 32
#endif
#ifndef CONV_EPILOGUE
#define CONV_EPILOGUE(acc, pos) (acc)
#endif
#ifndef CONV_SGS
#define CONV_SGS 0
#endif
#if CONV_SGS > 0
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

layout(local_size_x = 64) in;
layout(std430, set = 0, binding = LHS_BINDING) readonly buffer ConvLhs { float conv_lhs[]; };
layout(std430, set = 0, binding = RHS_BINDING) readonly buffer ConvRhs { float conv_rhs[]; };
layout(std430, set = 0, binding = OUT_BINDING) writeonly buffer ConvOut { float conv_out[]; };

const int CONV_P = CONV_OH * CONV_OW;                  /* output pixels per image */
const int CONV_PT = (CONV_P + TILE_P - 1) / TILE_P;    /* pixel tiles per image */
const int CONV_CG = CONV_C / CONV_G;                   /* input features per group */
const int CONV_OG = CONV_O / CONV_G;                   /* output features per group */
const int CONV_CT = CONV_O / TILE_C;                   /* feature tiles */
const int CONV_LC = 64 / CONV_LP;                      /* feature tiles per workgroup */
const int CONV_PB = (CONV_PT + CONV_LP - 1) / CONV_LP; /* pixel blocks */
const int CONV_CB = (CONV_CT + CONV_LC - 1) / CONV_LC; /* feature blocks */
const uint CONV_GROUPS = uint(CONV_N) * uint(CONV_PB) * uint(CONV_CB);

void main() {
  /* workgroup (n * PB + pb) * CB + cb (the feature blocks of one pixel
   * block run back to back and share its inputs in the cache); lane i:
   * pixel tile pb * LP + i % LP, feature tile cb * LC + i / LP */
  uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= CONV_GROUPS) return;
#if CONV_SGS > 0
  /* subgroups are runs of lanes, each within one feature tile (LP is a
   * multiple of the subgroup size); every lane stays to the end, since the
   * weight shuffles need the whole subgroup */
  int lane = int(gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID);
#else
  int lane = int(gl_LocalInvocationID.x);
#endif
  int cb = int(wg % uint(CONV_CB));
  int rest = int(wg / uint(CONV_CB));
  int pt = (rest % CONV_PB) * CONV_LP + lane % CONV_LP;
  int ct = cb * CONV_LC + lane / CONV_LP;
  int n = rest / CONV_PB;
  bool live = pt < CONV_PT && ct < CONV_CT;
#if CONV_SGS == 0
  if (!live) return;
#endif
  pt = min(pt, CONV_PT - 1);
  ct = min(ct, CONV_CT - 1);
  int o0 = ct * TILE_C;
  int g = o0 / CONV_OG;
  int p0 = pt * TILE_P;

  /* the window origin of each pixel of the tile (past the end: the last pixel) */
  int yb[TILE_P], xb[TILE_P];
  [[unroll]] for (int p = 0; p < TILE_P; p++) {
    int q = min(p0 + p, CONV_P - 1);
    yb[p] = (q / CONV_OW) * CONV_SH - CONV_PH;
    xb[p] = (q % CONV_OW) * CONV_SW - CONV_PW;
  }
  float acc[TILE_P][TILE_C];
  [[unroll]] for (int p = 0; p < TILE_P; p++)
    [[unroll]] for (int c = 0; c < TILE_C; c++) acc[p][c] = 0.0;

  int lbase = n * LHS_SN + g * CONV_CG * LHS_SC;
  for (int kh = 0; kh < CONV_KH; kh++) {
    for (int kw = 0; kw < CONV_KW; kw++) {
      int loff[TILE_P];
      bool ok[TILE_P];
      [[unroll]] for (int p = 0; p < TILE_P; p++) {
        int y = yb[p] + kh * CONV_DH, x = xb[p] + kw * CONV_DW;
#if CONV_CHECK
        ok[p] = y >= 0 && x >= 0 && y <= (CONV_H - 1) * CONV_LDH && x <= (CONV_W - 1) * CONV_LDW &&
                y % CONV_LDH == 0 && x % CONV_LDW == 0;
        y = ok[p] ? y / CONV_LDH : 0;
        x = ok[p] ? x / CONV_LDW : 0;
#else
        ok[p] = true;
#endif
        loff[p] = lbase + y * LHS_SH + x * LHS_SW;
      }
      int khr = CONV_REV_H != 0 ? CONV_KH - 1 - kh : kh;
      int kwr = CONV_REV_W != 0 ? CONV_KW - 1 - kw : kw;
      int roff = o0 * RHS_SO + khr * RHS_SH + kwr * RHS_SW;
      for (int ci = 0; ci < CONV_CG; ci++) {
        float wv[TILE_C];
#if CONV_SGS > 0
        /* the subgroup shares the feature tile: each lane loads TILE_C /
         * SGS of its weights and the shuffles hand them round (in
         * registers), instead of every lane loading all TILE_C */
        float wl[(TILE_C + CONV_SGS - 1) / CONV_SGS];
        [[unroll]] for (int k = 0; k < (TILE_C + CONV_SGS - 1) / CONV_SGS; k++)
          wl[k] = conv_rhs[roff + min(k * CONV_SGS + int(gl_SubgroupInvocationID), TILE_C - 1) * RHS_SO];
        [[unroll]] for (int c = 0; c < TILE_C; c++) wv[c] = subgroupShuffle(wl[c / CONV_SGS], uint(c % CONV_SGS));
#else
        [[unroll]] for (int c = 0; c < TILE_C; c++) wv[c] = conv_rhs[roff + c * RHS_SO];
#endif
        [[unroll]] for (int p = 0; p < TILE_P; p++) {
          float xv = conv_lhs[loff[p]];
#if CONV_CHECK
          xv = ok[p] ? xv : 0.0;
#endif
          [[unroll]] for (int c = 0; c < TILE_C; c++) acc[p][c] += xv * wv[c];
          loff[p] += LHS_SC;
        }
        roff += RHS_SI;
      }
    }
  }

  [[unroll]] for (int p = 0; p < TILE_P; p++) {
    int q = p0 + p;
    if (live && q < CONV_P) {
      int obase = n * OUT_SN + (q / CONV_OW) * OUT_SH + (q % CONV_OW) * OUT_SW;
      [[unroll]] for (int c = 0; c < TILE_C; c++) {
        int pos = obase + (o0 + c) * OUT_SC;
        conv_out[pos] = CONV_EPILOGUE(acc[p][c], pos);
      }
    }
  }
}
