#version 450
/*
 * conv2d_cpu.comp: stablehlo.convolution as an implicit GEMM, register-
 * blocked for CPU Vulkan devices (lavapipe, SwiftShader), f32 (f16/bf16
 * and integers through the element hooks CONV_LHS_AT / CONV_RHS_AT /
 * CONV_STORE, integers summed as ints with CONV_INT: codegen/emit_conv.c
 * "16-bit and integer convolutions").
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
 *   CONV_ROWS                           1: a tile is TILE_P (<= OW)
 *                                       consecutive pixels of one output
 *                                       row (the row's last tile starts
 *                                       early, overlapping its neighbour,
 *                                       and stores only its own pixels);
 *                                       per window row and input feature
 *                                       the SPAN inputs its windows cover
 *                                       are loaded once for all KW window
 *                                       columns.  0: flattened tiles.
 *   LHS_WORDS, LHS_PXW                  inputs as 64-bit words (lavapipe's
 *                                       cost is per loaded component, two
 *                                       floats per 64-bit one): 1, eight
 *                                       consecutive input features per
 *                                       u64vec4 (LHS_SC 1, CG % 8 == 0, the
 *                                       other strides multiples of 8); 2,
 *                                       flattened tiles of consecutive
 *                                       pixels (1x1, stride 1, unpadded
 *                                       NCHW), LHS_PXW (8 or 4) per
 *                                       u64vec4 or u64vec2 (offsets and
 *                                       TILE_P multiples of it); 0 scalars
 *   RHS_WORDS                           1: consecutive output features
 *                                       (RHS_SO 1, even offsets) as 64-bit
 *                                       words shared by the subgroup
 *                                       (TILE_C % (2 SGS) == 0)
 *   OUT_WORDS                           1: results of consecutive features
 *                                       (OUT_SC 1) stored 8 per u64vec4
 *                                       (TILE_C and the other strides
 *                                       multiples of 8); 2 (with
 *                                       LHS_WORDS 2): the tile's
 *                                       consecutive result pixels, LHS_PXW
 *                                       per store
 *   CONV_EPILOGUE(acc, pos)             the value stored at linear output
 *                                       position pos (an int) for the sum
 *                                       acc: the fused epilogue (bias,
 *                                       batch-norm, residual, relu) as a
 *                                       generated function; default acc.
 *   CONV_STORE(pos, v)                  stores result value v (a float) at
 *                                       pos; default conv_out[pos] = v (the
 *                                       emitter's rounds and narrows for
 *                                       16-bit results)
 *   CONV_LHS_AT(i), CONV_RHS_AT(i)      the float input / weight at element
 *                                       i; CONV_LHS_W_AT(i) the input word
 *                                       i (u64vec4 or u64vec2, as LHS_WORDS
 *                                       and LHS_PXW say), CONV_RHS_W_AT(i)
 *                                       the weight word i (uint64_t).
 *                                       Default: the storage buffers below;
 *                                       where the device has texel buffers
 *                                       the emitter reads them through
 *                                       texel views of the same bindings
 *                                       (codegen_declare_word_view and
 *                                       codegen_declare_element_view), one
 *                                       vector load or gather per lane on
 *                                       lavapipe instead of a loop over the
 *                                       lanes.  Taps in the padding are
 *                                       read at index 0 and dropped: no
 *                                       read leaves its binding.
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
#ifndef CONV_ROWS
#define CONV_ROWS 0
#endif
#ifndef LHS_WORDS
#define LHS_WORDS 0
#endif
#ifndef RHS_WORDS
#define RHS_WORDS 0
#endif
#ifndef OUT_WORDS
#define OUT_WORDS 0
#endif
#if CONV_SGS > 0
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#if LHS_WORDS > 0 || RHS_WORDS > 0 || OUT_WORDS > 0
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

layout(local_size_x = 64) in;
layout(std430, set = 0, binding = LHS_BINDING) readonly buffer ConvLhs { float conv_lhs[]; };
layout(std430, set = 0, binding = RHS_BINDING) readonly buffer ConvRhs { float conv_rhs[]; };
layout(std430, set = 0, binding = OUT_BINDING) writeonly buffer ConvOut { float conv_out[]; };
#ifndef LHS_PXW
#define LHS_PXW 8
#endif
#if LHS_WORDS == 1 || (LHS_WORDS == 2 && LHS_PXW == 8)
layout(std430, set = 0, binding = LHS_BINDING) readonly buffer ConvLhsW { u64vec4 conv_lhs_w[]; };
#elif LHS_WORDS == 2
layout(std430, set = 0, binding = LHS_BINDING) readonly buffer ConvLhsW { u64vec2 conv_lhs_w[]; };
#endif
#if RHS_WORDS == 1
layout(std430, set = 0, binding = RHS_BINDING) readonly buffer ConvRhsW { uint64_t conv_rhs_w[]; };
#endif
#if OUT_WORDS == 1 || (OUT_WORDS == 2 && LHS_PXW == 8)
layout(std430, set = 0, binding = OUT_BINDING) writeonly buffer ConvOutW { u64vec4 conv_out_w[]; };
#elif OUT_WORDS == 2
layout(std430, set = 0, binding = OUT_BINDING) writeonly buffer ConvOutW { u64vec2 conv_out_w[]; };
#endif
#if LHS_WORDS > 0 || RHS_WORDS > 0
/* the two floats of a 64-bit word (the lower address first) */
vec2 conv_f2(uint64_t u) { return uintBitsToFloat(unpackUint2x32(u)); }
#endif
#if OUT_WORDS > 0
uint64_t conv_w2(float a, float b) { return packUint2x32(floatBitsToUint(vec2(a, b))); }
#endif
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
#ifndef CONV_LHS_W_AT
#define CONV_LHS_W_AT(i) conv_lhs_w[i]
#endif
#ifndef CONV_RHS_W_AT
#define CONV_RHS_W_AT(i) conv_rhs_w[i]
#endif

