// interpreter.run_parallel without operands: the processes' argument list
// was a null pointer plus an offset (UBSan).
func.func @id() -> tensor<ui32> {
  %r = stablehlo.partition_id : tensor<ui32>
  return %r : tensor<ui32>
}
func.func @main() -> (tensor<ui32>, tensor<ui32>) {
  %r:2 = "interpreter.run_parallel"() {programs = [[@id, @id]]} : () -> (tensor<ui32>, tensor<ui32>)
  return %r#0, %r#1 : tensor<ui32>, tensor<ui32>
}
