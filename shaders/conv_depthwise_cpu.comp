#version 450
/*
 * conv_depthwise_cpu.comp: a depthwise stablehlo.convolution
 * (feature_group_count = input features, one input feature per group;
 * O / G outputs per input feature, the channel multiplier) for CPU Vulkan
 * devices (lavapipe, SwiftShader), f32 (f16/bf16 and integers through
 * the element hooks, codegen/emit_conv.c "16-bit and integer
 * convolutions").
 *
 * What it computes.  For every output element (n, o, oh, ow), with input
 * feature g = o / (O / G):
 *   out = EPILOGUE(sum over kh < KH, kw < KW of
 *                  lhs[n, g, y, x] * rhs[o, 0, kh', kw'], pos)
 * with the window taps, padding, dilations and reversal exactly as in
 * conv2d_cpu.comp (the same #define hooks, same meaning).
 *
 * Why a kernel of its own.  There is no reduction over input features, so
 * the implicit GEMM's register tile (pixels x features sharing each load)
 * degenerates to one feature: every multiply-add would need its own input
 * load.  Here an invocation computes TILE_W consecutive output pixels of
 * one output row and one feature, and per window row loads the input
 * segment those pixels' windows cover once ((TILE_W - 1) * SW + (KW - 1) *
 * DW + 1 elements, into registers), then takes all KW taps from it: for a
 * 3x3 stride-1 window 10 loads and 3 weight loads serve 24 multiply-adds,
 * against 48 loads in conv2d_cpu.comp with one feature per tile.  No
 * shared memory, no barriers (slow on lavapipe, see conv2d_cpu.comp).
 *
 * Invocations: N * O * OH * ceil(OW / TILE_W), numbered by
 *   gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64
 * and taken apart with the feature fastest when CONV_FEATURE_MINOR is 1
 * (NHWC: neighbouring lanes read neighbouring features) or the row segment
 * fastest otherwise (NCHW: neighbouring lanes read neighbouring pixels).
 * Pixels past the row's end repeat its last pixel and are not stored.
 *
 * Features by words (CONV_WORDS 1: f32, channel multiplier 1, features
 * minor-most in the input, the weights and the result, every other stride
 * a multiple of 8: NHWC with HWIO weights, as JAX exports a depthwise
 * convolution, C a multiple of 8).  lavapipe runs each storage-buffer
 * access as a loop over the SIMD lanes, so one element per access costs as
 * much as eight: here an invocation takes 8 consecutive features of TILE_W
 * pixels and moves them as 64-bit-word vectors (u64vec4, 8 floats): per
 * window row SPAN input words and KW weight words, one word store per
 * pixel.  Every output's sum is the scalar kernel's, in the same order.
 * Invocations: N * O / 8 * OH * ceil(OW / TILE_W), the feature block
 * fastest.
 *
 * Bindings and hooks: those of conv2d_cpu.comp (CONV_*, LHS_S*, RHS_S*,
 * OUT_S*, *_BINDING, CONV_EPILOGUE), with TILE_W (pixels per invocation)
 * and CONV_FEATURE_MINOR instead of TILE_P, TILE_C and CONV_LP, and
 * CONV_LHS_W_AT(i) / CONV_RHS_W_AT(i) (the u64vec4 word i of the input /
 * weights; default: storage-buffer word views) with CONV_WORDS.  The
 * defaults describe a small NCHW 3x3 depthwise convolution so the file
 * compiles standalone.
 */
#extension GL_EXT_control_flow_attributes : require

#ifndef CONV_N
#define CONV_N 1
#define CONV_C 8
#define CONV_H 9
#define CONV_W 9
#define CONV_O 8
#define CONV_OH 9
#define CONV_OW 9
#define CONV_KH 3
#define CONV_KW 3
#define CONV_G 8
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
#define RHS_SO (CONV_KH * CONV_KW)
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
#define TILE_W 8
#define CONV_FEATURE_MINOR 0
#endif
#ifndef CONV_EPILOGUE
#define CONV_EPILOGUE(acc, pos) (acc)
#endif
#ifndef CONV_WORDS
#define CONV_WORDS 0
#endif

layout(local_size_x = 64) in;
layout(std430, set = 0, binding = LHS_BINDING) readonly buffer ConvLhs { float conv_lhs[]; };
layout(std430, set = 0, binding = RHS_BINDING) readonly buffer ConvRhs { float conv_rhs[]; };
layout(std430, set = 0, binding = OUT_BINDING) writeonly buffer ConvOut { float conv_out[]; };
/* reads of the input and the weights: the storage buffers, or texel views
 * of them that the emitter declares (CONV_LHS_AT / CONV_RHS_AT, as in
 * conv2d_cpu.comp) */
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

/* Features per invocation (CONV_FW) and how they are loaded and stored:
 * one element at a time, or 8 features as one u64vec4 word (CONV_WORDS;
 * each word at a multiple of 8 elements, see above). */
