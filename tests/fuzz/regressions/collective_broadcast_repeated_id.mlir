// A process listed twice in one group: it completed the collective twice,
// the second time with nothing to wait for (a null dereference).
func.func @bcast(%x : tensor<2xi64>) -> tensor<2xi64> {
  %r = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[1, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}
func.func @main() -> (tensor<2xi64>, tensor<2xi64>) {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %r:2 = "interpreter.run_parallel"(%a, %a) {programs = [[@bcast], [@bcast]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
  return %r#0, %r#1 : tensor<2xi64>, tensor<2xi64>
}
