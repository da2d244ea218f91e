// select_and_scatter with a window stride of 2^63 - 1: as for reduce_window,
// the stride literal did not compile; one window, so taken as 1.
func.func @main(%x: tensor<3x2xf32>, %s: tensor<1x2xf32>) -> tensor<3x2xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%x, %s, %init) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  }, {
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %0 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %0 : tensor<f32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 9223372036854775807, 1>} : (tensor<3x2xf32>, tensor<1x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}
