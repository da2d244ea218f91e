// Integer dot_general (spec 'dot_general': each operand converted to the
// result's type, products and sums in it, wrapping) and integer weights of
// float products, on whatever path the compiler takes for these constants
// (tests/e2e_gemm.c checks the GEMM kernels' integer and scaled-weight
// paths on random inputs).  Values computed by hand.

// i8 into i8: 100 * 2 + 100 * 1 = 300 = 44 (mod 256); -128 * 2 + 1 = -255 = 1.
func.func private @dot_i8_wraps(%a: tensor<2x2xi8>, %b: tensor<2x1xi8>) -> tensor<2x1xi8> {
  %c = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xi8>, tensor<2x1xi8>) -> tensor<2x1xi8>
  return %c : tensor<2x1xi8>
}
func.func @main_i8() {
  %a = stablehlo.constant dense<[[100, 100], [-128, 1]]> : tensor<2x2xi8>
  %b = stablehlo.constant dense<[[2], [1]]> : tensor<2x1xi8>
  %r = func.call @dot_i8_wraps(%a, %b) : (tensor<2x2xi8>, tensor<2x1xi8>) -> tensor<2x1xi8>
  check.expect_eq_const %r, dense<[[44], [1]]> : tensor<2x1xi8>
  func.return
}

// -----

// ui8 into ui32: 255 * 255 * 2 = 130050; i32: 2147483647 * 2 + 1 = 2^32 - 1 = -1.
func.func @main_wide() {
  %a = stablehlo.constant dense<[[255, 255]]> : tensor<1x2xui8>
  %b = stablehlo.constant dense<[[255], [255]]> : tensor<2x1xui8>
  %a32 = stablehlo.convert %a : (tensor<1x2xui8>) -> tensor<1x2xui32>
  %b32 = stablehlo.convert %b : (tensor<2x1xui8>) -> tensor<2x1xui32>
  %r = stablehlo.dot_general %a32, %b32, contracting_dims = [1] x [0] : (tensor<1x2xui32>, tensor<2x1xui32>) -> tensor<1x1xui32>
  check.expect_eq_const %r, dense<[[130050]]> : tensor<1x1xui32>
  %c = stablehlo.constant dense<[[2147483647, 1]]> : tensor<1x2xi32>
  %d = stablehlo.constant dense<[[2], [1]]> : tensor<2x1xi32>
  %s = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<1x2xi32>, tensor<2x1xi32>) -> tensor<1x1xi32>
  check.expect_eq_const %s, dense<[[-1]]> : tensor<1x1xi32>
  func.return
}

// -----

// i8 weights w = [[-3, 4], [5, -6]] with scales s = [0.5, 0.25] per column,
// x = [[1, 2]]: before the product x (w s) = [-1.5 + 5, 1 - 3] = [3.5, -2];
// after it (x w) s = [7, -8] s = the same.
func.func private @weights(%x: tensor<1x2xf32>, %w: tensor<2x2xi8>, %s: tensor<2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %wf = stablehlo.convert %w : (tensor<2x2xi8>) -> tensor<2x2xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
  %ws = stablehlo.multiply %wf, %sb : tensor<2x2xf32>
  %before = stablehlo.dot_general %x, %ws, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %p = stablehlo.dot_general %x, %wf, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %s2 = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<2xf32>) -> tensor<1x2xf32>
  %after = stablehlo.multiply %p, %s2 : tensor<1x2xf32>
  return %before, %after : tensor<1x2xf32>, tensor<1x2xf32>
}
func.func @main_weights() {
  %x = stablehlo.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %w = stablehlo.constant dense<[[-3, 4], [5, -6]]> : tensor<2x2xi8>
  %s = stablehlo.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %r:2 = func.call @weights(%x, %w, %s) : (tensor<1x2xf32>, tensor<2x2xi8>, tensor<2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  check.expect_eq_const %r#0, dense<[[3.5, -2.0]]> : tensor<1x2xf32>
  check.expect_eq_const %r#1, dense<[[3.5, -2.0]]> : tensor<1x2xf32>
  func.return
}

// -----

// int4 weights quantized per group of 8 rows with zero points (asymmetric:
// (w - z) * s), w [16, 2] = 3 in column 0 and -2 in column 1, scales
// s = [[0.5, 1], [2, 0.25]] and zero points z = [[1, 0], [0, -2]] per group
// and column: rows 0-7 dequantize to [1, -2], rows 8-15 to [6, 0].  With
// x = eight 1s then eight 2s: [8 * 1 + 16 * 6, -2 * 8 + 0] = [104, -16]
// (groups swapped would give [64, -32]).
func.func private @grouped(%x: tensor<1x16xf32>, %w: tensor<16x2xi4>, %s: tensor<2x2xf32>, %z: tensor<2x2xi4>) -> tensor<1x2xf32> {
  %wf = stablehlo.convert %w : (tensor<16x2xi4>) -> tensor<16x2xf32>
  %w3 = stablehlo.reshape %wf : (tensor<16x2xf32>) -> tensor<2x8x2xf32>
  %zf = stablehlo.convert %z : (tensor<2x2xi4>) -> tensor<2x2xf32>
  %zb = stablehlo.broadcast_in_dim %zf, dims = [0, 2] : (tensor<2x2xf32>) -> tensor<2x8x2xf32>
  %wz = stablehlo.subtract %w3, %zb : tensor<2x8x2xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 2] : (tensor<2x2xf32>) -> tensor<2x8x2xf32>
  %ws = stablehlo.multiply %wz, %sb : tensor<2x8x2xf32>
  %w2 = stablehlo.reshape %ws : (tensor<2x8x2xf32>) -> tensor<16x2xf32>
  %c = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] : (tensor<1x16xf32>, tensor<16x2xf32>) -> tensor<1x2xf32>
  return %c : tensor<1x2xf32>
}
func.func @main_grouped() {
  %x = stablehlo.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]]> : tensor<1x16xf32>
  %w = stablehlo.constant dense<[[3, -2], [3, -2], [3, -2], [3, -2], [3, -2], [3, -2], [3, -2], [3, -2],
                                 [3, -2], [3, -2], [3, -2], [3, -2], [3, -2], [3, -2], [3, -2], [3, -2]]> : tensor<16x2xi4>
  %s = stablehlo.constant dense<[[0.5, 1.0], [2.0, 0.25]]> : tensor<2x2xf32>
  %z = stablehlo.constant dense<[[1, 0], [0, -2]]> : tensor<2x2xi4>
  %r = func.call @grouped(%x, %w, %s, %z) : (tensor<1x16xf32>, tensor<16x2xi4>, tensor<2x2xf32>, tensor<2x2xi4>) -> tensor<1x2xf32>
  check.expect_eq_const %r, dense<[[104.0, -16.0]]> : tensor<1x2xf32>
  func.return
}
