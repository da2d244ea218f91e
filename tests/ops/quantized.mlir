// Quantized element types (spec "Quantized element types", !quant.uniform):
// values are their storage integers; uniform_quantize computes
// round_nearest_even(clamp(min, x / scale + zero_point, max)),
// uniform_dequantize (s - zero_point) * scale, and other ops dequantize,
// compute in the expressed type and quantize (dequantize_op_quantize).
// Expected values by hand.

// 4 / 0.5 - 20 = -12, 15 / 0.5 - 20 = 10, -100 / 0.5 - 20 = -220 and
// 100 / 0.5 - 20 = 180 clamp to i8's range; with the storage range
// <-127:127> the low one clamps to -127.
func.func @quantize_per_tensor() {
  %x = stablehlo.constant dense<[4.0, 15.0, -100.0, 100.0]> : tensor<4xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.5:-20>>
  %s = stablehlo.bitcast_convert %q : (tensor<4x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<4xi8>
  check.expect_eq_const %s, dense<[-12, 10, -128, 127]> : tensor<4xi8>
  %r = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8<-127:127>:f32, 0.5:-20>>
  %t = stablehlo.bitcast_convert %r : (tensor<4x!quant.uniform<i8<-127:127>:f32, 0.5:-20>>) -> tensor<4xi8>
  check.expect_eq_const %t, dense<[-12, 10, -127, 127]> : tensor<4xi8>
  func.return
}

// -----

// Ties round to even: 0.25 / 0.5 = 0.5 -> 0, 0.75 / 0.5 = 1.5 -> 2,
// 1.25 / 0.5 = 2.5 -> 2.  Unsigned storage (MLIR's u8): 1.0 / 0.1 + 128
// = 138, -20 / 0.1 + 128 = -72 clamps to 0.
func.func @rounding_and_unsigned() {
  %x = stablehlo.constant dense<[0.25, 0.75, 1.25]> : tensor<3xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<3xf32>) -> tensor<3x!quant.uniform<i8:f32, 0.5>>
  %s = stablehlo.bitcast_convert %q : (tensor<3x!quant.uniform<i8:f32, 0.5>>) -> tensor<3xi8>
  check.expect_eq_const %s, dense<[0, 2, 2]> : tensor<3xi8>
  %y = stablehlo.constant dense<[1.0, -20.0]> : tensor<2xf32>
  %u = stablehlo.uniform_quantize %y : (tensor<2xf32>) -> tensor<2x!quant.uniform<u8:f32, 0.1:128>>
  %v = stablehlo.bitcast_convert %u : (tensor<2x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<2xui8>
  check.expect_eq_const %v, dense<[138, 0]> : tensor<2xui8>
  func.return
}

// -----

// Per-axis along dimension 1, {0.5:0, 2.0:10}: column 0 (10, 30) * 0.5,
// column 1 (20 - 10, 40 - 10) * 2.
func.func @dequantize_per_axis() {
  %s = stablehlo.constant dense<[[10, 20], [30, 40]]> : tensor<2x2xi8>
  %q = stablehlo.bitcast_convert %s : (tensor<2x2xi8>) -> tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 2.0:10}>>
  %x = stablehlo.uniform_dequantize %q : (tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 2.0:10}>>) -> tensor<2x2xf32>
  check.expect_eq_const %x, dense<[[5.0, 20.0], [15.0, 60.0]]> : tensor<2x2xf32>
  func.return
}

// -----

// add on quantized operands: (2 - 0) * 0.25 + (8 - 4) * 0.5 = 2.5 and
// 6 * 0.25 + (2 - 4) * 0.5 = 0.5, quantized to 0.1:-10 as 15 and -5.
// A quantized operand of a float op (dot_general, weight-only
// quantization): [1, 2] . [(4 - 2) / 4, (6 - 2) / 4] = 0.5 + 2 = 2.5.
func.func @ops_on_quantized_values() {
  %a = stablehlo.constant dense<[2, 6]> : tensor<2xi8>
  %b = stablehlo.constant dense<[8, 2]> : tensor<2xi8>
  %qa = stablehlo.bitcast_convert %a : (tensor<2xi8>) -> tensor<2x!quant.uniform<i8:f32, 0.25>>
  %qb = stablehlo.bitcast_convert %b : (tensor<2xi8>) -> tensor<2x!quant.uniform<i8:f32, 0.5:4>>
  %sum = stablehlo.add %qa, %qb : (tensor<2x!quant.uniform<i8:f32, 0.25>>, tensor<2x!quant.uniform<i8:f32, 0.5:4>>) -> tensor<2x!quant.uniform<i8:f32, 0.1:-10>>
  %s = stablehlo.bitcast_convert %sum : (tensor<2x!quant.uniform<i8:f32, 0.1:-10>>) -> tensor<2xi8>
  check.expect_eq_const %s, dense<[15, -5]> : tensor<2xi8>
  %lhs = stablehlo.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %w = stablehlo.constant dense<[[4], [6]]> : tensor<2x1xi8>
  %qw = stablehlo.bitcast_convert %w : (tensor<2x1xi8>) -> tensor<2x1x!quant.uniform<i8:f32, 0.25:2>>
  %d = stablehlo.dot_general %lhs, %qw, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x1x!quant.uniform<i8:f32, 0.25:2>>) -> tensor<1x1xf32>
  check.expect_eq_const %d, dense<[[2.5]]> : tensor<1x1xf32>
  func.return
}

// -----

// A function taking and returning a quantized value: [1, -2] quantized at
// 0.5 is [2, -4]; doubled and requantized [4, -8]; dequantized [2, -4].
func.func private @twice(%x: tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2x!quant.uniform<i8:f32, 0.5>> {
  %y = stablehlo.add %x, %x : tensor<2x!quant.uniform<i8:f32, 0.5>>
  func.return %y : tensor<2x!quant.uniform<i8:f32, 0.5>>
}
func.func @main() {
  %x = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5>>
  %r = func.call @twice(%q) : (tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2x!quant.uniform<i8:f32, 0.5>>
  %s = stablehlo.bitcast_convert %r : (tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2xi8>
  check.expect_eq_const %s, dense<[4, -8]> : tensor<2xi8>
  %f = stablehlo.uniform_dequantize %r : (tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2xf32>
  check.expect_eq_const %f, dense<[2.0, -4.0]> : tensor<2xf32>
  func.return
}