const int CONV_P = CONV_OH * CONV_OW;                  /* output pixels per image */
#if CONV_ROWS
const int CONV_SEGS = (CONV_OW + TILE_P - 1) / TILE_P; /* pixel tiles per output row */
const int CONV_PT = CONV_OH * CONV_SEGS;               /* pixel tiles per image */
/* the input columns the windows of a tile's pixels cover */
const int CONV_SPAN = (TILE_P - 1) * CONV_SW + (CONV_KW - 1) * CONV_DW + 1;
#else
const int CONV_PT = (CONV_P + TILE_P - 1) / TILE_P;    /* pixel tiles per image */
#endif
const int CONV_CG = CONV_C / CONV_G;                   /* input features per group */
const int CONV_OG = CONV_O / CONV_G;                   /* output features per group */
const int CONV_CT = CONV_O / TILE_C;                   /* feature tiles */
const int CONV_LC = 64 / CONV_LP;                      /* feature tiles per workgroup */
const int CONV_PB = (CONV_PT + CONV_LP - 1) / CONV_LP; /* pixel blocks */
const int CONV_CB = (CONV_CT + CONV_LC - 1) / CONV_LC; /* feature blocks */
const uint CONV_GROUPS = uint(CONV_N) * uint(CONV_PB) * uint(CONV_CB);
#if LHS_WORDS == 1
const int CONV_CK = 8; /* input features per step of the reduction loop */
#else
const int CONV_CK = 1;
#endif

/* The TILE_C weights w[o0 + c, ci, kh', kw'] at r, the offset of
 * w[o0, ci, kh', kw']. */
