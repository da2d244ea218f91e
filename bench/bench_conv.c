/*
 * bench_conv: every distinct convolution layer of ResNet-50 v1.5 (batch 1,
 * 224x224 input, f32) in both layouts a model arrives in: NCHW activations
 * with OIHW weights (as PyTorch exports) and NHWC with HWIO (as JAX
 * exports); then (f32 only) three transposed convolutions against their
 * zero-interleaved form (see tlayer_t), and the 3x3 layers' weight
 * gradients against their forward convolutions (weight_gradient_program).  Two configurations of the library compile and run each layer
 * in the same run: the baseline ("base") and the default ("new"), each a
 * context of its own.  The baseline's context is created with the
 * environment BENCH_CONV_BASE added (the VKHLO_CONV_* variables are read
 * when a context is created; default
 * "VKHLO_CONV_KERNEL=generic": the general implicit-GEMM kernel of
 * shaders/conv2d_cpu.comp without the layer-specific paths that
 * codegen/emit_conv.c picks; "VKHLO_CONV_KERNEL=elemental" is the
 * per-element kernel, minutes per sweep).  On a GPU the default is
 * shaders/conv_gpu.glsl and the default baseline the per-element kernel
 * (the CPU kernels' general form is not taken there).
 *
 * Each layer is a one-convolution program (plus, in the "+bias+relu" rows,
 * the fused epilogue of a bias add and a relu).  Times are device time
 * (vkhlo_executable_set_profiling: timestamps around the dispatch), the
 * median over REPEAT executions after one warm-up; each round runs the
 * baseline and the new kernel back to back and the ratio column is the
 * median of the per-round ratios of device time.  "cpu" is the process's
 * CPU time (user + system, all lavapipe threads) per execution, the
 * minimum over the rounds, and "cpu r" base cpu / new cpu: on this shared
 * 2-core machine wall and device time swing with the other load, the
 * least disturbed CPU time much less.  GFLOP/s counts
 * 2 * N * O * OH * OW * (C / G) * KH * KW over the device time.
 *
 *   bench_conv [REPEAT [FILTER]]   (default 3; FILTER: a substring of the
 *                                   row names, e.g. "nhwc" or "s3 3x3")
 *   $BENCH_CONV_BASE="VAR=VALUE[,VAR=VALUE]"  the baseline's environment
 *   $VKHLO_CONV_TILE etc.           both configurations' (see emit_conv.h),
 *                                   unless BENCH_CONV_BASE sets them
 *   $BENCH_CONV_SKIP_OLD=1          no baseline
 *   $BENCH_CONV_TYPE=f16|bf16|i8    the layers in that element type (i8:
 *                                   into i32, inputs in [-8, 8)); with
 *                                   BENCH_CONV_BASE=VKHLO_CONV_KERNEL=elemental
 *                                   the baseline is the path such
 *                                   convolutions took before the kernels
 *                                   had them (default f32)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "api/internal.h" /* exe_element_value */
#include "vkhlo/vkhlo.h"

typedef struct layer {
  const char *name;
  int c, h, o, k, stride, pad;
  bool epilogue; /* + bias + relu, fused */
} layer_t;

/* ResNet-50 v1.5: the stride of a stage's first block is in its 3x3
 * convolution and its projection shortcut. */
