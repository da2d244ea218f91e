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

// -----

// Quantized values through ops with regions or several results: their
// storage values are moved, and the regions' ops on them dequantize,
// compute and requantize.  A while loop doubling 10.0 at scale 0.5 (i8:
// storage up to 127, so 63.5) three times, adding a captured quantized
// [0.5, 0]: 20.5, 41.5, then 83.5 clamped to 63.5; -3.0: -6, -12, -24.
func.func @main() {
  %x = stablehlo.constant dense<[10.0, -3.0]> : tensor<2xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5>>
  %half = stablehlo.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %hq = stablehlo.uniform_quantize %half : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5>>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %w:2 = stablehlo.while(%i = %i0, %v = %q) : tensor<i32>, tensor<2x!quant.uniform<i8:f32, 0.5>>
    cond {
      %three = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %d = stablehlo.add %v, %v : tensor<2x!quant.uniform<i8:f32, 0.5>>
      %e = stablehlo.add %d, %hq : tensor<2x!quant.uniform<i8:f32, 0.5>>
      stablehlo.return %i1, %e : tensor<i32>, tensor<2x!quant.uniform<i8:f32, 0.5>>
    }
  %f = stablehlo.uniform_dequantize %w#1 : (tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2xf32>
  check.expect_eq_const %f, dense<[63.5, -24.0]> : tensor<2xf32>
  func.return
}

// -----

// reduce (a body and the pretty `applies` form: each step requantized,
// 1.3 at scale 0.25 is 1.25), sort by a comparator on quantized values,
// and an optimization_barrier of a quantized and a float value.
func.func @main() {
  %x = stablehlo.constant dense<[[1.3, 2.0, -0.6], [0.2, 0.2, 0.2]]> : tensor<2x3xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32, 0.25:-8>>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %zq = stablehlo.uniform_quantize %z : (tensor<f32>) -> tensor<!quant.uniform<i8:f32, 0.25:-8>>
  %r = stablehlo.reduce(%q init: %zq) across dimensions = [1] : (tensor<2x3x!quant.uniform<i8:f32, 0.25:-8>>, tensor<!quant.uniform<i8:f32, 0.25:-8>>) -> tensor<2x!quant.uniform<i8:f32, 0.25:-8>>
    reducer(%a: tensor<!quant.uniform<i8:f32, 0.25:-8>>, %b: tensor<!quant.uniform<i8:f32, 0.25:-8>>) {
      %s = stablehlo.add %a, %b : tensor<!quant.uniform<i8:f32, 0.25:-8>>
      stablehlo.return %s : tensor<!quant.uniform<i8:f32, 0.25:-8>>
    }
  %rf = stablehlo.uniform_dequantize %r : (tensor<2x!quant.uniform<i8:f32, 0.25:-8>>) -> tensor<2xf32>
  check.expect_eq_const %rf, dense<[2.75, 0.75]> : tensor<2xf32>
  %m = stablehlo.reduce(%q init: %zq) applies stablehlo.maximum across dimensions = [0] : (tensor<2x3x!quant.uniform<i8:f32, 0.25:-8>>, tensor<!quant.uniform<i8:f32, 0.25:-8>>) -> tensor<3x!quant.uniform<i8:f32, 0.25:-8>>
  %mf = stablehlo.uniform_dequantize %m : (tensor<3x!quant.uniform<i8:f32, 0.25:-8>>) -> tensor<3xf32>
  check.expect_eq_const %mf, dense<[1.25, 2.0, 0.25]> : tensor<3xf32>
  %row = "stablehlo.slice"(%q) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 3>, strides = array<i64: 1, 1>} : (tensor<2x3x!quant.uniform<i8:f32, 0.25:-8>>) -> tensor<1x3x!quant.uniform<i8:f32, 0.25:-8>>
  %srt = "stablehlo.sort"(%row) ({
  ^bb0(%a: tensor<!quant.uniform<i8:f32, 0.25:-8>>, %b: tensor<!quant.uniform<i8:f32, 0.25:-8>>):
    %lt = stablehlo.compare LT, %a, %b : (tensor<!quant.uniform<i8:f32, 0.25:-8>>, tensor<!quant.uniform<i8:f32, 0.25:-8>>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<1x3x!quant.uniform<i8:f32, 0.25:-8>>) -> tensor<1x3x!quant.uniform<i8:f32, 0.25:-8>>
  %sf = stablehlo.uniform_dequantize %srt : (tensor<1x3x!quant.uniform<i8:f32, 0.25:-8>>) -> tensor<1x3xf32>
  check.expect_eq_const %sf, dense<[[-0.5, 1.25, 2.0]]> : tensor<1x3xf32>
  %b:2 = stablehlo.optimization_barrier %m, %z : tensor<3x!quant.uniform<i8:f32, 0.25:-8>>, tensor<f32>
  %bf = stablehlo.uniform_dequantize %b#0 : (tensor<3x!quant.uniform<i8:f32, 0.25:-8>>) -> tensor<3xf32>
  check.expect_eq_const %bf, dense<[1.25, 2.0, 0.25]> : tensor<3xf32>
  func.return
}
