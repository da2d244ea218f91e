/*
 * fft (spec 'fft') as a direct discrete Fourier transform.
 *
 * One invocation per result element computes the whole sum for that
 * element over the |fft_length| dimensions (the trailing 1..3 dimensions):
 *
 *   FFT:   out[b, k] = sum_n in[b, n] * exp(-2 pi i <k, n / N>)
 *   IFFT:  out[b, k] = (1 / prod N) sum_n in[b, n] * exp(+2 pi i <k, n / N>)
 *   RFFT:  FFT of a real operand; only k_last <= N_last / 2 is produced.
 *   IRFFT: the real inverse of a Hermitian spectrum given by its first
 *          N_last / 2 + 1 entries along the last dimension.  Using
 *          X[-k] = conj(X[k]), the full inverse sum equals
 *            (1 / prod N) sum_{k, k_last <= N_last/2} c(k_last) Re(X[k] e^{+...})
 *          with c = 1 for k_last = 0 and (N_last even) k_last = N_last / 2,
 *          else 2 (this ignores the imaginary parts of the self-conjugate
 *          entries, as a complex-to-real FFT library does).
 *
 * That is O(prod N) work per element (O(n^2) overall) instead of an FFT's
 * O(n log n): correct and simple for short transforms.  Longer ones and
 * those of several dimensions reach this kernel only as pieces: the expand
 * pass (codegen/expand.c, "fft") splits them into one transform per
 * dimension and long lengths N1 * N2 into four-step transforms of N1 and
 * N2; only a length with a large prime factor is summed directly here.
 *
 * Accuracy: the phase of each term is kept exact in integers,
 * p_d = (k_d * n_d) mod N_d, updated incrementally as n_d advances, and the
 * angle is formed from sum_d p_d / N_d reduced to [-1/2, 1/2) turns, so no
 * large arguments reach sin/cos.  Sums are accumulated in the element's
 * compute precision (float for complex<f32>, double for complex<f64>).
 */
#include "codegen/emit_internal.h"

#include <stdio.h>
#include <string.h>

#include "support/status.h"

enum { FFT_FFT = 0, FFT_IFFT = 1, FFT_RFFT = 2, FFT_IRFFT = 3 };

