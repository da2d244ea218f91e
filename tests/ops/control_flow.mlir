// if, case, optimization_barrier, tuple / get_tuple_element and logistic,
// each with expected values computed by hand from the spec's definitions.

func.func @if_takes_true_branch() {
  %p = stablehlo.constant dense<true> : tensor<i1>
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %r = "stablehlo.if"(%p) ({
    %x = stablehlo.add %a, %a : tensor<2xf32>
    stablehlo.return %x : tensor<2xf32>
  }, {
    stablehlo.return %a : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  check.expect_eq_const %r, dense<[2.0, 4.0]> : tensor<2xf32>
  func.return
}

// -----

func.func @if_takes_false_branch() {
  %p = stablehlo.constant dense<false> : tensor<i1>
  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %r:2 = "stablehlo.if"(%p) ({
    %x = stablehlo.add %a, %a : tensor<3xi32>
    stablehlo.return %x, %a : tensor<3xi32>, tensor<3xi32>
  }, {
    %y = stablehlo.multiply %a, %a : tensor<3xi32>
    %z = stablehlo.negate %a : tensor<3xi32>
    stablehlo.return %y, %z : tensor<3xi32>, tensor<3xi32>
  }) : (tensor<i1>) -> (tensor<3xi32>, tensor<3xi32>)
  check.expect_eq_const %r#0, dense<[1, 4, 9]> : tensor<3xi32>
  check.expect_eq_const %r#1, dense<[-1, -2, -3]> : tensor<3xi32>
  func.return
}

// -----

func.func @case_in_range_and_out_of_range() {
  %one = stablehlo.constant dense<1> : tensor<i32>
  %seven = stablehlo.constant dense<7> : tensor<i32>
  %a = stablehlo.constant dense<[10, 20]> : tensor<2xi32>
  %r1 = "stablehlo.case"(%one) ({
    stablehlo.return %a : tensor<2xi32>
  }, {
    %x = stablehlo.add %a, %a : tensor<2xi32>
    stablehlo.return %x : tensor<2xi32>
  }, {
    %y = stablehlo.subtract %a, %a : tensor<2xi32>
    stablehlo.return %y : tensor<2xi32>
  }) : (tensor<i32>) -> tensor<2xi32>
  // An index out of range runs the last branch.
  %r2 = "stablehlo.case"(%seven) ({
    stablehlo.return %a : tensor<2xi32>
  }, {
    %y = stablehlo.subtract %a, %a : tensor<2xi32>
    stablehlo.return %y : tensor<2xi32>
  }) : (tensor<i32>) -> tensor<2xi32>
  check.expect_eq_const %r1, dense<[20, 40]> : tensor<2xi32>
  check.expect_eq_const %r2, dense<[0, 0]> : tensor<2xi32>
  func.return
}

// -----

func.func @optimization_barrier_and_tuples() {
  %a = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %r:2 = "stablehlo.optimization_barrier"(%a, %b) : (tensor<2xf32>, tensor<2xi32>) -> (tensor<2xf32>, tensor<2xi32>)
  %t = "stablehlo.tuple"(%r#0, %r#1) : (tensor<2xf32>, tensor<2xi32>) -> tuple<tensor<2xf32>, tensor<2xi32>>
  %g0 = "stablehlo.get_tuple_element"(%t) <{index = 0 : i32}> : (tuple<tensor<2xf32>, tensor<2xi32>>) -> tensor<2xf32>
  %g1 = "stablehlo.get_tuple_element"(%t) <{index = 1 : i32}> : (tuple<tensor<2xf32>, tensor<2xi32>>) -> tensor<2xi32>
  check.expect_eq_const %g0, dense<[1.5, -2.0]> : tensor<2xf32>
  check.expect_eq_const %g1, dense<[3, 4]> : tensor<2xi32>
  func.return
}

// -----

func.func @logistic() {
  // 1 / (1 + exp(-x)): 0.5, 0.880797078, 0.119202922, 0.999954602
  %x = stablehlo.constant dense<[0.0, 2.0, -2.0, 10.0]> : tensor<4xf32>
  %y = stablehlo.logistic %x : tensor<4xf32>
  check.expect_almost_eq_const %y, dense<[0.5, 0.880797078, 0.119202922, 0.999954602]> : tensor<4xf32>
  func.return
}
