// Complex variants: minimum/maximum are lexicographic on (real, imag);
// atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)); cbrt = exp(log(z) / 3).
func.func @min_max() {
  %a = stablehlo.constant dense<[(1.0, 5.0), (2.0, 1.0), (3.0, 3.0)]> : tensor<3xcomplex<f32>>
  %b = stablehlo.constant dense<[(2.0, 0.0), (2.0, 4.0), (3.0, 3.0)]> : tensor<3xcomplex<f32>>
  %mn = stablehlo.minimum %a, %b : tensor<3xcomplex<f32>>
  %mx = stablehlo.maximum %a, %b : tensor<3xcomplex<f32>>
  check.expect_eq_const %mn, dense<[(1.0, 5.0), (2.0, 1.0), (3.0, 3.0)]> : tensor<3xcomplex<f32>>
  check.expect_eq_const %mx, dense<[(2.0, 0.0), (2.0, 4.0), (3.0, 3.0)]> : tensor<3xcomplex<f32>>
  func.return
}

// -----

// atan2 of real-valued complex numbers matches real atan2: atan2(1, 1) = pi/4.
// cbrt(-8) = 2 e^{i pi/3} = 1 + 1.7320508i (principal root); cbrt(8i) = 2 e^{i pi/6}.
func.func @atan2_cbrt() {
  %y = stablehlo.constant dense<[(1.0, 0.0), (0.0, 0.0)]> : tensor<2xcomplex<f64>>
  %x = stablehlo.constant dense<[(1.0, 0.0), (1.0, 0.0)]> : tensor<2xcomplex<f64>>
  %r = stablehlo.atan2 %y, %x : tensor<2xcomplex<f64>>
  check.expect_almost_eq_const %r, dense<[(0.78539816339744831, 0.0), (0.0, 0.0)]> : tensor<2xcomplex<f64>>
  %z = stablehlo.constant dense<[(-8.0, 0.0), (0.0, 8.0)]> : tensor<2xcomplex<f32>>
  %c = stablehlo.cbrt %z : tensor<2xcomplex<f32>>
  check.expect_almost_eq_const %c, dense<[(1.0, 1.7320508), (1.7320508, 1.0)]> : tensor<2xcomplex<f32>>
  func.return
}

// -----

// bitcast_convert: complex<f32> (1, 2) is the bits 0x3F800000 (low) then
// 0x40000000; i1 pieces are little-endian bits.
func.func @bitcast() {
  %z = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>
  %i = stablehlo.bitcast_convert %z : (tensor<complex<f32>>) -> tensor<i64>
  check.expect_eq_const %i, dense<4611686019492741120> : tensor<i64>
  %f = stablehlo.bitcast_convert %z : (tensor<complex<f32>>) -> tensor<2xf32>
  check.expect_eq_const %f, dense<[1.0, 2.0]> : tensor<2xf32>
  %back = stablehlo.bitcast_convert %f : (tensor<2xf32>) -> tensor<complex<f32>>
  check.expect_eq_const %back, dense<(1.0, 2.0)> : tensor<complex<f32>>
  %bits = stablehlo.constant dense<[true, false, true, false, false, false, false, true]> : tensor<8xi1>
  %b = stablehlo.bitcast_convert %bits : (tensor<8xi1>) -> tensor<ui8>
  check.expect_eq_const %b, dense<133> : tensor<ui8>
  %u = stablehlo.constant dense<6> : tensor<ui8>
  %p = stablehlo.bitcast_convert %u : (tensor<ui8>) -> tensor<8xi1>
  check.expect_eq_const %p, dense<[false, true, true, false, false, false, false, false]> : tensor<8xi1>
  func.return
}

// -----

// convert complex -> i1 looks at the real part (as XLA does).
func.func @convert_to_pred() {
  %z = stablehlo.constant dense<[(0.0, 1.0), (2.0, 0.0)]> : tensor<2xcomplex<f32>>
  %p = stablehlo.convert %z : (tensor<2xcomplex<f32>>) -> tensor<2xi1>
  check.expect_eq_const %p, dense<[false, true]> : tensor<2xi1>
  func.return
}

// -----

// logistic(z) = 1 / (1 + exp(-z)): logistic(1 + 2i) = 1.0214154 + 0.4034387i
// (by hand: 1 + e^-1 (cos 2 - i sin 2) = 0.8468864 - 0.3345118i, inverted).
func.func @logistic() {
  %z = stablehlo.constant dense<[(1.0, 2.0), (0.0, 0.0)]> : tensor<2xcomplex<f32>>
  %r = stablehlo.logistic %z : tensor<2xcomplex<f32>>
  check.expect_almost_eq_const %r, dense<[(1.0214154, 0.4034387), (0.5, 0.0)]> : tensor<2xcomplex<f32>>
  %w = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f64>>
  %s = stablehlo.logistic %w : tensor<complex<f64>>
  check.expect_almost_eq_const %s, dense<(1.0214153641721805, 0.40343870608154248)> : tensor<complex<f64>>
  func.return
}
