// triangular_solve: left/right side, lower/upper, transpose, unit diagonal,
// complex adjoint.  Expected values solved by hand.
func.func @left_lower() {
  %a = stablehlo.constant dense<[[2.0, 0.0], [1.0, 4.0]]> : tensor<2x2xf32>
  %b = stablehlo.constant dense<[[2.0, 4.0], [9.0, 10.0]]> : tensor<2x2xf32>
  %x = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  check.expect_almost_eq_const %x, dense<[[1.0, 2.0], [2.0, 2.0]]> : tensor<2x2xf32>
  func.return
}

// -----

// x * a^T = b with a upper: a^T = [[2, 0], [1, 4]]; x = [[1, 2]] gives b = [[4, 8]].
func.func @right_upper_transpose() {
  %a = stablehlo.constant dense<[[2.0, 1.0], [7.0, 4.0]]> : tensor<2x2xf32>
  %b = stablehlo.constant dense<[[4.0, 8.0]]> : tensor<1x2xf32>
  %x = "stablehlo.triangular_solve"(%a, %b) {left_side = false, lower = false, unit_diagonal = false, transpose_a = #stablehlo<transpose TRANSPOSE>} : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  check.expect_almost_eq_const %x, dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  func.return
}

// -----

// unit_diagonal ignores the stored diagonal: [[1, 0], [3, 1]] x = [1, 5] -> x = [1, 2].
func.func @unit_diagonal_batched_f64() {
  %a = stablehlo.constant dense<[[[9.0, 0.0], [3.0, 9.0]], [[9.0, 0.0], [0.0, 9.0]]]> : tensor<2x2x2xf64>
  %b = stablehlo.constant dense<[[[1.0], [5.0]], [[6.0], [7.0]]]> : tensor<2x2x1xf64>
  %x = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x2x2xf64>, tensor<2x2x1xf64>) -> tensor<2x2x1xf64>
  check.expect_almost_eq_const %x, dense<[[[1.0], [2.0]], [[6.0], [7.0]]]> : tensor<2x2x1xf64>
  func.return
}

// -----

// adjoint of a = [[i, 0], [1, 2]] (lower) is [[-i, 1], [0, 2]];
// [[-i, 1], [0, 2]] x = [1 - i, 4] -> x1 = 2, x0 = (1 - i - 2) / -i = (-1 - i) i / 1 = 1 - i.
func.func @left_lower_adjoint_complex() {
  %a = stablehlo.constant dense<[[(0.0, 1.0), (0.0, 0.0)], [(1.0, 0.0), (2.0, 0.0)]]> : tensor<2x2xcomplex<f32>>
  %b = stablehlo.constant dense<[[(1.0, -1.0)], [(4.0, 0.0)]]> : tensor<2x1xcomplex<f32>>
  %x = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose ADJOINT>} : (tensor<2x2xcomplex<f32>>, tensor<2x1xcomplex<f32>>) -> tensor<2x1xcomplex<f32>>
  check.expect_almost_eq_const %x, dense<[[(1.0, -1.0)], [(2.0, 0.0)]]> : tensor<2x1xcomplex<f32>>
  func.return
}
