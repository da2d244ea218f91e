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

// -----

// A composite whose body is a region (VHLO 1.14), without a decomposition
// function; and one with both, where the decomposition is what it means.
func.func @triple(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  %1 = stablehlo.add %0, %a : tensor<2xf32>
  func.return %1 : tensor<2xf32>
}

func.func @main() {
  %x = stablehlo.constant dense<[1.0, -2.5]> : tensor<2xf32>
  %d = "stablehlo.composite"(%x) ({
  ^bb0(%a: tensor<2xf32>):
    %s = stablehlo.add %a, %a : tensor<2xf32>
    "stablehlo.return"(%s) : (tensor<2xf32>) -> ()
  }) {name = "my.double", version = 1 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  check.expect_eq_const %d, dense<[2.0, -5.0]> : tensor<2xf32>
  %t = "stablehlo.composite"(%x) ({
  ^bb0(%a: tensor<2xf32>):
    "stablehlo.return"(%a) : (tensor<2xf32>) -> ()
  }) {name = "my.triple", decomposition = @triple, version = 1 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  check.expect_eq_const %t, dense<[3.0, -7.5]> : tensor<2xf32>
  func.return
}
