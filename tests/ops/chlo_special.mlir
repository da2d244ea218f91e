// chlo's complex elementary functions (principal values, C99 branch cuts)
// and bessel_i1e.  Expected values: Python's cmath (complex), and
// exp(-|x|) I1(x) from I1's power series summed in 60-digit decimal
// arithmetic (bessel_i1e); never vkhlo's own output.
func.func @complex_inverse() {
  %z = stablehlo.constant dense<[(0.3, -0.7), (-3.0, 4.0), (2.0, 0.5), (-0.5, -2.0)]> : tensor<4xcomplex<f32>>
  %acos = chlo.acos %z : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  check.expect_almost_eq_const %acos, dense<[(1.3250643206938169, 0.67033674298778967), (2.2047801924340735, -2.3055090312434769), (0.27775425655771396, -1.3618009008578458), (1.7918149624177806, 1.4657153519472905)]> : tensor<4xcomplex<f32>> {tolerance = 2.0e-06 : f64}
  %acosh = chlo.acosh %z : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  check.expect_almost_eq_const %acosh, dense<[(0.67033674298778967, -1.3250643206938169), (2.3055090312434769, 2.2047801924340735), (1.3618009008578458, 0.27775425655771396), (1.4657153519472905, -1.7918149624177806)]> : tensor<4xcomplex<f32>> {tolerance = 2.0e-06 : f64}
  %asin = chlo.asin %z : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  check.expect_almost_eq_const %asin, dense<[(0.2457320061010797, -0.67033674298778967), (-0.63398386563917664, 2.3055090312434769), (1.2930420702371825, 1.3618009008578458), (-0.22101863562288385, -1.4657153519472905)]> : tensor<4xcomplex<f32>> {tolerance = 2.0e-06 : f64}
  %asinh = chlo.asinh %z : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  check.expect_almost_eq_const %asinh, dense<[(0.38559098731817493, -0.70890344096550528), (-2.2999140408792695, 0.91761685335147869), (1.4657153519472905, 0.22101863562288385), (-1.3618009008578458, -1.2930420702371825)]> : tensor<4xcomplex<f32>> {tolerance = 2.0e-06 : f64}
  %atan = chlo.atan %z : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  check.expect_almost_eq_const %atan, dense<[(0.480035181202844, -0.70168043215230991), (-1.4483069952314644, 0.15899719167999918), (1.1265564408348223, 0.096415620202996169), (-1.4215468610018069, -0.50037000005253107)]> : tensor<4xcomplex<f32>> {tolerance = 2.0e-06 : f64}
  %atanh = chlo.atanh %z : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  check.expect_almost_eq_const %atanh, dense<[(0.19988189602962927, -0.63966976615851479), (-0.11750090731143389, 1.4099210495965755), (0.50037000005253107, 1.4215468610018069), (-0.096415620202996169, -1.1265564408348223)]> : tensor<4xcomplex<f32>> {tolerance = 2.0e-06 : f64}
  func.return
}

// -----

func.func @complex_hyperbolic_f64() {
  %z = stablehlo.constant dense<[(0.3, -0.7), (-3.0, 4.0), (2.0, 0.5), (-0.5, -2.0)]> : tensor<4xcomplex<f64>>
  %cosh = chlo.cosh %z : tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  check.expect_almost_eq_const %cosh, dense<[(0.79951899559903483, -0.1961773591614612), (-6.5806630405511566, 7.5815527427465446), (3.3016373329140944, 1.7388095044743164), (-0.46925797822905341, 0.473830620416407)]> : tensor<4xcomplex<f64>> {tolerance = 1.0e-13 : f64}
  %sinh = chlo.sinh %z : tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  check.expect_almost_eq_const %sinh, dense<[(0.23290996731262684, -0.67342555995257891), (6.5481200409110025, -7.6192317203214097), (3.1828694483371494, 1.8036926955321817), (0.21685216292078974, -1.0253473885839877)]> : tensor<4xcomplex<f64>> {tolerance = 1.0e-13 : f64}
  %tan = chlo.tan %z : tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  check.expect_almost_eq_const %tan, dense<[(0.18971709151908692, -0.63983593026318009), (0.00018734620462947839, 0.99935598738147302), (-0.85087812114493788, 1.3212865837711916), (-0.030215987322877582, -0.97994084996173803)]> : tensor<4xcomplex<f64>> {tolerance = 1.0e-13 : f64}
  %acos = chlo.acos %z : tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  check.expect_almost_eq_const %acos, dense<[(1.3250643206938169, 0.67033674298778967), (2.2047801924340735, -2.3055090312434769), (0.27775425655771396, -1.3618009008578458), (1.7918149624177806, 1.4657153519472905)]> : tensor<4xcomplex<f64>> {tolerance = 1.0e-13 : f64}
  %atanh = chlo.atanh %z : tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  check.expect_almost_eq_const %atanh, dense<[(0.19988189602962927, -0.63966976615851479), (-0.11750090731143389, 1.4099210495965755), (0.50037000005253107, 1.4215468610018069), (-0.096415620202996169, -1.1265564408348223)]> : tensor<4xcomplex<f64>> {tolerance = 1.0e-13 : f64}
  func.return
}

