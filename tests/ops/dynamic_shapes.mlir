// The dynamic-shape ops with static result types and constant shape operands.
func.func @broadcast_iota_reshape() {
  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %shape = stablehlo.constant dense<[3, 2]> : tensor<2xi64>
  %b = "stablehlo.dynamic_broadcast_in_dim"(%x, %shape) {broadcast_dimensions = array<i64: 1>} : (tensor<2xi32>, tensor<2xi64>) -> tensor<3x2xi32>
  check.expect_eq_const %b, dense<[[1, 2], [1, 2], [1, 2]]> : tensor<3x2xi32>
  %i = stablehlo.dynamic_iota %shape, dim = 0 : (tensor<2xi64>) -> tensor<3x2xi32>
  check.expect_eq_const %i, dense<[[0, 0], [1, 1], [2, 2]]> : tensor<3x2xi32>
  %s6 = stablehlo.constant dense<[6]> : tensor<1xi64>
  %r = stablehlo.dynamic_reshape %i, %s6 : (tensor<3x2xi32>, tensor<1xi64>) -> tensor<6xi32>
  check.expect_eq_const %r, dense<[0, 0, 1, 1, 2, 2]> : tensor<6xi32>
  func.return
}

// -----

func.func @pad_slice_dimension_size() {
  %x = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %v = stablehlo.constant dense<0.5> : tensor<f32>
  %lo = stablehlo.constant dense<[1]> : tensor<1xi32>
  %hi = stablehlo.constant dense<[2]> : tensor<1xi32>
  %in = stablehlo.constant dense<[1]> : tensor<1xi32>
  %p = stablehlo.dynamic_pad %x, %v, %lo, %hi, %in : (tensor<3xf32>, tensor<f32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<8xf32>
  check.expect_eq_const %p, dense<[0.5, 1.0, 0.5, 2.0, 0.5, 3.0, 0.5, 0.5]> : tensor<8xf32>
  %start = stablehlo.constant dense<[1]> : tensor<1xi64>
  %limit = stablehlo.constant dense<[8]> : tensor<1xi64>
  %step = stablehlo.constant dense<[2]> : tensor<1xi64>
  %s = stablehlo.real_dynamic_slice %p, %start, %limit, %step : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf32>
  check.expect_eq_const %s, dense<[1.0, 2.0, 3.0, 0.5]> : tensor<4xf32>
  %n = stablehlo.get_dimension_size %p, dim = 0 : (tensor<8xf32>) -> tensor<i32>
  check.expect_eq_const %n, dense<8> : tensor<i32>
  func.return
}

// -----

func.func @gather() {
  %x = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %idx = stablehlo.constant dense<[[1], [0]]> : tensor<2x1xi32>
  %sizes = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %g = "stablehlo.dynamic_gather"(%x, %idx, %sizes) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<2x3xi32>, tensor<2x1xi32>, tensor<2xi32>) -> tensor<2x2xi32>
  check.expect_eq_const %g, dense<[[4, 5], [1, 2]]> : tensor<2x2xi32>
  func.return
}

// -----