static const layer_t layers[] = {
    {"stem 7x7/2 3->64", 3, 224, 64, 7, 2, 3, false},
    {"s1 1x1 64->64", 64, 56, 64, 1, 1, 0, false},
    {"s1 3x3 64->64", 64, 56, 64, 3, 1, 1, false},
    {"s1 1x1 64->256 (+proj)", 64, 56, 256, 1, 1, 0, false},
    {"s1 1x1 256->64", 256, 56, 64, 1, 1, 0, false},
    {"s2 1x1 256->128", 256, 56, 128, 1, 1, 0, false},
    {"s2 3x3/2 128->128", 128, 56, 128, 3, 2, 1, false},
    {"s2 1x1 128->512", 128, 28, 512, 1, 1, 0, false},
    {"s2 proj 1x1/2 256->512", 256, 56, 512, 1, 2, 0, false},
    {"s2 1x1 512->128", 512, 28, 128, 1, 1, 0, false},
    {"s2 3x3 128->128", 128, 28, 128, 3, 1, 1, false},
    {"s3 1x1 512->256", 512, 28, 256, 1, 1, 0, false},
    {"s3 3x3/2 256->256", 256, 28, 256, 3, 2, 1, false},
    {"s3 1x1 256->1024", 256, 14, 1024, 1, 1, 0, false},
    {"s3 proj 1x1/2 512->1024", 512, 28, 1024, 1, 2, 0, false},
    {"s3 1x1 1024->256", 1024, 14, 256, 1, 1, 0, false},
    {"s3 3x3 256->256", 256, 14, 256, 3, 1, 1, false},
    {"s4 1x1 1024->512", 1024, 14, 512, 1, 1, 0, false},
    {"s4 3x3/2 512->512", 512, 14, 512, 3, 2, 1, false},
    {"s4 1x1 512->2048", 512, 7, 2048, 1, 1, 0, false},
    {"s4 proj 1x1/2 1024->2048", 1024, 14, 2048, 1, 2, 0, false},
    {"s4 1x1 2048->512", 2048, 7, 512, 1, 1, 0, false},
    {"s4 3x3 512->512", 512, 7, 512, 3, 1, 1, false},
    {"s3 3x3 +bias+relu", 256, 14, 256, 3, 1, 1, true},
};