void conv_weights(int r, out CONV_T wv[TILE_C]) {
#if RHS_WORDS == 1 && CONV_SGS > 0
  /* consecutive features (RHS_SO 1), shared by the subgroup: each lane
   * loads TILE_C / (2 SGS) 64-bit words (two features each, r even) and the
   * shuffles hand their halves round */
  float lo[TILE_C / (2 * CONV_SGS)], hi[TILE_C / (2 * CONV_SGS)];
  [[unroll]] for (int k = 0; k < TILE_C / (2 * CONV_SGS); k++) {
    vec2 f = conv_f2(CONV_RHS_W_AT((r >> 1) + k * CONV_SGS + int(gl_SubgroupInvocationID)));
    lo[k] = f.x;
    hi[k] = f.y;
  }
  [[unroll]] for (int c = 0; c < TILE_C; c++)
    wv[c] = subgroupShuffle((c & 1) != 0 ? hi[c / (2 * CONV_SGS)] : lo[c / (2 * CONV_SGS)], uint((c >> 1) % CONV_SGS));
#elif CONV_SGS > 0
  /* the subgroup shares the feature tile: each lane loads TILE_C / SGS of
   * the weights and the shuffles hand them round (in registers), instead
   * of every lane loading all TILE_C */
  CONV_T wl[(TILE_C + CONV_SGS - 1) / CONV_SGS];
  [[unroll]] for (int k = 0; k < (TILE_C + CONV_SGS - 1) / CONV_SGS; k++)
    wl[k] = CONV_RHS_AT(r + min(k * CONV_SGS + int(gl_SubgroupInvocationID), TILE_C - 1) * RHS_SO);
  [[unroll]] for (int c = 0; c < TILE_C; c++) wv[c] = subgroupShuffle(wl[c / CONV_SGS], uint(c % CONV_SGS));
#else
  [[unroll]] for (int c = 0; c < TILE_C; c++) wv[c] = CONV_RHS_AT(r + c * RHS_SO);
#endif
}

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

  CONV_T acc[TILE_P][TILE_C];
  [[unroll]] for (int p = 0; p < TILE_P; p++)
    [[unroll]] for (int c = 0; c < TILE_C; c++) acc[p][c] = CONV_T(0);
  int lbase = n * LHS_SN + g * CONV_CG * LHS_SC;