vkhlo_status_t codegen_emit_fft(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                int64_t *out_total) {
  const hlo_shape_t *is = &instr->operands[0]->shape, *os = &instr->shape;
  int type = instr->attrs.fft_type;
  int q = instr->attrs.fft_length.count;
  int r = os->rank;
  if (q < 1 || q > 3 || q > r || is->rank != r)
    return el_unimplemented(instr, "fft with fft_length of %d values on rank %d", q, r);
  hlo_element_type_t ct = type == FFT_IRFFT ? is->element_type : os->element_type;
  if (ct != HLO_C64 && ct != HLO_C128)
    return el_unimplemented(instr, "unsupported element type %s for stablehlo.fft",
                            hlo_element_type_name(ct));
  bool dbl = ct == HLO_C128;
  hlo_element_type_t ft = dbl ? HLO_F64 : HLO_F32;
  const char *FT = dbl ? "double" : "float", *CT = dbl ? "dvec2" : "vec2";
  const char *two_pi = dbl ? "6.283185307179586476925286766559lf" : "6.2831853071795864769f";
  el_use_type(E, ct);
  el_use_type(E, ft);

  el_name_t index[HLO_MAX_RANK];
  el_line(E, instr, "int idx = int(gid);");
  el_delinearize(E, instr, os, "idx", index);

  /* Accumulator: complex, or real for IRFFT. */
  el_name_t acc;
  el_fresh(E, "acc", &acc);
  if (type == FFT_IRFFT) el_line(E, instr, "%s %s = %s(0);", FT, acc.s, FT);
  else el_line(E, instr, "%s %s = %s(0);", CT, acc.s, CT);

  /* One loop per fft dimension over the operand's extent there, carrying
   * the exact phase numerator p_d = (k_d * n_d) mod N_d. */
  int first = r - q;
  el_name_t n[3], p[3], in_index[HLO_MAX_RANK];
  glsl_scope_t loops[3];
  double total_length = 1;
  int64_t iterations = 1;
  for (int d = 0; d < first; d++) in_index[d] = index[d];
  for (int j = 0; j < q; j++) {
    int d = first + j;
    int64_t N = instr->attrs.fft_length.data[j];
    int64_t extent = is->dimensions[d];
    total_length *= (double)N;
    el_fresh(E, "p", &p[j]);
    el_line(E, instr, "int %s = 0;", p[j].s);
    el_fresh(E, "r", &n[j]);
    iterations *= extent;
    el_count_loop_iterations(E, instr, iterations);
    loops[j] = el_open(E, instr, "for (int %s = 0; %s < %lld; %s++) {", n[j].s, n[j].s,
                       (long long)extent, n[j].s);
    in_index[d] = n[j];
  }
  /* turns = sum_d p_d / N_d, reduced to [-1/2, 1/2) */
  strbuf_t sum;
  strbuf_init(&sum, E->allocator);
  for (int j = 0; j < q; j++)
    strbuf_printf(&sum, "%s%s(%s) / %s(%lld)", j ? " + " : "", FT, p[j].s, FT,
                  (long long)instr->attrs.fft_length.data[j]);
  el_name_t turns, angle, w, x;
  el_def(E, instr, ft, false, &turns, "fract(%s)", sum.data ? sum.data : "0");
  bool failed = sum.failed;
  strbuf_free(&sum);
  if (failed) return VKHLO_NO_MEMORY();
  el_line(E, instr, "if (%s >= %s(0.5)) %s -= %s(1);", turns.s, FT, turns.s, FT);
  /* The forward transforms use exp(-i angle), the inverse ones exp(+i angle). */
  bool forward = type == FFT_FFT || type == FFT_RFFT;
  el_def(E, instr, ft, false, &angle, "%s%s * %s", forward ? "-" : "", two_pi, turns.s);
  el_def(E, instr, ct, false, &w, "%s(vk_cos(%s), vk_sin(%s))", CT, angle.s, angle.s);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, in_index, &x));
  switch (type) {
    case FFT_FFT:
    case FFT_IFFT: el_line(E, instr, "%s += vk_cmul(%s, %s);", acc.s, x.s, w.s); break;
    case FFT_RFFT: el_line(E, instr, "%s += %s(%s) * %s;", acc.s, FT, x.s, w.s); break;
    default: {
      int64_t N = instr->attrs.fft_length.data[q - 1];
      el_name_t c;
      el_def(E, instr, ft, false, &c, "((%s == 0 || 2 * %s == %lld) ? %s(1) : %s(2))", n[q - 1].s,
             n[q - 1].s, (long long)N, FT, FT);
      el_line(E, instr, "%s += %s * (%s.x * %s.x - %s.y * %s.y);", acc.s, c.s, x.s, w.s, x.s, w.s);
      break;
    }
  }
  for (int j = q - 1; j >= 0; j--) {
    int d = first + j;
    int64_t N = instr->attrs.fft_length.data[j];
    el_line(E, instr, "%s += %s;", p[j].s, index[d].s);
    el_line(E, instr, "if (%s >= %lld) %s -= %lld;", p[j].s, (long long)N, p[j].s, (long long)N);
    el_close(E, instr, loops[j]);
  }
  el_name_t result = acc;
  if (type == FFT_IFFT || type == FFT_IRFFT) {
    el_def(E, instr, type == FFT_IRFFT ? ft : ct, false, &result, "%s / %s(%.1f)", acc.s, FT,
           total_length);
  }
  codegen_store_result(E, instr, 0, index, result.s);
  *out_total = hlo_shape_element_count(os);
  return NULL;
}
