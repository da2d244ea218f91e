// cholesky: the spec's example (a = L L^T with L = [[1,0,0],[2,4,0],[3,5,6]]).
// vkhlo writes zeros into the other (implementation-defined) triangle.
func.func @lower() {
  %a = stablehlo.constant dense<[[1.0, 2.0, 3.0], [2.0, 20.0, 26.0], [3.0, 26.0, 70.0]]> : tensor<3x3xf32>
  %l = "stablehlo.cholesky"(%a) {lower = true} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  check.expect_almost_eq_const %l, dense<[[1.0, 0.0, 0.0], [2.0, 4.0, 0.0], [3.0, 5.0, 6.0]]> : tensor<3x3xf32>
  func.return
}

// -----

func.func @upper_batched_f64() {
  %a = stablehlo.constant dense<[[[1.0, 2.0, 3.0], [2.0, 20.0, 26.0], [3.0, 26.0, 70.0]], [[4.0, 0.0, 0.0], [0.0, 9.0, 0.0], [0.0, 0.0, 16.0]]]> : tensor<2x3x3xf64>
  %u = "stablehlo.cholesky"(%a) {lower = false} : (tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
  check.expect_almost_eq_const %u, dense<[[[1.0, 2.0, 3.0], [0.0, 4.0, 5.0], [0.0, 0.0, 6.0]], [[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 4.0]]]> : tensor<2x3x3xf64>
  func.return
}

// -----

// Hermitian: a = L L^H with L = [[2, 0], [i, 1]]: a = [[4, -2i], [2i, 2]].
func.func @lower_complex() {
  %a = stablehlo.constant dense<[[(4.0, 0.0), (0.0, -2.0)], [(0.0, 2.0), (2.0, 0.0)]]> : tensor<2x2xcomplex<f32>>
  %l = "stablehlo.cholesky"(%a) {lower = true} : (tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  check.expect_almost_eq_const %l, dense<[[(2.0, 0.0), (0.0, 0.0)], [(0.0, 1.0), (1.0, 0.0)]]> : tensor<2x2xcomplex<f32>>
  func.return
}
