// all_reduce whose computation takes i16 for i64 operands (not
// promotable): the verifier did not look at the computation, and across
// two processes the kernel called it with i64 values (glslang: no
// matching overloaded function).
func.func @sum(%x: tensor<4xi64>) -> tensor<4xi64> {
  %r = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<i16>, %b: tensor<i64>):
    %s = stablehlo.add %b, %b : tensor<i64>
    stablehlo.return %s : tensor<i64>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xi64>) -> tensor<4xi64>
  func.return %r : tensor<4xi64>
}
func.func @main() -> (tensor<4xi64>, tensor<4xi64>) {
  %a = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %r:2 = "interpreter.run_parallel"(%a, %a) {programs = [[@sum], [@sum]]} : (tensor<4xi64>, tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>)
  func.return %r#0, %r#1 : tensor<4xi64>, tensor<4xi64>
}
