/*
 * The helper prelude of generated kernels: which .glsl files of shaders/ a
 * kernel gets, and with which macro definitions (see glsl_prelude.h).
 *
 * The helpers give HLO ops their exact StableHLO/XLA semantics where plain
 * GLSL differs or is undefined: integer division by zero and overflow,
 * shifts by the bit width or more, NaN-propagating maximum/minimum,
 * fmod-style remainder, round-half-away-from-zero, expm1/log1p accurate
 * near zero, tanh without overflow, pow's special cases, reduce_precision,
 * bf16/f16 rounding, total-order keys, CHLO's special functions, complex
 * arithmetic, emulated 64-bit integers, packed narrow storage.  The GLSL
 * itself, with comments on each algorithm, is in the files.
 */
#include "codegen/glsl_prelude.h"

#include "codegen/glsl_types.h"
#include "codegen/shaders.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Type instantiations of the generic files. */
#define AS_FLOAT {{"FT", "float"}}
#define AS_DOUBLE {{"FT", "double"}}
#define INT32_TYPES {{"IT", "int"}, {"UT", "uint"}, {"IBITS", "32"}}
#define INT64_TYPES {{"IT", "int64_t"}, {"UT", "uint64_t"}, {"IBITS", "64"}}

/* file, any, all, needs, defines */
static const glsl_prelude_piece_t pieces[] = {
    {"packed.glsl", GLSL_HELPERS_PACKED, 0, 0, {{0}}},
    {"int64_emulated.glsl", GLSL_HELPERS_EMU64, 0, 0, {{0}}},
    {"f64_soft.glsl", GLSL_HELPERS_F64SOFT, 0, GLSL_HELPERS_EMU64, {{0}}},
    {"index.glsl", GLSL_HELPERS_INDEX, 0, 0, {{0}}},
    {"texel_words.glsl", GLSL_HELPERS_TEXEL, GLSL_FEATURE_INT64, 0, {{0}}},
    {"int_generic.glsl", GLSL_HELPERS_INT | GLSL_HELPERS_UINT, 0, 0, INT32_TYPES},
    {"int32.glsl", GLSL_HELPERS_INT | GLSL_HELPERS_UINT, 0, 0, {{0}}},
    {"int_generic.glsl", GLSL_HELPERS_INT64 | GLSL_HELPERS_UINT64, 0, 0, INT64_TYPES},
    {"int64.glsl", GLSL_HELPERS_INT64 | GLSL_HELPERS_UINT64, 0, 0, {{0}}},
    {"float_basic.glsl", GLSL_HELPERS_FLOAT, 0, 0, {{0}}},
    {"float_generic.glsl", GLSL_HELPERS_FLOAT, 0, 0, AS_FLOAT},
    {"float.glsl", GLSL_HELPERS_FLOAT, 0, 0, {{0}}},
    {"math_generic.glsl", GLSL_HELPERS_FLOAT, 0, 0, {{"FT", "float"}, {"FT_EPS", "1e-8"}}},
    {"double_basic.glsl", GLSL_HELPERS_DOUBLE, 0, 0, {{0}}},
    {"float_generic.glsl", GLSL_HELPERS_DOUBLE, 0, 0, AS_DOUBLE},
    {"double.glsl", GLSL_HELPERS_DOUBLE, 0, 0, {{0}}},
    {"double_int64.glsl", GLSL_HELPERS_DOUBLE, GLSL_FEATURE_INT64, 0, {{0}}},
    {"math_generic.glsl", GLSL_HELPERS_DOUBLE, 0, 0, {{"FT", "double"}, {"FT_EPS", "1e-17lf"}}},
    {"complex_generic.glsl", GLSL_HELPERS_COMPLEX, 0, GLSL_HELPERS_FLOAT,
     {{"FT", "float"}, {"CT", "vec2"}}},
    {"complex_generic.glsl", GLSL_HELPERS_DCOMPLEX, 0, GLSL_HELPERS_DOUBLE,
     {{"FT", "double"}, {"CT", "dvec2"}}},
};

const glsl_prelude_piece_t *glsl_prelude_pieces(size_t *out_count) {
  *out_count = COUNT_OF(pieces);
  return pieces;
}

bool glsl_prelude_piece_selected(const glsl_prelude_piece_t *piece, unsigned features) {
  return (features & piece->any) != 0 && (features & piece->all) == piece->all;
}

void glsl_append_prelude_pieces(strbuf_t *sb, unsigned features, size_t end,
                                bool line_directives) {
  if (end > COUNT_OF(pieces)) end = COUNT_OF(pieces);
  /* |needs| names earlier pieces only, so one backward pass closes the set */
  for (size_t i = end; i-- > 0;)
    if (glsl_prelude_piece_selected(&pieces[i], features)) features |= pieces[i].needs;
  for (size_t i = 0; i < end; i++) {
    const glsl_prelude_piece_t *p = &pieces[i];
    if (!glsl_prelude_piece_selected(p, features)) continue;
    const shaders_file_t *f = shaders_find(p->file);
    if (!f) {
      sb->failed = true;
      return;
    }
    for (int d = 0; d < GLSL_PRELUDE_MAX_DEFINES && p->defines[d].name; d++)
      strbuf_printf(sb, "#define %s %s\n", p->defines[d].name, p->defines[d].value);
    if (line_directives) strbuf_printf(sb, "#line 1 \"%s\"\n", p->file);
    strbuf_appendn(sb, f->text, f->size_bytes);
    for (int d = 0; d < GLSL_PRELUDE_MAX_DEFINES && p->defines[d].name; d++)
      strbuf_printf(sb, "#undef %s\n", p->defines[d].name);
  }
}

/* Appends the file |name| of shaders/ (INTERNAL-style failure on |sb| if it
 * is not embedded). */
static void append_file(strbuf_t *sb, const char *name) {
  const shaders_file_t *f = shaders_find(name);
  if (!f) {
    sb->failed = true;
    return;
  }
  strbuf_appendn(sb, f->text, f->size_bytes);
}

void glsl_append_prelude(strbuf_t *sb, unsigned features) {
  /* Every kernel tests NaN and infinity on the bits (nan.glsl says why); the
   * macros make isnan/isinf in all that follows mean these tests. */
  append_file(sb, "nan.glsl");
  if (features & GLSL_FEATURE_FLOAT64) append_file(sb, "nan_double.glsl");
  strbuf_append(sb, "#define isnan(x) vk_isnan(x)\n#define isinf(x) vk_isinf(x)\n");
  if (features & GLSL_FEATURE_FMA_DOUBLE) strbuf_append(sb, "#define VK_FMA_VIA_DOUBLE 1\n");
  glsl_append_prelude_pieces(sb, features, COUNT_OF(pieces), false);
  /* After the helpers, so that only the kernel's own code is redirected. */
  if (features & GLSL_FEATURE_F16_SOFT) append_file(sb, "half_soft.glsl");
}
