// A splat constant of 2^36 elements (256 GiB): the parser materializes
// constants, so this must end in an out-of-memory status (the replay's
// allocator refuses blocks over 256 MiB), not in a crash.
func.func @main() -> tensor<262144x262144xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<262144x262144xf32>
  func.return %c : tensor<262144x262144xf32>
}