static void die(vkhlo_status_t st, const char *what) {
  fprintf(stderr, "bench_conv: %s: %s\n", what, vkhlo_status_message(st));
  exit(2);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int out_size(const layer_t *l) { return (l->h + 2 * l->pad - l->k) / l->stride + 1; }

/* The operand element type ($BENCH_CONV_TYPE) and the result's. */
typedef struct types {
  const char *in, *out;
} types_t;

/* The program of layer |l| in NCHW/OIHW (nhwc false) or NHWC/HWIO. */
static char *program(const layer_t *l, bool nhwc, const types_t *ty) {
  int oh = out_size(l);
  char *text = malloc(4096);
  char in[64], w[64], out[64];
  const char *it = ty->in, *ot = ty->out;
  if (nhwc) {
    snprintf(in, sizeof in, "tensor<1x%dx%dx%dx%s>", l->h, l->h, l->c, it);
    snprintf(w, sizeof w, "tensor<%dx%dx%dx%dx%s>", l->k, l->k, l->c, l->o, it);
    snprintf(out, sizeof out, "tensor<1x%dx%dx%dx%s>", oh, oh, l->o, ot);
  } else {
    snprintf(in, sizeof in, "tensor<1x%dx%dx%dx%s>", l->c, l->h, l->h, it);
    snprintf(w, sizeof w, "tensor<%dx%dx%dx%dx%s>", l->o, l->c, l->k, l->k, it);
    snprintf(out, sizeof out, "tensor<1x%dx%dx%dx%s>", l->o, oh, oh, ot);
  }
  int n = snprintf(text, 4096,
                   "func.func @main(%%x: %s, %%w: %s, %%b: tensor<%dx%s>) -> %s {\n"
                   "  %%y = stablehlo.convolution(%%x, %%w) dim_numbers = %s,"
                   " window = {stride = [%d, %d], pad = [[%d, %d], [%d, %d]]}"
                   " {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (%s, %s) -> %s\n",
                   in, w, l->o, ot, out,
                   nhwc ? "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]" : "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
                   l->stride, l->stride, l->pad, l->pad, l->pad, l->pad, in, w, out);
  if (l->epilogue)
    n += snprintf(text + n, 4096 - (size_t)n,
                  "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [%d] : (tensor<%dx%s>) -> %s\n"
                  "  %%z = stablehlo.constant dense<0> : %s\n"
                  "  %%s = stablehlo.add %%y, %%bb : %s\n"
                  "  %%r = stablehlo.maximum %%s, %%z : %s\n"
                  "  return %%r : %s\n}\n",
                  nhwc ? 3 : 1, l->o, ot, out, out, out, out, out);
  else
    snprintf(text + n, 4096 - (size_t)n, "  return %%y : %s\n}\n", out);
  return text;
}

/* Transposed convolutions (a decoder's or a UNet's upsampling layers, and
 * the input gradients of strided convolutions): a convolution with lhs
 * dilation 2 (stride 1), h x h -> 2h x 2h, then a bias and a relu.  The
 * second table times it against the same convolution over the input
 * padded with zeros between its elements (stablehlo.pad's interior
 * padding), the work the kernel did before codegen/expand.c split such
 * convolutions by output phase: every tap, the zero ones too. */
typedef struct tlayer {
  const char *name;
  int c, h, o, k, lo, hi; /* lo + hi = k: 2h outputs */
} tlayer_t;

static const tlayer_t tlayers[] = {
    {"up 4x4/2 256->128 14->28", 256, 14, 128, 4, 2, 2},
    {"up 3x3/2 128->64 28->56", 128, 28, 64, 3, 1, 2},
    {"up 4x4/2 64->32 56->112", 64, 56, 32, 4, 2, 2},
};

/* Layer |t| in NCHW/OIHW or NHWC/HWIO; |zeros|: as the convolution of the
 * zero-interleaved input. */
static char *transposed_program(const tlayer_t *t, bool nhwc, bool zeros) {
  char *text = malloc(4096);
  char in[64], xp[64], w[64], out[64];
  int d = 2 * t->h - 1, oh = 2 * t->h;
  if (nhwc) {
    snprintf(in, sizeof in, "tensor<1x%dx%dx%dxf32>", t->h, t->h, t->c);
    snprintf(xp, sizeof xp, "tensor<1x%dx%dx%dxf32>", d, d, t->c);
    snprintf(w, sizeof w, "tensor<%dx%dx%dx%dxf32>", t->k, t->k, t->c, t->o);
    snprintf(out, sizeof out, "tensor<1x%dx%dx%dxf32>", oh, oh, t->o);
  } else {
    snprintf(in, sizeof in, "tensor<1x%dx%dx%dxf32>", t->c, t->h, t->h);
    snprintf(xp, sizeof xp, "tensor<1x%dx%dx%dxf32>", t->c, d, d);
    snprintf(w, sizeof w, "tensor<%dx%dx%dx%dxf32>", t->o, t->c, t->k, t->k);
    snprintf(out, sizeof out, "tensor<1x%dx%dx%dxf32>", t->o, oh, oh);
  }
  int n = snprintf(text, 4096, "func.func @main(%%x: %s, %%w: %s, %%b: tensor<%dxf32>) -> %s {\n", in, w, t->o, out);
  if (zeros)
    n += snprintf(text + n, 4096 - (size_t)n,
                  "  %%z0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
                  "  %%xp = stablehlo.pad %%x, %%z0, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = %s :"
                  " (%s, tensor<f32>) -> %s\n",
                  nhwc ? "[0, 1, 1, 0]" : "[0, 0, 1, 1]", in, xp);
  n += snprintf(text + n, 4096 - (size_t)n,
                "  %%y = stablehlo.convolution(%s, %%w) dim_numbers = %s, window = {pad = [[%d, %d], [%d, %d]]%s}"
                " {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (%s, %s) -> %s\n"
                "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [%d] : (tensor<%dxf32>) -> %s\n"
                "  %%z = stablehlo.constant dense<0.0> : %s\n"
                "  %%s = stablehlo.add %%y, %%bb : %s\n"
                "  %%r = stablehlo.maximum %%s, %%z : %s\n"
                "  return %%r : %s\n}\n",
                zeros ? "%xp" : "%x",
                nhwc ? "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]" : "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]", t->lo,
                t->hi, t->lo, t->hi, zeros ? "" : ", lhs_dilate = [2, 2]", zeros ? xp : in, w, out, nhwc ? 3 : 1,
                t->o, out, out, out, out, out);
  return text;
}

/* The weight gradient of the NHWC layer |l| (3x3 or larger, padding
 * l->pad) as JAX's transpose of the convolution in its rhs writes it: the
 * output gradient slid over the padded input, the forward stride as rhs
 * dilation (codegen/expand.c stacks the 3 x 3 windows for one
 * dot_general).  %b is unused (bench_conv's programs take three). */
static char *weight_gradient_program(const layer_t *l) {
  int oh = out_size(l), extent = (oh - 1) * l->stride + 1;
  int hi = extent + l->k - 1 - l->h - l->pad; /* the padded input spans exactly the windows */
  char *text = malloc(4096);
  snprintf(text, 4096,
           "func.func @main(%%x: tensor<1x%dx%dx%dxf32>, %%g: tensor<1x%dx%dx%dxf32>, %%b: tensor<%dxf32>) -> "
           "tensor<%dx%dx%dx%dxf32> {\n"
           "  %%w = stablehlo.convolution(%%x, %%g) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f],"
           " window = {pad = [[%d, %d], [%d, %d]], rhs_dilate = [%d, %d]}"
           " {batch_group_count = 1 : i64, feature_group_count = 1 : i64} :"
           " (tensor<1x%dx%dx%dxf32>, tensor<1x%dx%dx%dxf32>) -> tensor<%dx%dx%dx%dxf32>\n"
           "  return %%w : tensor<%dx%dx%dx%dxf32>\n}\n",
           l->h, l->h, l->c, oh, oh, l->o, l->o, l->k, l->k, l->c, l->o, l->pad, hi, l->pad, hi, l->stride,
           l->stride, l->h, l->h, l->c, oh, oh, l->o, l->k, l->k, l->c, l->o, l->k, l->k, l->c, l->o);
  return text;
}

/* Applies (set) or removes the VAR=VALUE,... list |env|. */
static void apply_env(const char *env, bool set) {
  if (!env) return;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", env);
  for (char *item = strtok(buf, ","); item; item = strtok(NULL, ",")) {
    char *eq = strchr(item, '=');
    if (!eq) continue;
    *eq = 0;
    if (set) setenv(item, eq + 1, 1);
    else unsetenv(item);
  }
}

static double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* |v| (in [-0.5, 0.5)) as an element of type |t|: f32, f16 / bf16 (the
 * nearest, by truncation of the f32 bits for bf16: any value will do),
 * or an integer in [-8, 8). */
static void store_value(vkhlo_element_type_t t, float v, unsigned char *dst) {
  uint32_t u;
  memcpy(&u, &v, 4);
  if (t == VKHLO_F32) {
    memcpy(dst, &v, 4);
  } else if (t == VKHLO_BF16) {
    uint16_t h = (uint16_t)(u >> 16);
    memcpy(dst, &h, 2);
  } else if (t == VKHLO_F16) { /* |v| < 0.5: normal or subnormal f16 */
    float a = v < 0 ? -v : v;
    int e;
    float m = frexpf(a, &e); /* a = m 2^e, m in [0.5, 1) */
    uint16_t h = a == 0       ? 0
                 : e - 1 + 15 >= 1 ? (uint16_t)((e - 1 + 15) << 10 | ((uint32_t)(m * 2048.0f) & 0x3FF))
                                   : (uint16_t)(a * 16777216.0f);
    if (v < 0) h |= 0x8000;
    memcpy(dst, &h, 2);
  } else {
    int32_t q = (int32_t)(v * 16.0f);
    memcpy(dst, &q, vkhlo_element_type_size_bytes(t));
  }
}

/* Element |i| of |p| (of type |t|) as a double. */
static double load_value(vkhlo_element_type_t t, const unsigned char *p, int64_t i) {
  int64_t ordered;
  return exe_element_value(p, t, i, 0, &ordered);
}

typedef struct prepared {
  vkhlo_executable_t *exe;
  vkhlo_buffer_t *args[3], *res;
} prepared_t;

static void prepare(vkhlo_context_t *ctx, const char *text, prepared_t *p) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  vkhlo_status_t st = vkhlo_executable_compile(ctx, text, strlen(text), "bench_conv.mlir", &o, &p->exe);
  if (st) die(st, "compile");
  uint64_t seed = 1;
  for (int i = 0; i < 3; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_parameter_type(p->exe, i, &t);
    int64_t n = vkhlo_tensor_type_element_count(&t);
    size_t es = vkhlo_element_type_size_bytes(t.element_type);
    unsigned char *data = malloc((size_t)n * es + 4);
    for (int64_t k = 0; k < n; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      store_value(t.element_type, (float)((double)(seed >> 40) / (1 << 24) - 0.5), data + (size_t)k * es);
    }
    if ((st = vkhlo_buffer_create(ctx, &t, data, &p->args[i]))) die(st, "buffer");
    free(data);
  }
  vkhlo_tensor_type_t t;
  vkhlo_executable_result_type(p->exe, 0, &t);
  if ((st = vkhlo_buffer_create(ctx, &t, NULL, &p->res))) die(st, "result buffer");
  vkhlo_executable_set_profiling(p->exe, true);
}