#if CONV_WORDS
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define CONV_FW 8
layout(std430, set = 0, binding = LHS_BINDING) readonly buffer ConvLhsW { u64vec4 conv_lhs_w[]; };
layout(std430, set = 0, binding = RHS_BINDING) readonly buffer ConvRhsW { u64vec4 conv_rhs_w[]; };
layout(std430, set = 0, binding = OUT_BINDING) writeonly buffer ConvOutW { u64vec4 conv_out_w[]; };
#ifndef CONV_LHS_W_AT
#define CONV_LHS_W_AT(i) conv_lhs_w[i]
#endif
#ifndef CONV_RHS_W_AT
#define CONV_RHS_W_AT(i) conv_rhs_w[i]
#endif
/* the 8 floats of a word (the lower address first); zeros where !ok */
void conv_unpack8(u64vec4 w, bool ok, out float f[8]) {
  if (!ok) w = u64vec4(0ul); /* +0.0 */
  [[unroll]] for (int k = 0; k < 4; k++) {
    vec2 t = uintBitsToFloat(unpackUint2x32(w[k]));
    f[2 * k] = t.x;
    f[2 * k + 1] = t.y;
  }
}
uint64_t conv_w2(float a, float b) { return packUint2x32(floatBitsToUint(vec2(a, b))); }
#define CONV_LOAD_X(i, ok, v) conv_unpack8(CONV_LHS_W_AT((i) >> 3), ok, v)
#define CONV_LOAD_W(i, v) conv_unpack8(CONV_RHS_W_AT((i) >> 3), true, v)
#else
#define CONV_FW 1
#define CONV_LOAD_X(i, ok, v) v[0] = (ok) ? CONV_LHS_AT(i) : CONV_T(0)
#define CONV_LOAD_W(i, v) v[0] = CONV_RHS_AT(i)
#endif

const int CONV_SEGS = (CONV_OW + TILE_W - 1) / TILE_W;            /* row segments */
const int CONV_SPAN = (TILE_W - 1) * CONV_SW + (CONV_KW - 1) * CONV_DW + 1; /* inputs a segment's windows cover */
const int CONV_OG = CONV_O / CONV_G;                              /* channel multiplier */
const int CONV_OF = CONV_O / CONV_FW;                             /* invocations per pixel tile */
const uint CONV_TOTAL = uint(CONV_N) * uint(CONV_OF) * uint(CONV_OH) * uint(CONV_SEGS);

void main() {
  uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (gid >= CONV_TOTAL) return;
  int seg, f, oh, n;
#if CONV_FEATURE_MINOR || CONV_WORDS
  f = int(gid % uint(CONV_OF));
  int rest = int(gid / uint(CONV_OF));
  seg = rest % CONV_SEGS;
  rest /= CONV_SEGS;
  oh = rest % CONV_OH;
  n = rest / CONV_OH;
#else
  seg = int(gid % uint(CONV_SEGS));
  int rest = int(gid / uint(CONV_SEGS));
  oh = rest % CONV_OH;
  rest /= CONV_OH;
  f = rest % CONV_OF;
  n = rest / CONV_OF;
#endif
  int o = f * CONV_FW; /* the first output feature */
  int g = o / CONV_OG;
  int ow0 = min(seg * TILE_W, CONV_OW - TILE_W); /* a full segment; the last overlaps its neighbour */
  if (CONV_OW < TILE_W) ow0 = 0;
  int xb = ow0 * CONV_SW - CONV_PW;
  int lbase = n * LHS_SN + g * LHS_SC;

  CONV_T acc[TILE_W][CONV_FW];
  [[unroll]] for (int p = 0; p < TILE_W; p++)
    [[unroll]] for (int c = 0; c < CONV_FW; c++) acc[p][c] = CONV_T(0);
  for (int kh = 0; kh < CONV_KH; kh++) {
    int y = oh * CONV_SH - CONV_PH + kh * CONV_DH;
#if CONV_CHECK
    bool row_ok = y >= 0 && y <= (CONV_H - 1) * CONV_LDH && y % CONV_LDH == 0;
    if (!row_ok) continue;
    y /= CONV_LDH;
#endif
    /* the input segment, once */
    CONV_T xs[CONV_SPAN][CONV_FW];
    [[unroll]] for (int j = 0; j < CONV_SPAN; j++) {
      int x = xb + j;
#if CONV_CHECK
      bool ok = x >= 0 && x <= (CONV_W - 1) * CONV_LDW && x % CONV_LDW == 0;
      CONV_LOAD_X(lbase + y * LHS_SH + (ok ? x / CONV_LDW : 0) * LHS_SW, ok, xs[j]);
#else
      CONV_LOAD_X(lbase + y * LHS_SH + x * LHS_SW, true, xs[j]);
#endif
    }
    int khr = CONV_REV_H != 0 ? CONV_KH - 1 - kh : kh;
    [[unroll]] for (int kw = 0; kw < CONV_KW; kw++) {
      int kwr = CONV_REV_W != 0 ? CONV_KW - 1 - kw : kw;
      CONV_T wv[CONV_FW];
      CONV_LOAD_W(o * RHS_SO + khr * RHS_SH + kwr * RHS_SW, wv);
      [[unroll]] for (int p = 0; p < TILE_W; p++)
        [[unroll]] for (int c = 0; c < CONV_FW; c++) acc[p][c] += xs[p * CONV_SW + kw * CONV_DW][c] * wv[c];
    }
  }

  int obase = n * OUT_SN + o * OUT_SC + oh * OUT_SH;
  [[unroll]] for (int p = 0; p < TILE_W; p++) {
    /* the last segment starts early: store only the pixels it owns */
    if (p < CONV_OW && ow0 + p >= seg * TILE_W) {
      int pos = obase + (ow0 + p) * OUT_SW;
#if CONV_WORDS
      u64vec4 t;
      [[unroll]] for (int k = 0; k < 4; k++)
        t[k] = conv_w2(CONV_EPILOGUE(acc[p][2 * k], pos + 2 * k), CONV_EPILOGUE(acc[p][2 * k + 1], pos + 2 * k + 1));
      conv_out_w[pos >> 3] = t;
#else
      CONV_STORE(pos, CONV_EPILOGUE(acc[p][0], pos));
#endif
    }
  }
}
