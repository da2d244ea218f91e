// reduce_window with a window stride of 2^63 - 1 (one window, as the spec
// allows): the kernel printed the stride as a GLSL integer literal glslang
// rejects; a stride past INT32_MAX leaves one window, so it is taken as 1.
func.func @main(%x: tensor<3x2xi64>) -> tensor<1x2xi64> {
  %init = stablehlo.constant dense<0> : tensor<i64>
  %r = "stablehlo.reduce_window"(%x, %init) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %0 = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %0 : tensor<i64>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 9223372036854775807, 1>} : (tensor<3x2xi64>, tensor<i64>) -> tensor<1x2xi64>
  func.return %r : tensor<1x2xi64>
}
