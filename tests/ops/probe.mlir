// interpreter.probe returns its operand and records it under probe_id;
// check.expect_serialized_eq compares a value with the recorded one.
func.func @probe() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = stablehlo.add %a, %a : tensor<2xi32>
  %p = interpreter.probe %b, probe_id = "doubled" : tensor<2xi32>
  check.expect_eq_const %p, dense<[2, 4]> : tensor<2xi32>
  check.expect_serialized_eq %p, probe_id = "doubled" : tensor<2xi32>
  func.return
}
