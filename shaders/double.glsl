// double versions of the transcendental functions (GLSL's exp, log, sin,
// ... are float-only): argument reduction and Taylor/atanh series to full
// double precision, and the special cases of float.glsl.
// Uses double_basic.glsl and float_generic.glsl (FT = double).
// Prelude piece for GLSL_HELPERS_DOUBLE (codegen/glsl_prelude.c).
double vk_exp(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893384lf) return vk_dinf();
  if (x < -745.1332191019412lf) return 0.0lf;
  double k = roundEven(x * 1.4426950408889634lf);
  double r = (x - k * 6.93147180369123816490e-01lf) - k * 1.90821492927058770002e-10lf;
  double p = 1.0lf / 6227020800.0lf;
  p = p * r + 1.0lf / 479001600.0lf;
  p = p * r + 1.0lf / 39916800.0lf;
  p = p * r + 1.0lf / 3628800.0lf;
  p = p * r + 1.0lf / 362880.0lf;
  p = p * r + 1.0lf / 40320.0lf;
  p = p * r + 1.0lf / 5040.0lf;
  p = p * r + 1.0lf / 720.0lf;
  p = p * r + 1.0lf / 120.0lf;
  p = p * r + 1.0lf / 24.0lf;
  p = p * r + 1.0lf / 6.0lf;
  p = p * r + 0.5lf;
  p = p * r + 1.0lf;
  p = p * r + 1.0lf;
  int ki = int(k);
  int k1 = ki / 2;
  return ldexp(ldexp(p, k1), ki - k1);
}
/* 2 atanh(s) = log((1 + s) / (1 - s)) for |s| <= 0.1716 */
double vk_log_series(double s) {
  double s2 = s * s;
  double p = 1.0lf / 25.0lf;
  p = p * s2 + 1.0lf / 23.0lf;
  p = p * s2 + 1.0lf / 21.0lf;
  p = p * s2 + 1.0lf / 19.0lf;
  p = p * s2 + 1.0lf / 17.0lf;
  p = p * s2 + 1.0lf / 15.0lf;
  p = p * s2 + 1.0lf / 13.0lf;
  p = p * s2 + 1.0lf / 11.0lf;
  p = p * s2 + 1.0lf / 9.0lf;
  p = p * s2 + 1.0lf / 7.0lf;
  p = p * s2 + 1.0lf / 5.0lf;
  p = p * s2 + 1.0lf / 3.0lf;
  return 2.0lf * s + 2.0lf * s * s2 * p;
}
double vk_log(double x) {
  if (isnan(x) || x < 0.0lf) return (x - x) / (x - x);
  if (x == 0.0lf) return -vk_dinf();
  if (isinf(x)) return x;
  int e;
  double m = frexp(x, e);
  if (m < 0.70710678118654752lf) {
    m *= 2.0lf;
    e -= 1;
  }
  double r = vk_log_series((m - 1.0lf) / (m + 1.0lf));
  return double(e) * 6.93147180369123816490e-01lf + (r + double(e) * 1.90821492927058770002e-10lf);
}
double vk_expm1(double x) {
  if (abs(x) < 0.35lf) {
    double s = 1.0lf + x / 16.0lf;
    for (int n = 15; n >= 2; n--) s = 1.0lf + x / double(n) * s;
    return x * s;
  }
  return vk_exp(x) - 1.0lf;
}
double vk_log1p(double x) {
  if (isnan(x)) return x;
  if (abs(x) < 0.3lf) return vk_log_series(x / (2.0lf + x));
  if (isinf(x) && x > 0.0lf) return x;
  double u = 1.0lf + x;
  if (u <= 0.0lf) return vk_log(u);
  return vk_log(u) + (x - (u - 1.0lf)) / u;
}
double vk_reduce_pio2(double x, out int q) {
  double k = roundEven(x * 0.63661977236758134308lf);
  q = int(k - 4.0lf * floor(k * 0.25lf));
  return ((x - k * 1.57079632673412561417e+00lf) - k * 6.07710050630396597660e-11lf) -
         k * 2.02226624871116645580e-21lf;
}
double vk_sin_poly(double r) {
  double r2 = r * r;
  double p = -1.0lf / 121645100408832000.0lf;
  p = p * r2 + 1.0lf / 355687428096000.0lf;
  p = p * r2 - 1.0lf / 1307674368000.0lf;
  p = p * r2 + 1.0lf / 6227020800.0lf;
  p = p * r2 - 1.0lf / 39916800.0lf;
  p = p * r2 + 1.0lf / 362880.0lf;
  p = p * r2 - 1.0lf / 5040.0lf;
  p = p * r2 + 1.0lf / 120.0lf;
  p = p * r2 - 1.0lf / 6.0lf;
  return r + r * r2 * p;
}
double vk_cos_poly(double r) {
  double r2 = r * r;
  double p = -1.0lf / 6402373705728000.0lf;
  p = p * r2 + 1.0lf / 20922789888000.0lf;
  p = p * r2 - 1.0lf / 87178291200.0lf;
  p = p * r2 + 1.0lf / 479001600.0lf;
  p = p * r2 - 1.0lf / 3628800.0lf;
  p = p * r2 + 1.0lf / 40320.0lf;
  p = p * r2 - 1.0lf / 720.0lf;
  p = p * r2 + 1.0lf / 24.0lf;
  return 1.0lf - 0.5lf * r2 + r2 * r2 * p;
}
double vk_sin(double x) {
  if (isnan(x) || isinf(x)) return (x - x) / (x - x);
  if (x == 0.0lf) return x; // keeps -0 (the reduction gives +0)
  int q;
  double r = vk_reduce_pio2(x, q);
  double v = (q & 1) == 0 ? vk_sin_poly(r) : vk_cos_poly(r);
  return q >= 2 ? -v : v;
}
double vk_cos(double x) {
  if (isnan(x) || isinf(x)) return (x - x) / (x - x);
  int q;
  double r = vk_reduce_pio2(x, q);
  double v = (q & 1) == 0 ? vk_cos_poly(r) : vk_sin_poly(r);
  return (q == 1 || q == 2) ? -v : v;
}
double vk_tan(double x) { return vk_sin(x) / vk_cos(x); }
double vk_atan(double x) {
  if (isnan(x)) return x;
  double a = abs(x);
  bool inv = a > 1.0lf;
  if (inv) a = 1.0lf / a;
  a = a / (1.0lf + sqrt(1.0lf + a * a));
  a = a / (1.0lf + sqrt(1.0lf + a * a));
  double a2 = a * a;
  double p = -1.0lf / 27.0lf;
  for (int n = 12; n >= 1; n--) p = p * a2 + ((n & 1) == 1 ? -1.0lf : 1.0lf) / double(2 * n + 1);
  double r = 4.0lf * (a + a * a2 * p);
  if (inv) r = (1.5707963267948966lf - r) + 6.123233995736766e-17lf;
  return vk_signbit(x) ? -r : r;
}
double vk_atan2(double y, double x) {
  const double pi = 3.141592653589793lf;
  if (isnan(x) || isnan(y)) return x + y;
  if (y == 0.0lf) return vk_signbit(x) ? (vk_signbit(y) ? -pi : pi) : y;
  if (isinf(x) && isinf(y)) {
    double r = x > 0.0lf ? pi / 4.0lf : 3.0lf * pi / 4.0lf;
    return y < 0.0lf ? -r : r;
  }
  if (isinf(x)) return x > 0.0lf ? y * 0.0lf : (y < 0.0lf ? -pi : pi);
  if (isinf(y) || x == 0.0lf) return y < 0.0lf ? -pi / 2.0lf : pi / 2.0lf;
  double r = vk_atan(y / x);
  if (x > 0.0lf) return r;
  return y < 0.0lf ? (r - pi) - 1.2246467991473532e-16lf : (r + pi) + 1.2246467991473532e-16lf;
}
double vk_tanh(double x) {
  if (isnan(x)) return x;
  double a = abs(x);
  if (a > 19.5lf) return x > 0.0lf ? 1.0lf : -1.0lf;
  double e = vk_expm1(2.0lf * a);
  double t = e / (e + 2.0lf);
  return vk_signbit(x) ? -t : t;
}
double vk_logistic(double x) { return 1.0lf / (1.0lf + vk_exp(-x)); }
double vk_cbrt(double x) {
  if (isnan(x) || isinf(x) || x == 0.0lf) return x;
  double a = abs(x);
  double y = vk_exp(vk_log(a) / 3.0lf);
  y = y - (y * y * y - a) / (3.0lf * y * y);
  y = y - (y * y * y - a) / (3.0lf * y * y);
  return x < 0.0lf ? -y : y;
}
double vk_pow(double x, double y) {
  if (y == 0.0lf || x == 1.0lf) return 1.0lf;
  if (isnan(x) || isnan(y)) return x + y;
  double ay = abs(y);
  bool yint = floor(y) == y;
  bool yodd = yint && ay < 9007199254740992.0lf && vk_fmod(ay, 2.0lf) == 1.0lf;
  double inf = vk_dinf();
  if (x == 0.0lf) {
    if (y < 0.0lf) return yodd ? (vk_signbit(x) ? -inf : inf) : inf;
    return yodd ? x : 0.0lf;
  }
  if (isinf(y)) {
    double ax = abs(x);
    if (ax == 1.0lf) return 1.0lf;
    return ((ax > 1.0lf) == (y > 0.0lf)) ? inf : 0.0lf;
  }
  if (isinf(x)) {
    if (x > 0.0lf) return y < 0.0lf ? 0.0lf : inf;
    if (y < 0.0lf) return yodd ? -0.0lf : 0.0lf;
    return yodd ? -inf : inf;
  }
  if (x < 0.0lf && !yint) return (x - x) / (x - x);
  if (yint && ay <= 64.0lf) {
    int n = int(ay);
    double base = x, r = 1.0lf;
    while (n > 0) {
      if ((n & 1) != 0) r *= base;
      base *= base;
      n >>= 1;
    }
    return y < 0.0lf ? 1.0lf / r : r;
  }
  double r = vk_exp(y * vk_log(abs(x)));
  return (x < 0.0lf && yodd) ? -r : r;
}
