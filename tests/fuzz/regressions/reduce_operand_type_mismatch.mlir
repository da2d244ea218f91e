// A value used with another type than it was defined with (%init is i64,
// the signature says i32): MLIR refuses it; the parser took the value and
// left the mismatch to later stages.
func.func @main(%x: tensor<3xi32>) -> tensor<i32> {
  %init = stablehlo.constant dense<1> : tensor<i64>
  %r = "stablehlo.reduce"(%x, %init) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {dimensions = array<i64: 0>} : (tensor<3xi32>, tensor<i32>) -> tensor<i32>
  func.return %r : tensor<i32>
}
