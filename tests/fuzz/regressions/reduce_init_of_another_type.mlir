// A reduce whose init value is i64 for an i32 input, its body i32: the
// verifier compared only the kinds (signed integer) of the types, and the
// kernel assigned the i64 init to an int (glslang: cannot convert).  The
// spec wants the init's element type to be the input's.
func.func @main(%x: tensor<3xi32>) -> tensor<i32> {
  %init = stablehlo.constant dense<1> : tensor<i64>
  %r = "stablehlo.reduce"(%x, %init) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {dimensions = array<i64: 0>} : (tensor<3xi32>, tensor<i64>) -> tensor<i32>
  func.return %r : tensor<i32>
}
