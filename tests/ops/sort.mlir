// sort without a `dimension` attribute sorts along the last dimension (the
// attribute's default is -1), as the generic form StableHLO prints writes it.
func.func @main() {
  %x = stablehlo.constant dense<[[1.0, 3.0, 2.0], [6.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %s = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  check.expect_eq_const %s, dense<[[3.0, 2.0, 1.0], [6.0, 5.0, 4.0]]> : tensor<2x3xf32>
  %t = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  check.expect_eq_const %t, dense<[[6.0, 4.0, 5.0], [1.0, 3.0, 2.0]]> : tensor<2x3xf32>
  func.return
}