// -----

// Both sides of i1e's switch from the power series to the asymptotic
// expansion (|x| = 30), and the sign (i1e is odd).
func.func @bessel_i1e() {
  %x = stablehlo.constant dense<[0.5, -1.0, 10.0, 29.5, 45.0, -200.0, 0.0]> : tensor<7xf64>
  %y = chlo.bessel_i1e %x : tensor<7xf64> -> tensor<7xf64>
  check.expect_almost_eq_const %y, dense<[0.1564208031848717, -0.20791041534970844, 0.12126268138445552, 0.072507326157183721, 0.058971703136200641, -0.028156503394832919, 0.0]> : tensor<7xf64> {tolerance = 1.0e-15 : f64}
  %xf = stablehlo.constant dense<[0.5, -1.0, 10.0, 29.5, 45.0, -200.0, 0.0]> : tensor<7xf32>
  %yf = chlo.bessel_i1e %xf : tensor<7xf32> -> tensor<7xf32>
  check.expect_almost_eq_const %yf, dense<[0.1564208031848717, -0.20791041534970844, 0.12126268138445552, 0.072507326157183721, 0.058971703136200641, -0.028156503394832919, 0.0]> : tensor<7xf32> {tolerance = 1.0e-07 : f64}
  func.return
}

// -----

// Hurwitz zeta(x, q) = sum over k >= 0 of (q + k)^-x and polygamma(n, x) =
// (-1)^(n+1) n! zeta(n + 1, x).  Expected: pi^2/6, 7 zeta(3), the series
// summed in 40-digit decimal arithmetic with its Euler-Maclaurin tail, and
// the domain edges (x = 1 a pole, x < 1 NaN, q a non-positive integer a
// pole, q < 0 with a non-integer x NaN, n not a natural number NaN).
func.func @zeta_polygamma() {
  %x = stablehlo.constant dense<[2.0, 3.0, 4.5, 3.5, 2.0, 1.0, 0.5, 2.0, 2.5]> : tensor<9xf64>
  %q = stablehlo.constant dense<[1.0, 0.5, 2.3, 0.25, -1.5, 1.0, 1.0, -2.0, -1.5]> : tensor<9xf64>
  %z = chlo.zeta %x, %q : tensor<9xf64>, tensor<9xf64> -> tensor<9xf64>
  check.expect_almost_eq_const %z, dense<[1.6449340668482264, 8.4143983221171600, 0.030762086170147936, 128.54695896428435, 9.3792466449891238, 0x7FF0000000000000, 0x7FF8000000000000, 0x7FF0000000000000, 0x7FF8000000000000]> : tensor<9xf64> {tolerance = 1.0e-13 : f64}
  %n = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0, 0.5, -1.0]> : tensor<6xf32>
  %y = stablehlo.constant dense<[1.0, 1.0, 1.0, 2.5, 1.0, 1.0]> : tensor<6xf32>
  %p = chlo.polygamma %n, %y : tensor<6xf32>, tensor<6xf32> -> tensor<6xf32>
  check.expect_almost_eq_const %p, dense<[-0.57721566490153287, 1.6449340668482264, -2.4041138063191886, 0.22390584881725205, 0x7FC00000, 0x7FC00000]> : tensor<6xf32> {tolerance = 1.0e-06 : f64}
  func.return
}
