// composite: runs its decomposition.
func.func @square_plus.impl(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %m = stablehlo.multiply %x, %x : tensor<2xf32>
  %s = stablehlo.add %m, %y : tensor<2xf32>
  func.return %s, %m : tensor<2xf32>, tensor<2xf32>
}

func.func @main() {
  %x = stablehlo.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %y = stablehlo.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %r:2 = stablehlo.composite "my.square_plus" %x, %y {decomposition = @square_plus.impl} : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  check.expect_eq_const %r#0, dense<[5.0, 8.0]> : tensor<2xf32>
  check.expect_eq_const %r#1, dense<[4.0, 9.0]> : tensor<2xf32>
  func.return
}