#if CONV_ROWS
  /* a tile is TILE_P consecutive pixels of one output row (TILE_P <= OW;
   * the row's last tile starts early and overlaps its neighbour): per
   * window row and input feature the SPAN inputs its windows cover are
   * loaded once and serve every window column */
  int oh = pt / CONV_SEGS, seg = pt % CONV_SEGS;
  int ow0 = min(seg * TILE_P, CONV_OW - TILE_P);
  int xbase = ow0 * CONV_SW - CONV_PW;
  for (int kh = 0; kh < CONV_KH; kh++) {
    int y = oh * CONV_SH - CONV_PH + kh * CONV_DH;
    int xoff[CONV_SPAN];
#if CONV_CHECK
    bool yok = y >= 0 && y <= (CONV_H - 1) * CONV_LDH && y % CONV_LDH == 0;
    y = yok ? y / CONV_LDH : 0;
    bool xok[CONV_SPAN];
#endif
    [[unroll]] for (int j = 0; j < CONV_SPAN; j++) {
      int x = xbase + j;
#if CONV_CHECK
      xok[j] = yok && x >= 0 && x <= (CONV_W - 1) * CONV_LDW && x % CONV_LDW == 0;
      x = xok[j] ? x / CONV_LDW : 0;
#endif
      xoff[j] = lbase + y * LHS_SH + x * LHS_SW;
    }
    int khr = CONV_REV_H != 0 ? CONV_KH - 1 - kh : kh;
    int r = o0 * RHS_SO + khr * RHS_SH;
    for (int ci = 0; ci < CONV_CG; ci += CONV_CK) {
#if LHS_WORDS == 1
      /* 8 consecutive input features per load (LHS_SC 1) */
      u64vec4 xw[CONV_SPAN];
      [[unroll]] for (int j = 0; j < CONV_SPAN; j++) {
#if CONV_CHECK
        xw[j] = CONV_LHS_W_AT(xok[j] ? xoff[j] >> 3 : 0);
        xw[j] = xok[j] ? xw[j] : u64vec4(0);
#else
        xw[j] = CONV_LHS_W_AT(xoff[j] >> 3);
#endif
        xoff[j] += 8;
      }
      [[unroll]] for (int kk = 0; kk < 8; kk++) {
        float xs[CONV_SPAN];
        [[unroll]] for (int j = 0; j < CONV_SPAN; j++) xs[j] = conv_f2(xw[j][kk >> 1])[kk & 1];
        int rk = r + kk * RHS_SI;
#else
      {
        CONV_T xs[CONV_SPAN];
        [[unroll]] for (int j = 0; j < CONV_SPAN; j++) {
#if CONV_CHECK
          xs[j] = CONV_LHS_AT(xok[j] ? xoff[j] : 0);
          xs[j] = xok[j] ? xs[j] : CONV_T(0);
#else
          xs[j] = CONV_LHS_AT(xoff[j]);
#endif
          xoff[j] += LHS_SC;
        }
        int rk = r;
#endif
        [[unroll]] for (int kw = 0; kw < CONV_KW; kw++) {
          int kwr = CONV_REV_W != 0 ? CONV_KW - 1 - kw : kw;
          CONV_T wv[TILE_C];
          conv_weights(rk + kwr * RHS_SW, wv);
          [[unroll]] for (int p = 0; p < TILE_P; p++)
            [[unroll]] for (int c = 0; c < TILE_C; c++) acc[p][c] += xs[p * CONV_SW + kw * CONV_DW] * wv[c];
        }
      }
      r += CONV_CK * RHS_SI;
    }
  }
#else
  /* a tile is TILE_P consecutive pixels of the image (row-major over
   * OH x OW; past the end: the last pixel) */
  int p0 = pt * TILE_P;
  int yb[TILE_P], xb[TILE_P];
  [[unroll]] for (int p = 0; p < TILE_P; p++) {
    int q = min(p0 + p, CONV_P - 1);
    yb[p] = (q / CONV_OW) * CONV_SH - CONV_PH;
    xb[p] = (q % CONV_OW) * CONV_SW - CONV_PW;
  }
  for (int kh = 0; kh < CONV_KH; kh++) {
    for (int kw = 0; kw < CONV_KW; kw++) {
      int loff[TILE_P];
#if CONV_CHECK
      bool ok[TILE_P];
#endif
      [[unroll]] for (int p = 0; p < TILE_P; p++) {
        int y = yb[p] + kh * CONV_DH, x = xb[p] + kw * CONV_DW;
#if CONV_CHECK
        ok[p] = y >= 0 && x >= 0 && y <= (CONV_H - 1) * CONV_LDH && x <= (CONV_W - 1) * CONV_LDW &&
                y % CONV_LDH == 0 && x % CONV_LDW == 0;
        y = ok[p] ? y / CONV_LDH : 0;
        x = ok[p] ? x / CONV_LDW : 0;
#endif
        loff[p] = lbase + y * LHS_SH + x * LHS_SW;
      }
      int khr = CONV_REV_H != 0 ? CONV_KH - 1 - kh : kh;
      int kwr = CONV_REV_W != 0 ? CONV_KW - 1 - kw : kw;
      int r = o0 * RHS_SO + khr * RHS_SH + kwr * RHS_SW;
      for (int ci = 0; ci < CONV_CG; ci += CONV_CK) {
#if LHS_WORDS == 1
        /* 8 consecutive input features per load (LHS_SC 1) */
        u64vec4 xw[TILE_P];
        [[unroll]] for (int p = 0; p < TILE_P; p++) {
#if CONV_CHECK
          xw[p] = CONV_LHS_W_AT(ok[p] ? loff[p] >> 3 : 0);
          xw[p] = ok[p] ? xw[p] : u64vec4(0);
#else
          xw[p] = CONV_LHS_W_AT(loff[p] >> 3);
#endif
          loff[p] += 8;
        }
        [[unroll]] for (int kk = 0; kk < 8; kk++) {
          float xs[TILE_P];
          [[unroll]] for (int p = 0; p < TILE_P; p++) xs[p] = conv_f2(xw[p][kk >> 1])[kk & 1];
          int rk = r + kk * RHS_SI;
#elif LHS_WORDS == 2
        /* the tile's pixels are consecutive in memory (a 1x1 window of
         * stride 1 over unpadded NCHW: LHS_SW 1, LHS_SH W), LHS_PXW (8 or
         * 4) per load of a u64vec4 or u64vec2 */
        {
          float xs[TILE_P];
          [[unroll]] for (int v = 0; v < TILE_P / LHS_PXW; v++) {
#if LHS_PXW == 8
            u64vec4 t = CONV_LHS_W_AT((loff[0] >> 3) + v);
#else
            u64vec2 t = CONV_LHS_W_AT((loff[0] >> 2) + v);
#endif
            [[unroll]] for (int k = 0; k < LHS_PXW / 2; k++) {
              vec2 f = conv_f2(t[k]);
              xs[LHS_PXW * v + 2 * k] = f.x;
              xs[LHS_PXW * v + 2 * k + 1] = f.y;
            }
          }
          loff[0] += LHS_SC;
          int rk = r;
#else
        {
          CONV_T xs[TILE_P];
          [[unroll]] for (int p = 0; p < TILE_P; p++) {
#if CONV_CHECK
            xs[p] = CONV_LHS_AT(ok[p] ? loff[p] : 0);
            xs[p] = ok[p] ? xs[p] : CONV_T(0);
#else
            xs[p] = CONV_LHS_AT(loff[p]);
#endif
            loff[p] += LHS_SC;
          }
          int rk = r;
#endif
          CONV_T wv[TILE_C];
          conv_weights(rk, wv);
          [[unroll]] for (int p = 0; p < TILE_P; p++)
            [[unroll]] for (int c = 0; c < TILE_C; c++) acc[p][c] += xs[p] * wv[c];
        }
        r += CONV_CK * RHS_SI;
      }
    }
  }
#endif

#if OUT_WORDS == 2
  /* the flattened tile's pixels are consecutive in the result too (1x1,
   * stride 1, NCHW; no partial tiles): LHS_PXW per store */
  if (live) {
    [[unroll]] for (int c = 0; c < TILE_C; c++) {
      [[unroll]] for (int v = 0; v < TILE_P / LHS_PXW; v++) {
        int pos = n * OUT_SN + (o0 + c) * OUT_SC + p0 + LHS_PXW * v;
#if LHS_PXW == 8
        u64vec4 t;
#else
        u64vec2 t;
#endif
        [[unroll]] for (int k = 0; k < LHS_PXW / 2; k++)
          t[k] = conv_w2(CONV_EPILOGUE(acc[LHS_PXW * v + 2 * k][c], pos + 2 * k),
                         CONV_EPILOGUE(acc[LHS_PXW * v + 2 * k + 1][c], pos + 2 * k + 1));
        conv_out_w[pos / LHS_PXW] = t;
      }
    }
  }
#else
  [[unroll]] for (int p = 0; p < TILE_P; p++) {
#if CONV_ROWS
    int ow = ow0 + p;
    bool mine = ow >= seg * TILE_P; /* not a pixel of the previous tile */
    int obase = n * OUT_SN + oh * OUT_SH + ow * OUT_SW;
#else
    int q = p0 + p;
    bool mine = q < CONV_P;
    int obase = n * OUT_SN + (q / CONV_OW) * OUT_SH + (q % CONV_OW) * OUT_SW;
#endif
    if (live && mine) {
#if OUT_WORDS == 1
      /* consecutive features (OUT_SC 1), 8 per u64vec4 store */
      [[unroll]] for (int v = 0; v < TILE_C / 8; v++) {
        int pos = obase + o0 + 8 * v;
        u64vec4 t;
        [[unroll]] for (int k = 0; k < 4; k++)
          t[k] = conv_w2(CONV_EPILOGUE(acc[p][8 * v + 2 * k], pos + 2 * k),
                         CONV_EPILOGUE(acc[p][8 * v + 2 * k + 1], pos + 2 * k + 1));
        conv_out_w[pos >> 3] = t;
      }
#else
      [[unroll]] for (int c = 0; c < TILE_C; c++) {
        int pos = obase + (o0 + c) * OUT_SC;
        CONV_STORE(pos, CONV_EPILOGUE(acc[p][c], pos));
      }
#endif
    }
  }
#endif
}
