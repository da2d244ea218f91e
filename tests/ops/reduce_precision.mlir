// reduce_precision (spec 'reduce_precision'): the mantissa rounded to
// nearest even, exponents past the format's range to infinity or signed
// zero.  A NaN stays a NaN, except with no mantissa bits to hold one: then
// +inf (the StableHLO interpreter's and XLA's rule).  Ties go to the even
// last kept bit: with no mantissa bits that is the exponent's, so 3 = 1.5 x 2
// becomes 2 and 5 = 1.25 x 4 becomes 4.
func.func @f32_to_e5m10() {
  %x = stablehlo.constant dense<[65505.0, 65520.0, 1.0e-8, -0.0, 0x7FC00000, 1.00048828125, 1.000732421875]> : tensor<7xf32>
  %r = stablehlo.reduce_precision %x, format = e5m10 : tensor<7xf32>
  check.expect_eq_const %r, dense<[65504.0, 0x7F800000, 0.0, -0.0, 0x7FC00000, 1.0, 1.0009765625]> : tensor<7xf32>
  func.return
}

// -----

func.func @nan_without_mantissa_bits() {
  %x = stablehlo.constant dense<[0x7FC00000, 0xFFC00000, 3.0, -5.0]> : tensor<4xf32>
  %r = stablehlo.reduce_precision %x, format = e5m0 : tensor<4xf32>
  check.expect_eq_const %r, dense<[0x7F800000, 0x7F800000, 2.0, -4.0]> : tensor<4xf32>
  %d = stablehlo.constant dense<[0x7FFFFFFFFFFFFFFF, 2.5]> : tensor<2xf64>
  %s = stablehlo.reduce_precision %d, format = e5m0 : tensor<2xf64>
  check.expect_eq_const %s, dense<[0x7FF0000000000000, 2.0]> : tensor<2xf64>
  func.return
}
