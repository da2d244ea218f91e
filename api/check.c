/*
 * Evaluating check.expect_* on the host after an execution.
 *
 *  expect_eq        exact equality; for floats, two NaNs are equal and
 *                   +0 equals -0.
 *  expect_almost_eq |actual - expected| <= tolerance (default 1e-4, the
 *                   StableHLO interpreter's), per component for complex.
 *  expect_close     within max_ulp_difference units in the last place
 *                   (default 4), or within the element type's tolerance
 *                   |a - e| <= tol * (1 + |e|): f64 1e-12, f32 1e-5,
 *                   f16 1e-3, bf16 and f8 types 1e-2.  GPU transcendental
 *                   functions are not correctly rounded, so JAX-generated
 *                   expectations (from CPU libm) need this slack.  f64
 *                   values computed as f32 (demote_f64) use the f32 one.
 * NaN matches NaN and an infinity matches the same infinity in every mode.
 *  print            (interpreter.print) passes; the detail is the value as
 *                   text (vkhlo_tensor_format, the first 64 elements).
 */
#include "api/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_float_type(vkhlo_element_type_t t) {
  return t >= VKHLO_F4E2M1FN && t <= VKHLO_C128;
}

static double close_tolerance(vkhlo_element_type_t t, bool f64_demoted) {
  if (f64_demoted) t = VKHLO_F32;
  switch ((int)t) {
    case VKHLO_F64: case VKHLO_C128: return 1e-12;
    case VKHLO_F32: case VKHLO_C64: return 1e-5;
    case VKHLO_F16: return 1e-3;
    default: return 1e-2;
  }
}

static void format_index(const vkhlo_tensor_type_t *type, int64_t linear, char *buf, size_t size) {
  int64_t idx[VKHLO_MAX_RANK];
  for (int d = type->rank - 1; d >= 0; d--) {
    int64_t n = type->dimensions[d] ? type->dimensions[d] : 1;
    idx[d] = linear % n;
    linear /= n;
  }
  size_t pos = 0;
  pos += (size_t)snprintf(buf + pos, size - pos, "[");
  for (int d = 0; d < type->rank && pos < size; d++)
    pos += (size_t)snprintf(buf + pos, size - pos, "%s%lld", d ? "," : "", (long long)idx[d]);
  if (pos < size) snprintf(buf + pos, size - pos, "]");
}

void exe_check_evaluate(exe_check_t *check, const void *actual, const void *expected) {
  vkhlo_check_result_t *r = &check->result;
  memset(r, 0, sizeof *r);
  r->kind = hlo_check_kind_name(check->kind);
  r->location = check->location;
  r->executed = true;
  if (check->kind == HLO_CHECK_PRINT) {
    char *text = NULL;
    vkhlo_status_t st = vkhlo_tensor_format(&check->type, actual, 64, &text);
    int n = snprintf(r->detail, sizeof r->detail, "%s", st ? vkhlo_status_message(st) : text);
    if (n >= (int)sizeof r->detail) memcpy(r->detail + sizeof r->detail - 4, "...", 4);
    vkhlo_status_free(st);
    free(text);
    r->passed = true;
    return;
  }
  vkhlo_element_type_t t = check->type.element_type;
  int parts = (t == VKHLO_C64 || t == VKHLO_C128) ? 2 : 1;
  int64_t n = vkhlo_tensor_type_element_count(&check->type);
  bool is_float = is_float_type(t);
  double tol = check->tolerance > 0 ? check->tolerance : 1e-4;
  int64_t max_ulp = check->max_ulp_difference > 0 ? check->max_ulp_difference : 4;
  for (int64_t i = 0; i < n; i++) {
    for (int part = 0; part < parts; part++) {
      int64_t oa, oe;
      double a = exe_element_value(actual, t, i, part, &oa);
      double e = exe_element_value(expected, t, i, part, &oe);
      bool ok;
      double abs_err = 0, rel_err = 0;
      if (is_float && (isnan(a) || isnan(e))) {
        ok = isnan(a) && isnan(e);
        if (!ok) abs_err = rel_err = INFINITY;
      } else if (is_float && (isinf(a) || isinf(e))) {
        ok = a == e;
        if (!ok) abs_err = rel_err = INFINITY;
      } else {
        abs_err = fabs(a - e);
        rel_err = e != 0 ? abs_err / fabs(e) : (abs_err ? INFINITY : 0);
        if (!is_float || check->kind == HLO_CHECK_EXPECT_EQ) {
          ok = (!is_float && (t == VKHLO_S64 || t == VKHLO_U64)) ? oa == oe : a == e;
        } else if (check->kind == HLO_CHECK_EXPECT_ALMOST_EQ) {
          ok = abs_err <= tol;
        } else {
          int64_t ulp = oa > oe ? oa - oe : oe - oa;
          ok = ulp <= max_ulp || abs_err <= close_tolerance(t, check->f64_demoted) * (1 + fabs(e));
        }
      }
      if (abs_err > r->max_abs_error) r->max_abs_error = abs_err;
      if (rel_err > r->max_rel_error) r->max_rel_error = rel_err;
      if (!ok) {
        if (r->mismatches++ == 0) {
          char idx[128];
          format_index(&check->type, i, idx, sizeof idx);
          snprintf(r->detail, sizeof r->detail, "at %s%s: got %.9g, expected %.9g", idx,
                   parts == 2 ? (part ? " (imag)" : " (real)") : "", a, e);
        }
      }
    }
  }
  r->passed = r->mismatches == 0;
}
