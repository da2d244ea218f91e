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

// -----

// interpreter.print: a check of kind "print" that passes (its text is the
// value; tests/cli_test.sh looks at what the CLI prints).
func.func @print() {
  %0 = stablehlo.iota dim = 0 : tensor<3xi32>
  interpreter.print %0 : tensor<3xi32>
  check.expect_eq_const %0, dense<[0, 1, 2]> : tensor<3xi32>
  func.return
}