// Dynamic result types refined while parsing (hlo/refine.h): sizes computed
// from get_dimension_size and integer arithmetic, a private function with a
// dynamic signature specialized for its operands (called and as a
// composite's decomposition), a loop variable of dynamic type.
func.func private @twice(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = stablehlo.add %a, %a : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

func.func @refined() {
  %x = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %rows = stablehlo.get_dimension_size %x, dim = 0 : (tensor<2x3xf32>) -> tensor<i32>
  %cols = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %r2 = stablehlo.multiply %rows, %two : tensor<i32>
  %a = stablehlo.reshape %r2 : (tensor<i32>) -> tensor<1xi32>
  %b = stablehlo.reshape %cols : (tensor<i32>) -> tensor<1xi32>
  %shape = stablehlo.concatenate %a, %b, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %iota = stablehlo.dynamic_iota %shape, dim = 0 : (tensor<2xi32>) -> tensor<?x?xf32>
  check.expect_eq_const %iota, dense<[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]> : tensor<4x3xf32>
  %t = func.call @twice(%iota) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %u = func.call @twice(%x) : (tensor<2x3xf32>) -> tensor<?x?xf32>
  check.expect_eq_const %u, dense<[[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]> : tensor<2x3xf32>
  %k = stablehlo.composite "test.twice" %u {decomposition = @twice} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  check.expect_eq_const %k, dense<[[4.0, 8.0, 12.0], [16.0, 20.0, 24.0]]> : tensor<2x3xf32>
  %flat = stablehlo.constant dense<12> : tensor<1xi64>
  %f = stablehlo.dynamic_reshape %t, %flat : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  %lo = stablehlo.constant dense<[1]> : tensor<1xi32>
  %z = stablehlo.constant dense<0> : tensor<1xi32>
  %v = stablehlo.constant dense<9.0> : tensor<f32>
  %p = stablehlo.dynamic_pad %f, %v, %lo, %z, %z : (tensor<?xf32>, tensor<f32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
  %s = "stablehlo.slice"(%p) {start_indices = array<i64: 0>, limit_indices = array<i64: 13>, strides = array<i64: 3>} : (tensor<?xf32>) -> tensor<?xf32>
  check.expect_eq_const %s, dense<[9.0, 0.0, 2.0, 4.0, 6.0]> : tensor<5xf32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %w:2 = stablehlo.while(%i = %i0, %acc = %s) : tensor<i32>, tensor<?xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %two : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %d = stablehlo.add %acc, %acc : tensor<?xf32>
      stablehlo.return %i1, %d : tensor<i32>, tensor<?xf32>
    }
  check.expect_eq_const %w#1, dense<[36.0, 0.0, 8.0, 16.0, 24.0]> : tensor<5xf32>
  func.return
}

// -----

// Result shapes as operands (jax's custom calls under shape polymorphism):
// indices_of_shape_operands refines the results and drops the operands the
// target never sees; shape_refinement_operand_wrapper is its operand.
func.func @custom_call_result_shapes() {
  %x = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<3x2xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %two = stablehlo.constant dense<2> : tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %two, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %w = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%x, %shape) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<3x2xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  %s = stablehlo.custom_call @Sharding(%w, %shape) {indices_of_shape_operands = dense<1> : tensor<1xi64>, mhlo.sharding = "{replicated}"} : (tensor<?x2xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  check.expect_eq_const %s, dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  func.return
}

// -----

// StableHLO's dynamic ops as jax.export writes them under shape
// polymorphism, as custom calls: a cumulative sum whose window is the
// operand's length (dynamic_reduce_window), top-k of a computed k, and the
// random bits of a computed shape against the static op's.
func.func private @sum(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %b : tensor<f32>
  func.return %0 : tensor<f32>
}

func.func @dynamic_custom_calls() {
  %x = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %n32 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<4xf32>) -> tensor<i32>
  %n = stablehlo.convert %n32 : (tensor<i32>) -> tensor<i64>
  %w = stablehlo.reshape %n : (tensor<i64>) -> tensor<1xi64>
  %one = stablehlo.constant dense<[1]> : tensor<1xi64>
  %lo = stablehlo.subtract %w, %one : tensor<1xi64>
  %zero = stablehlo.constant dense<[0]> : tensor<1xi64>
  %pad1 = stablehlo.concatenate %lo, %zero, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %pad = stablehlo.reshape %pad1 : (tensor<2xi64>) -> tensor<1x2xi64>
  %c = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %z, %w, %one, %one, %one, %pad) {called_computations = [@sum]} : (tensor<4xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1x2xi64>) -> tensor<?xf32>
  check.expect_eq_const %c, dense<[1.0, 3.0, 6.0, 10.0]> : tensor<4xf32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %k = stablehlo.divide %n32, %two : tensor<i32>
  %t:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<4xf32>, tensor<i32>) -> (tensor<?xf32>, tensor<?xi32>)
  check.expect_eq_const %t#0, dense<[4.0, 3.0]> : tensor<2xf32>
  check.expect_eq_const %t#1, dense<[3, 2]> : tensor<2xi32>
  %state = stablehlo.constant dense<[1, 2]> : tensor<2xui64>
  %rows = stablehlo.constant dense<[2]> : tensor<1xi64>
  %shape = stablehlo.concatenate %rows, %w, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%state, %shape) {rng_algorithm = #stablehlo<rng_algorithm PHILOX>} : (tensor<2xui64>, tensor<2xi64>) -> (tensor<2xui64>, tensor<2x?xui32>)
  %s:2 = stablehlo.rng_bit_generator %state, algorithm = PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x4xui32>)
  check.expect_eq %r#0, %s#0 : tensor<2xui64>
  check.expect_eq %r#1, %s#1 : tensor<2x4xui32>
  func.return
}

