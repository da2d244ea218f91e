// Collectives with one process (one replica of one partition): every group
// is {0}, so results are the operands; ids are 0.
func.func @all_reduce() {
  %x = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  check.expect_eq_const %r, dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  func.return
}

// -----

func.func @all_gather_all_to_all_reduce_scatter() {
  %x = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %g = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x2xi32>) -> tensor<2x2xi32>
  check.expect_eq_const %g, dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %t = "stablehlo.all_to_all"(%x) {split_dimension = 0 : i64, concat_dimension = 1 : i64, split_count = 1 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x2xi32>) -> tensor<2x2xi32>
  check.expect_eq_const %t, dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %s = "stablehlo.reduce_scatter"(%x) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %m = stablehlo.maximum %a, %b : tensor<i32>
      stablehlo.return %m : tensor<i32>
  }) {scatter_dimension = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x2xi32>) -> tensor<2x2xi32>
  check.expect_eq_const %s, dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  func.return
}

// -----

// collective_permute: process 0 receives only through a 0 -> 0 pair,
// otherwise zeros; collective_broadcast: 0 is in a group, so its own value.
func.func @permute_broadcast() {
  %x = stablehlo.constant dense<[5, 6]> : tensor<2xi64>
  %p = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 0]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  check.expect_eq_const %p, dense<[5, 6]> : tensor<2xi64>
  %q = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  check.expect_eq_const %q, dense<[0, 0]> : tensor<2xi64>
  %b = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  check.expect_eq_const %b, dense<[5, 6]> : tensor<2xi64>
  func.return
}

// -----

// collective_reduce on one process: the group [0] is process 0 alone, its
// root, so the reduction of its one value is that value.
func.func @reduce_alone() {
  %x = stablehlo.constant dense<[5, 6]> : tensor<2xi64>
  %r = "stablehlo.collective_reduce"(%x) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %s = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  check.expect_eq_const %r, dense<[5, 6]> : tensor<2xi64>
  func.return
}

// -----

func.func @ids() {
  %r = stablehlo.replica_id : tensor<ui32>
  %p = stablehlo.partition_id : tensor<ui32>
  check.expect_eq_const %r, dense<0> : tensor<ui32>
  check.expect_eq_const %p, dense<0> : tensor<ui32>
  func.return
}

// -----

// The partitioner's annotations in programs exported with shardings are
// their operands on one device: @Sharding, a manual region's
// @SPMDFullToShardShape / @SPMDShardToFullShape, the host-offload hints, and
// Shardy's round-trip custom calls (jax.export with Shardy).
func.func @sharding_annotations() {
  %x = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %s = stablehlo.custom_call @Sharding(%x) {backend_config = "", mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = stablehlo.custom_call @SPMDFullToShardShape(%s) {mhlo.sharding = "{manual}"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %d = stablehlo.add %m, %m : tensor<2x2xf32>
  %f = stablehlo.custom_call @SPMDShardToFullShape(%d) {mhlo.sharding = "{replicated}"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %h = stablehlo.custom_call @MoveToHost(%f) {backend_config = ""} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %g = stablehlo.custom_call @MoveToDevice(%h) {backend_config = ""} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  check.expect_eq_const %g, dense<[[2.0, 4.0], [6.0, 8.0]]> : tensor<2x2xf32>
  %l = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%g) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %n = stablehlo.negate %l : tensor<2x2xf32>
  %o = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%n) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = stablehlo.custom_call @xla.sdy.FuncResultSharding(%o) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{}, {}]>]>"}} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  check.expect_eq_const %r, dense<[[-2.0, -4.0], [-6.0, -8.0]]> : tensor<2x2xf32>
  func.return
}

// -----

// async_start / async_done (spec): the body's slice or collective runs in
// place, the future is its value; block arguments or captured values.
func.func @async_start_done() {
  %x = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %f = "stablehlo.async_start"(%x) ({
  ^bb0(%a: tensor<2x4xf32>):
    %s = "stablehlo.slice"(%a) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 2>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
    "stablehlo.return"(%s) : (tensor<2x2xf32>) -> ()
  }) : (tensor<2x4xf32>) -> !stablehlo.future<tensor<2x2xf32>>
  %y = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<2x2xf32>>) -> tensor<2x2xf32>
  check.expect_eq_const %y, dense<[[2.0, 4.0], [6.0, 8.0]]> : tensor<2x2xf32>
  %g = "stablehlo.async_start"(%x) ({
    %r = "stablehlo.all_reduce"(%x) ({
    ^bb1(%p: tensor<f32>, %q: tensor<f32>):
      %t = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    "stablehlo.return"(%r) : (tensor<2x4xf32>) -> ()
  }) : (tensor<2x4xf32>) -> !stablehlo.future<tensor<2x4xf32>>
  %z = "stablehlo.async_done"(%g) : (!stablehlo.future<tensor<2x4xf32>>) -> tensor<2x4xf32>
  check.expect_eq %z, %x : tensor<2x4xf32>
  func.return
}

// -----

// Shardy (sdy) as JAX writes it with its Shardy partitioner: on one device
// the shardings are the whole values and named computations inline.
sdy.mesh @mesh = <["x"=2, "y"=1]>
func.func @shardy_one_device() {
  %x = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %0 = sdy.sharding_constraint %x <@mesh, [{"x"}, {}]> : tensor<2x2xf32>
  %1 = sdy.named_computation<"square">(%0) (%a: tensor<2x2xf32>) {
    %s = stablehlo.multiply %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>]>} : tensor<2x2xf32>
    sdy.return %s : tensor<2x2xf32>
  } : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{"y"}, {}]>] manual_axes={"y"} (%b: tensor<2x2xf32>) {
    %n = stablehlo.negate %b : tensor<2x2xf32>
    sdy.return %n : tensor<2x2xf32>
  } : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %3 = sdy.reshard %2 <@mesh, [{}, {}]> : tensor<2x2xf32>
  check.expect_eq_const %3, dense<[[-1.0, -4.0], [-9.0, -16.0]]> : tensor<2x2xf32>
  func.return
}
