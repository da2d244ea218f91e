// dynamic_gather's constraints depend on its slice_sizes operand, so the
// verifier left them alone; the expand pass made a gather of them without
// checking, and the kernel indexed the operand's shape by start_index_map's
// -1 (UBSan: index out of bounds).
func.func @main(%operand : tensor<3x4x2xi64>, %start_indices : tensor<2x3x2xi64>) -> tensor<2x3x2x2xi64> {
  %slice_sizes = stablehlo.constant dense<[1, 2, 2]> : tensor<3xi64>
  %result = "stablehlo.dynamic_gather"(%operand, %start_indices, %slice_sizes) {
    dimension_numbers = #stablehlo.gather<
      offset_dims = [2, 3],
      collapsed_slice_dims = [0],
      start_index_map = [-1, 0],
      index_vector_dim = 2>,
    indices_are_sorted = false
  } : (tensor<3x4x2xi64>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x2x2xi64>
  func.return %result : tensor<2x3x2x2xi64>
}