// -----

// The shape rules of refinement, op by op: each result declared with
// dynamic dimensions gets the static shape its operands give (checked by
// the expected values' types).
func.func @shape_rules() {
  %x = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<?x?xf32>
  check.expect_eq_const %t, dense<[[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]> : tensor<3x2xf32>
  %r = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<?x2xf32>
  check.expect_eq_const %r, dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %b = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<2x?x?xf32>
  check.expect_eq_const %b, dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<2x2x3xf32>
  %c = stablehlo.concatenate %x, %x, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  check.expect_eq_const %c, dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<4x3xf32>
  %s = stablehlo.slice %x [0:2, 1:3:2] : (tensor<2x3xf32>) -> tensor<?x?xf32>
  check.expect_eq_const %s, dense<[[2.0], [5.0]]> : tensor<2x1xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %x, %z, low = [0, 1], high = [1, 0], interior = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<?x?xf32>
  check.expect_eq_const %p, dense<[[0.0, 1.0, 0.0, 2.0, 0.0, 3.0], [0.0, 4.0, 0.0, 5.0, 0.0, 6.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<3x6xf32>
  %d = stablehlo.dot_general %x, %x, contracting_dims = [1] x [1] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<?x?xf32>
  check.expect_eq_const %d, dense<[[14.0, 32.0], [32.0, 77.0]]> : tensor<2x2xf32>
  %m = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<?xf32>
  check.expect_eq_const %m, dense<[5.0, 7.0, 9.0]> : tensor<3xf32>
  %w = "stablehlo.reduce_window"(%x, %z) <{window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %e: tensor<f32>):
    %sum = stablehlo.add %a, %e : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<?x?xf32>
  check.expect_eq_const %w, dense<[[3.0, 5.0], [9.0, 11.0]]> : tensor<2x2xf32>
  %i = stablehlo.constant dense<1> : tensor<i32>
  %ds = stablehlo.dynamic_slice %x, %i, %i, sizes = [1, 2] : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<?x?xf32>
  check.expect_eq_const %ds, dense<[[5.0, 6.0]]> : tensor<1x2xf32>
  %rv = stablehlo.reverse %x, dims = [1] : tensor<?x?xf32>
  check.expect_eq_const %rv, dense<[[3.0, 2.0, 1.0], [6.0, 5.0, 4.0]]> : tensor<2x3xf32>
  %t2 = stablehlo.constant dense<3.0> : tensor<2x3xf32>
  %k = stablehlo.compare GT, %x, %t2, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<?x?xi1>
  check.expect_eq_const %k, dense<[[false, false, false], [true, true, true]]> : tensor<2x3xi1>
  %in = stablehlo.constant dense<[[[1.0], [2.0], [3.0]]]> : tensor<1x3x1xf32>
  %ker = stablehlo.constant dense<1.0> : tensor<2x1x1xf32>
  %cv = stablehlo.convolution(%in, %ker) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], pad = [[0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x1xf32>, tensor<2x1x1xf32>) -> tensor<?x?x?xf32>
  check.expect_eq_const %cv, dense<[[[3.0], [5.0]]]> : tensor<1x2x1xf32>
  func.return
}

// -----

// Shape operands of index type (tensor<2xindex>, as older lowerings write
// them) are 64-bit extents.
func.func @main() {
  %shape = stablehlo.constant dense<[2, 3]> : tensor<2xindex>
  %i = "stablehlo.dynamic_iota"(%shape) {iota_dimension = 1 : i64} : (tensor<2xindex>) -> tensor<?x?xf32>
  %x = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %r = "stablehlo.dynamic_reshape"(%x, %shape) : (tensor<6xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  %s = stablehlo.add %i, %r : tensor<?x?xf32>
  check.expect_eq_const %s, dense<[[1.0, 3.0, 5.0], [4.0, 6.0, 8.0]]> : tensor<2x3xf32>
  func.return
}