static void release(prepared_t *p) {
  for (int i = 0; i < 3; i++) vkhlo_buffer_destroy(p->args[i]);
  vkhlo_buffer_destroy(p->res);
  vkhlo_executable_destroy(p->exe);
}

/* Device time of one execution, in ms (every kernel's, summed); its CPU
 * time in *cpu. */
static double run_once(prepared_t *p, double *cpu) {
  vkhlo_executable_set_profiling(p->exe, true); /* clears the totals */
  double c0 = cpu_ms();
  vkhlo_status_t st = vkhlo_executable_execute_into(p->exe, 3, p->args, 1, &p->res);
  *cpu = cpu_ms() - c0;
  if (st) die(st, "execute");
  vkhlo_kernel_profile_t prof[32];
  int n = vkhlo_executable_profile(p->exe, prof, 32);
  if (n > 32) {
    fprintf(stderr, "bench_conv: %d kernels, more than the 32 counted\n", n);
    exit(1);
  }
  double ms = 0;
  for (int i = 0; i < n; i++) ms += prof[i].device_ms;
  return ms;
}

/* Largest relative difference between the two results (a sanity check). */
static double max_rel_diff(prepared_t *a, prepared_t *b) {
  vkhlo_tensor_type_t t;
  vkhlo_buffer_type(a->res, &t);
  int64_t n = vkhlo_tensor_type_element_count(&t);
  size_t bytes = vkhlo_tensor_type_size_bytes(&t);
  unsigned char *x = malloc(bytes + 4), *y = malloc(bytes + 4);
  vkhlo_status_t st;
  if ((st = vkhlo_buffer_read(a->res, x, bytes)) || (st = vkhlo_buffer_read(b->res, y, bytes))) die(st, "read");
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = load_value(t.element_type, x, i);
    scale = scale > v && scale > -v ? scale : (v < 0 ? -v : v);
  }
  for (int64_t i = 0; i < n; i++) {
    double d = load_value(t.element_type, x, i) - load_value(t.element_type, y, i);
    if (d < 0) d = -d;
    if (d > worst) worst = d;
  }
  free(x);
  free(y);
  return scale > 0 ? worst / scale : worst;
}

