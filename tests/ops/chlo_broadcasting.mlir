// chlo.broadcast_* (CHLO's implicitly broadcasting ops, as TensorFlow's
// legalization writes them): numpy-style trailing alignment, size-1
// dimensions stretched, broadcast_dimensions for the lower-rank operand.
func.func @trailing_and_ones() {
  %a = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %row = stablehlo.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %col = stablehlo.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %0 = chlo.broadcast_add %a, %row : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  check.expect_eq_const %0, dense<[[11.0, 22.0, 33.0], [14.0, 25.0, 36.0]]> : tensor<2x3xf32>
  %1 = chlo.broadcast_multiply %col, %row : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  check.expect_eq_const %1, dense<[[10.0, 20.0, 30.0], [20.0, 40.0, 60.0]]> : tensor<2x3xf32>
  %2 = "chlo.broadcast_maximum"(%row, %col) : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  check.expect_eq_const %2, dense<[[10.0, 20.0, 30.0], [10.0, 20.0, 30.0]]> : tensor<2x3xf32>
  func.return
}

// -----

func.func @broadcast_dimensions() {
  %a = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %c = stablehlo.constant dense<[10, 20]> : tensor<2xi32>
  %0 = chlo.broadcast_subtract %a, %c {broadcast_dimensions = array<i64: 0>} : (tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x3xi32>
  check.expect_eq_const %0, dense<[[-9, -8, -7], [-16, -15, -14]]> : tensor<2x3xi32>
  %1 = chlo.broadcast_remainder %c, %a {broadcast_dimensions = array<i64: 0>} : (tensor<2xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  check.expect_eq_const %1, dense<[[0, 0, 1], [0, 0, 2]]> : tensor<2x3xi32>
  %s = stablehlo.constant dense<1> : tensor<i32>
  %2 = chlo.broadcast_shift_left %a, %s : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
  check.expect_eq_const %2, dense<[[2, 4, 6], [8, 10, 12]]> : tensor<2x3xi32>
  func.return
}

// -----

func.func @compare_select_complex() {
  %a = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = stablehlo.constant dense<3.5> : tensor<f32>
  %gt = chlo.broadcast_compare %a, %t {comparison_direction = #chlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>
  check.expect_eq_const %gt, dense<[[false, false, false], [true, true, true]]> : tensor<2x3xi1>
  %m = chlo.broadcast_select %gt, %a, %t : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  check.expect_eq_const %m, dense<[[3.5, 3.5, 3.5], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %im = stablehlo.constant dense<[1.0, -1.0, 0.5]> : tensor<3xf32>
  %z = chlo.broadcast_complex %a, %im : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xcomplex<f32>>
  %zi = stablehlo.imag %z : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xf32>
  check.expect_eq_const %zi, dense<[[1.0, -1.0, 0.5], [1.0, -1.0, 0.5]]> : tensor<2x3xf32>
  func.return
}

// -----

func.func @dynamic_operands() {
  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %b = stablehlo.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %0 = chlo.broadcast_divide %a, %b : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<?x?xf32>
  check.expect_eq_const %0, dense<[[2.0, 8.0], [6.0, 16.0], [10.0, 24.0]]> : tensor<3x2xf32>
  func.return
}

// -----

// chlo.constant, chlo.constant_like and chlo.square (CHLO's other
// non-function ops).
func.func @constant_square() {
  %a = chlo.constant dense<[[1.5, -2.0], [3.0, 0.5]]> : tensor<2x2xf32>
  %s = chlo.square %a : tensor<2x2xf32> -> tensor<2x2xf32>
  check.expect_eq_const %s, dense<[[2.25, 4.0], [9.0, 0.25]]> : tensor<2x2xf32>
  %one = "chlo.constant_like"(%a) {value = 1.0 : f32} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  check.expect_eq_const %one, dense<1.0> : tensor<2x2xf32>
  %i = stablehlo.constant dense<[3, -4]> : tensor<2xi32>
  %seven = "chlo.constant_like"(%i) {value = 7 : i32} : (tensor<2xi32>) -> tensor<?xi32>
  check.expect_eq_const %seven, dense<7> : tensor<2xi32>
  %si = chlo.square %i : tensor<2xi32> -> tensor<2xi32>
  check.expect_eq_const %si, dense<[9, 16]> : tensor<2xi32>
  %z = stablehlo.constant dense<[(3.0, 4.0), (1.0, -1.0)]> : tensor<2xcomplex<f32>>
  %zz = chlo.square %z : tensor<2xcomplex<f32>> -> tensor<2xcomplex<f32>>
  check.expect_eq_const %zz, dense<[(-7.0, 24.0), (0.0, -2.0)]> : tensor<2xcomplex<f32>>
  func.return
}
