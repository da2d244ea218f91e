func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<i32>) {
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %c = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = stablehlo.multiply %a, %bb : tensor<2x3xf32>
  %1 = stablehlo.add %0, %c : tensor<2x3xf32>
  %k = stablehlo.constant dense<42> : tensor<i32>
  return %1, %k : tensor<2x3xf32>, tensor<i32>
}
