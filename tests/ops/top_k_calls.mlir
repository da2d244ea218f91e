// Top-k as exporters write it: custom_call @mhlo.topk (jax.lax.top_k;
// largest = false for the smallest) and XLA's partitioner's @TopK with a
// comparator and a tuple result.  Equal elements keep their order.
func.func @mhlo_topk_largest() {
  %x = stablehlo.constant dense<[[1.0, 5.0, 3.0, 5.0, 2.0], [9.0, 8.0, 7.0, 6.0, 10.0]]> : tensor<2x5xf32>
  %0:2 = stablehlo.custom_call @mhlo.topk(%x) {mhlo.attributes = {k = 3 : i64, largest = true}, mhlo.version = 1 : i64} : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
  check.expect_eq_const %0#0, dense<[[5.0, 5.0, 3.0], [10.0, 9.0, 8.0]]> : tensor<2x3xf32>
  check.expect_eq_const %0#1, dense<[[1, 3, 2], [4, 0, 1]]> : tensor<2x3xi32>
  func.return
}

// -----

func.func @mhlo_topk_smallest() {
  %x = stablehlo.constant dense<[[1.0, 5.0, 3.0, 1.0, 2.0], [9.0, -8.0, 0x7FC00000, 6.0, -0.0]]> : tensor<2x5xf32>
  %0:2 = stablehlo.custom_call @mhlo.topk(%x) {mhlo.attributes = {k = 3 : i64, largest = false}, mhlo.version = 1 : i64} : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
  check.expect_eq_const %0#0, dense<[[1.0, 1.0, 2.0], [-8.0, -0.0, 6.0]]> : tensor<2x3xf32>
  check.expect_eq_const %0#1, dense<[[0, 3, 4], [1, 4, 3]]> : tensor<2x3xi32>
  %i = stablehlo.iota dim = 0 : tensor<3000xi32>
  %c = stablehlo.constant dense<1000> : tensor<3000xi32>
  %m = stablehlo.remainder %i, %c : tensor<3000xi32>
  %1:2 = stablehlo.custom_call @mhlo.topk(%m) {mhlo.attributes = {k = 4 : i64, largest = false}} : (tensor<3000xi32>) -> (tensor<4xi32>, tensor<4xi32>)
  check.expect_eq_const %1#0, dense<[0, 0, 0, 1]> : tensor<4xi32>
  check.expect_eq_const %1#1, dense<[0, 1000, 2000, 1]> : tensor<4xi32>
  func.return
}

// -----

func.func private @greater(%a: tensor<f32>, %b: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}

func.func @partitioner_topk() {
  %x = stablehlo.constant dense<[[1.0, 5.0, 3.0, 4.0], [2.0, 2.0, 7.0, 1.0]]> : tensor<2x4xf32>
  %0 = stablehlo.custom_call @TopK(%x) {called_computations = [@greater], xla_shape = "(f32[2,2]{1,0}, s32[2,2]{1,0})"} : (tensor<2x4xf32>) -> tuple<tensor<2x2xf32>, tensor<2x2xi32>>
  %v = stablehlo.get_tuple_element %0[0] : (tuple<tensor<2x2xf32>, tensor<2x2xi32>>) -> tensor<2x2xf32>
  %i = stablehlo.get_tuple_element %0[1] : (tuple<tensor<2x2xf32>, tensor<2x2xi32>>) -> tensor<2x2xi32>
  check.expect_eq_const %v, dense<[[5.0, 4.0], [7.0, 2.0]]> : tensor<2x2xf32>
  check.expect_eq_const %i, dense<[[1, 3], [2, 0]]> : tensor<2x2xi32>
  func.return
}

// -----

// @mhlo.topk with its attributes as a backend_config JSON object (k from
// the result type).
func.func @mhlo_topk_backend_config() {
  %x = stablehlo.constant dense<[[4, 1, 3, 1], [0, 7, 7, 2]]> : tensor<2x4xi32>
  %0:2 = stablehlo.custom_call @mhlo.topk(%x) {backend_config = "{\22k\22: 2, \22dim\22: -1, \22largest\22: false, \22sorted\22: true}"} : (tensor<2x4xi32>) -> (tensor<2x2xi32>, tensor<2x2xi32>)
  check.expect_eq_const %0#0, dense<[[1, 1], [0, 2]]> : tensor<2x2xi32>
  check.expect_eq_const %0#1, dense<[[1, 3], [0, 3]]> : tensor<2x2xi32>
  %1:2 = stablehlo.custom_call @mhlo.topk(%x) {backend_config = "{\22k\22: 2, \22dim\22: -1, \22largest\22: true, \22sorted\22: true}"} : (tensor<2x4xi32>) -> (tensor<2x2xi32>, tensor<2x2xi32>)
  check.expect_eq_const %1#0, dense<[[4, 3], [7, 7]]> : tensor<2x2xi32>
  check.expect_eq_const %1#1, dense<[[0, 2], [1, 2]]> : tensor<2x2xi32>
  func.return
}

// -----

// @stablehlo.dynamic_approx_top_k (jax.lax.approx_max_k under shape
// polymorphism): @ApproxTopK's operands, k, and the result shapes as shape
// operands; answered exactly.
func.func @gt(%a: tensor<f32>, %b: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<i1> {
  %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %c : tensor<i1>
}

func.func @main() {
  %x = stablehlo.constant dense<[3.0, 9.0, -1.0, 4.0, 9.5, 0.0]> : tensor<6xf32>
  %iota = stablehlo.iota dim = 0 : tensor<6xi32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %minus_one = stablehlo.constant dense<-1> : tensor<i32>
  %k = stablehlo.constant dense<3> : tensor<i32>
  %shape = stablehlo.constant dense<[3]> : tensor<1xi32>
  %v, %i = stablehlo.custom_call @stablehlo.dynamic_approx_top_k(%x, %iota, %init, %minus_one, %k, %shape, %shape) {called_computations = [@gt], indices_of_shape_operands = dense<[5, 6]> : tensor<2xi64>, mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.95 : f32, reduction_dim = 0 : i64, reduction_input_size_override = -1 : i64}} : (tensor<6xf32>, tensor<6xi32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<?xf32>, tensor<?xi32>)
  check.expect_eq_const %v, dense<[9.5, 9.0, 4.0]> : tensor<3xf32>
  check.expect_eq_const %i, dense<[4, 1, 3]> : tensor<3xi32>
  func.return
}
