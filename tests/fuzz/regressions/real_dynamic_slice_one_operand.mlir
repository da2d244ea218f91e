// Found by fuzzing (the portable-artifact reader produced it): a dynamic op
// with fewer operands than the spec's crashed the expand pass; the verifier
// now checks their operand counts.
func.func @main(%x: tensor<4xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.real_dynamic_slice"(%x) : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