/* Programs |ta| and |tb| on |ctx|, run back to back |repeat| times after
 * a warm-up: m[0], m[1] their median device times, m[2] the median of the
 * per-round ratios a / b; *diff (where wanted) their results' largest
 * relative difference. */
static void time_pair(vkhlo_context_t *ctx, const char *ta, const char *tb, int repeat, double m[3], double *diff) {
  prepared_t a, b;
  prepare(ctx, ta, &a);
  prepare(ctx, tb, &b);
  double *t = calloc((size_t)repeat * 3, sizeof *t);
  for (int r = -1; r < repeat; r++) {
    double xc, yc, x = run_once(&a, &xc), y = run_once(&b, &yc);
    if (r < 0) continue;
    t[r] = x, t[repeat + r] = y, t[2 * repeat + r] = x / y;
  }
  for (int k = 0; k < 3; k++) m[k] = median(t + k * repeat, repeat);
  if (diff) *diff = max_rel_diff(&a, &b);
  free(t);
  release(&a);
  release(&b);
}

int main(int argc, char **argv) {
  int repeat = argc > 1 ? atoi(argv[1]) : 3;
  const char *only = argc > 2 ? argv[2] : NULL;
  bool skip_old = getenv("BENCH_CONV_SKIP_OLD") && atoi(getenv("BENCH_CONV_SKIP_OLD"));
  const char *base_env = getenv("BENCH_CONV_BASE") ? getenv("BENCH_CONV_BASE") : "VKHLO_CONV_KERNEL=generic";
  types_t ty = {"f32", "f32"};
  const char *type = getenv("BENCH_CONV_TYPE");
  if (type && (strcmp(type, "f16") == 0 || strcmp(type, "bf16") == 0)) ty.in = ty.out = type;
  else if (type && strcmp(type, "i8") == 0) ty.in = "i8", ty.out = "i32";
  else if (type && strcmp(type, "f32") != 0) {
    fprintf(stderr, "bench_conv: BENCH_CONV_TYPE=%s: f32, f16, bf16 or i8\n", type);
    return 2;
  }
  if (repeat < 1) repeat = 1;
  vkhlo_context_t *ctx, *base_ctx = NULL;
  vkhlo_status_t st = vkhlo_context_create(NULL, &ctx);
  if (st) die(st, "context");
  if (!skip_old) {
    apply_env(base_env, true);
    st = vkhlo_context_create(NULL, &base_ctx);
    apply_env(base_env, false);
    if (st) die(st, "baseline context");
  }
  vkhlo_device_description_t dev;
  vkhlo_context_device(ctx, &dev);
  const char *tile = getenv("VKHLO_CONV_TILE");
  printf("device: %s (%s); ResNet-50 v1.5 convolutions, batch 1, %s into %s; device time, median of %d; "
         "base: %s; new: tile %s\n\n",
         dev.name, dev.type, ty.in, ty.out, repeat, skip_old ? "none" : base_env, tile ? tile : "default");
  printf("| %-31s | %6s | %8s | %8s | %7s | %7s | %8s | %8s | %6s | %6s | %8s |\n", "layer", "GFLOP", "base ms",
         "new ms", "base GF", "new GF", "base cpu", "new cpu", "ratio", "cpu r", "max diff");
  printf("|---------------------------------|--------|----------|----------|---------|---------|----------|"
         "----------|--------|--------|----------|\n");
  double tot_old = 0, tot_new = 0, tot_flop = 0, tot_cold = 0, tot_cnew = 0;
  for (int layout = 0; layout < 2; layout++) {
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
      const layer_t *l = &layers[i];
      char name[64];
      snprintf(name, sizeof name, "%s %s", layout ? "nhwc" : "nchw", l->name);
      if (only && !strstr(name, only)) continue;
      int oh = out_size(l);
      double flop = 2.0 * l->o * oh * oh * l->c * l->k * l->k;
      char *text = program(l, layout == 1, &ty);
      prepared_t a, b;
      if (!skip_old) prepare(base_ctx, text, &a);
      prepare(ctx, text, &b);
      double *to = calloc((size_t)repeat, sizeof *to), *tn = calloc((size_t)repeat, sizeof *tn);
      double *co = calloc((size_t)repeat, sizeof *co), *cn = calloc((size_t)repeat, sizeof *cn);
      double *ratio = calloc((size_t)repeat, sizeof *ratio);
      for (int r = -1; r < repeat; r++) {
        double xc = 0, yc = 0;
        double x = skip_old ? 0 : run_once(&a, &xc), y = run_once(&b, &yc);
        if (r < 0) continue;
        to[r] = x;
        tn[r] = y;
        co[r] = xc;
        cn[r] = yc;
        ratio[r] = x / y;
      }
      double mo = median(to, repeat), mn = median(tn, repeat), rt = median(ratio, repeat);
      /* CPU time: the minimum, the run least disturbed by the other load */
      double mco = co[0], mcn = cn[0];
      for (int r = 1; r < repeat; r++) {
        mco = co[r] < mco ? co[r] : mco;
        mcn = cn[r] < mcn ? cn[r] : mcn;
      }
      double crt = mcn > 0 ? mco / mcn : 0;
      double diff = skip_old ? 0 : max_rel_diff(&a, &b);
      printf("| %-31s | %6.3f | %8.2f | %8.2f | %7.2f | %7.2f | %8.2f | %8.2f | %5.2fx | %5.2fx | %8.1e |\n", name,
             flop / 1e9, mo, mn, mo > 0 ? flop / (mo * 1e6) : 0, flop / (mn * 1e6), mco, mcn, rt, crt, diff);
      fflush(stdout);
      if (!l->epilogue) {
        tot_old += mo;
        tot_new += mn;
        tot_cold += mco;
        tot_cnew += mcn;
        tot_flop += flop;
      }
      free(to);
      free(tn);
      free(co);
      free(cn);
      free(ratio);
      if (!skip_old) release(&a);
      release(&b);
      free(text);
    }
  }
  if (tot_flop > 0)
    printf("\nall plain rows once each: %.3f GFLOP; base %.1f ms (%.2f GFLOP/s, cpu %.1f ms), new %.1f ms "
         "(%.2f GFLOP/s, cpu %.1f ms); device %.2fx, cpu %.2fx\n",
         tot_flop / 1e9, tot_old, tot_old > 0 ? tot_flop / (tot_old * 1e6) : 0, tot_cold, tot_new,
         tot_flop / (tot_new * 1e6), tot_cnew, tot_new > 0 ? tot_old / tot_new : 0,
         tot_cnew > 0 ? tot_cold / tot_cnew : 0);
  if (ty.in == ty.out && strcmp(ty.in, "f32") == 0) {
    printf("\ntransposed convolutions (lhs dilation 2, + bias + relu), f32: the program (new) against the same "
           "convolution of the zero-interleaved input (zeros), same context, device time, median of %d; GFLOP: "
           "the nonzero taps'\n\n",
           repeat);
    printf("| %-31s | %6s | %8s | %8s | %7s | %7s | %6s | %8s |\n", "layer", "GFLOP", "zeros ms", "new ms",
           "zeros GF", "new GF", "ratio", "max diff");
    printf("|---------------------------------|--------|----------|----------|---------|---------|--------|----------|\n");
    for (int layout = 0; layout < 2; layout++) {
      for (size_t i = 0; i < sizeof tlayers / sizeof tlayers[0]; i++) {
        const tlayer_t *t = &tlayers[i];
        char name[64];
        snprintf(name, sizeof name, "%s %s", layout ? "nhwc" : "nchw", t->name);
        if (only && !strstr(name, only)) continue;
        double flop = 2.0 * t->o * (2.0 * t->h) * (2.0 * t->h) * t->c * t->k * t->k / 4;
        char *zt = transposed_program(t, layout == 1, true), *nt = transposed_program(t, layout == 1, false);
        double m[3], diff;
        time_pair(ctx, zt, nt, repeat, m, &diff);
        printf("| %-31s | %6.3f | %8.2f | %8.2f | %7.2f | %7.2f | %5.2fx | %8.1e |\n", name, flop / 1e9, m[0], m[1],
               flop / (m[0] * 1e6), flop / (m[1] * 1e6), m[2], diff);
        fflush(stdout);
        free(zt);
        free(nt);
      }
    }
  }
  if (ty.in == ty.out && strcmp(ty.in, "f32") == 0) {
    printf("\nweight gradients (NHWC, f32, as JAX's transpose of the convolution writes them) against the "
           "same layer's forward convolution (same flops), same context, device time, median of %d\n\n",
           repeat);
    printf("| %-31s | %6s | %8s | %8s | %7s | %7s | %6s |\n", "layer", "GFLOP", "fwd ms", "grad ms", "fwd GF",
           "grad GF", "g/f");
    printf("|---------------------------------|--------|----------|----------|---------|---------|--------|\n");
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
      const layer_t *l = &layers[i];
      if (l->k != 3 || l->epilogue) continue;
      char name[64];
      snprintf(name, sizeof name, "grad %s", l->name);
      if (only && !strstr(name, only)) continue;
      int oh = out_size(l);
      double flop = 2.0 * l->o * oh * oh * l->c * l->k * l->k;
      char *ft = program(l, true, &ty), *gt = weight_gradient_program(l);
      double m[3];
      time_pair(ctx, gt, ft, repeat, m, NULL);
      printf("| %-31s | %6.3f | %8.2f | %8.2f | %7.2f | %7.2f | %5.2fx |\n", name, flop / 1e9, m[1], m[0],
             flop / (m[1] * 1e6), flop / (m[0] * 1e6), m[2]);
      fflush(stdout);
      free(ft);
      free(gt);
    }
  }
  if (base_ctx) vkhlo_context_destroy(base_ctx);
  vkhlo_context_destroy(ctx);
  return 0;
}
