// interpreter.run_parallel: a grid of processes (rows: replicas, columns:
// partitions) meeting at their collectives (spec "Parallel execution"), as
// one program on one device (hlo/run_parallel.c).  Operands and results are
// each process's, process after process (replica-major).  The expected
// values are worked out by hand from the spec's definitions.

// all_reduce on a 2 x 2 grid.  channel_id > 0: cross_replica_and_partition,
// one group of all four processes; no channel: cross_replica, the two
// replicas of each partition.
func.func @reduce_max(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %all = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<2xf32>) -> tensor<2xf32>
  %line = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %all, %line : tensor<2xf32>, tensor<2xf32>
}
func.func @main() {
  %a00 = stablehlo.constant dense<[1.0, 8.0]> : tensor<2xf32>
  %a01 = stablehlo.constant dense<[5.0, 2.0]> : tensor<2xf32>
  %a10 = stablehlo.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %a11 = stablehlo.constant dense<[-1.0, 9.0]> : tensor<2xf32>
  %r:8 = "interpreter.run_parallel"(%a00, %a01, %a10, %a11) {
    programs = [[@reduce_max, @reduce_max], [@reduce_max, @reduce_max]]
  } : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) ->
      (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,
       tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  check.expect_eq_const %r#0, dense<[5.0, 9.0]> : tensor<2xf32>
  check.expect_eq_const %r#1, dense<[3.0, 8.0]> : tensor<2xf32>
  check.expect_eq_const %r#2, dense<[5.0, 9.0]> : tensor<2xf32>
  check.expect_eq_const %r#3, dense<[5.0, 9.0]> : tensor<2xf32>
  check.expect_eq_const %r#4, dense<[5.0, 9.0]> : tensor<2xf32>
  check.expect_eq_const %r#5, dense<[3.0, 8.0]> : tensor<2xf32>
  check.expect_eq_const %r#6, dense<[5.0, 9.0]> : tensor<2xf32>
  check.expect_eq_const %r#7, dense<[5.0, 9.0]> : tensor<2xf32>
  func.return
}

// -----

// all_gather with flattened ids (use_global_device_ids) on a 2 x 2 grid,
// groups {0, 3} and {1, 2}; each process builds its operand from its own
// replica_id and partition_id: [10 id, 10 id + 1], id = 2 replica + partition.
func.func @gather() -> tensor<2x2xi32> {
  %r = stablehlo.replica_id : tensor<ui32>
  %p = stablehlo.partition_id : tensor<ui32>
  %two = stablehlo.constant dense<2> : tensor<ui32>
  %rr = stablehlo.multiply %r, %two : tensor<ui32>
  %id = stablehlo.add %rr, %p : tensor<ui32>
  %idi = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>
  %ten = stablehlo.constant dense<10> : tensor<i32>
  %base = stablehlo.multiply %idi, %ten : tensor<i32>
  %b = stablehlo.broadcast_in_dim %base, dims = [] : (tensor<i32>) -> tensor<1x2xi32>
  %io = stablehlo.iota dim = 1 : tensor<1x2xi32>
  %v = stablehlo.add %b, %io : tensor<1x2xi32>
  %g = "stablehlo.all_gather"(%v) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 3], [1, 2]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>,
      use_global_device_ids} : (tensor<1x2xi32>) -> tensor<2x2xi32>
  func.return %g : tensor<2x2xi32>
}
func.func @main() {
  %r:4 = "interpreter.run_parallel"() {programs = [[@gather, @gather], [@gather, @gather]]}
      : () -> (tensor<2x2xi32>, tensor<2x2xi32>, tensor<2x2xi32>, tensor<2x2xi32>)
  check.expect_eq_const %r#0, dense<[[0, 1], [30, 31]]> : tensor<2x2xi32>
  check.expect_eq_const %r#1, dense<[[10, 11], [20, 21]]> : tensor<2x2xi32>
  check.expect_eq_const %r#2, dense<[[10, 11], [20, 21]]> : tensor<2x2xi32>
  check.expect_eq_const %r#3, dense<[[0, 1], [30, 31]]> : tensor<2x2xi32>
  func.return
}

// -----

// reduce_scatter over the two partitions of one replica (channel_id > 0:
// cross_replica_and_partition): the sum, partition p keeping part p.
func.func @scatter_sum(%x: tensor<4x1xf32>) -> tensor<2x1xf32> {
  %s = "stablehlo.reduce_scatter"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
  }) {scatter_dimension = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<4x1xf32>) -> tensor<2x1xf32>
  func.return %s : tensor<2x1xf32>
}
func.func @main() {
  %x0 = stablehlo.constant dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
  %x1 = stablehlo.constant dense<[[10.0], [20.0], [30.0], [40.0]]> : tensor<4x1xf32>
  %r:2 = "interpreter.run_parallel"(%x0, %x1) {programs = [[@scatter_sum, @scatter_sum]]}
      : (tensor<4x1xf32>, tensor<4x1xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>)
  check.expect_eq_const %r#0, dense<[[11.0], [22.0]]> : tensor<2x1xf32>
  check.expect_eq_const %r#1, dense<[[33.0], [44.0]]> : tensor<2x1xf32>
  func.return
}

// -----

// all_to_all across partitions (channel_id > 0) with the group listed
// backwards, [1, 0]: partition 1 is member 0.  Each splits its row in two
// columns' parts; member i gathers part i of every member, in group order.
func.func @exchange(%x: tensor<1x4xi64>) -> tensor<2x2xi64> {
  %t = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
      replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<1x4xi64>) -> tensor<2x2xi64>
  func.return %t : tensor<2x2xi64>
}
func.func @main() {
  %x0 = stablehlo.constant dense<[[1, 2, 3, 4]]> : tensor<1x4xi64>
  %x1 = stablehlo.constant dense<[[5, 6, 7, 8]]> : tensor<1x4xi64>
  %r:2 = "interpreter.run_parallel"(%x0, %x1) {programs = [[@exchange, @exchange]]}
      : (tensor<1x4xi64>, tensor<1x4xi64>) -> (tensor<2x2xi64>, tensor<2x2xi64>)
  check.expect_eq_const %r#0, dense<[[7, 8], [3, 4]]> : tensor<2x2xi64>
  check.expect_eq_const %r#1, dense<[[5, 6], [1, 2]]> : tensor<2x2xi64>
  func.return
}

// -----

// collective_permute around a ring of three of four replicas (0 -> 1 -> 2
// -> 0); replica 3 is in no pair and receives zeros.  collective_broadcast
// from the first member of the group [2, 0]; replica 1 and 3 are in no
// group and receive zeros.
func.func @ring(%x: tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %p = "stablehlo.collective_permute"(%x) {
      source_target_pairs = dense<[[0, 1], [1, 2], [2, 0]]> : tensor<3x2xi64>} : (tensor<1xf32>) -> tensor<1xf32>
  %b = "stablehlo.collective_broadcast"(%x) {
      replica_groups = dense<[[2, 0]]> : tensor<1x2xi64>} : (tensor<1xf32>) -> tensor<1xf32>
  func.return %p, %b : tensor<1xf32>, tensor<1xf32>
}
func.func @main() {
  %x0 = stablehlo.constant dense<[0.5]> : tensor<1xf32>
  %x1 = stablehlo.constant dense<[1.5]> : tensor<1xf32>
  %x2 = stablehlo.constant dense<[2.5]> : tensor<1xf32>
  %x3 = stablehlo.constant dense<[3.5]> : tensor<1xf32>
  %r:8 = "interpreter.run_parallel"(%x0, %x1, %x2, %x3) {programs = [[@ring], [@ring], [@ring], [@ring]]}
      : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) ->
        (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>,
         tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
  check.expect_eq_const %r#0, dense<[2.5]> : tensor<1xf32>
  check.expect_eq_const %r#1, dense<[2.5]> : tensor<1xf32>
  check.expect_eq_const %r#2, dense<[0.5]> : tensor<1xf32>
  check.expect_eq_const %r#3, dense<[0.0]> : tensor<1xf32>
  check.expect_eq_const %r#4, dense<[1.5]> : tensor<1xf32>
  check.expect_eq_const %r#5, dense<[2.5]> : tensor<1xf32>
  check.expect_eq_const %r#6, dense<[0.0]> : tensor<1xf32>
  check.expect_eq_const %r#7, dense<[0.0]> : tensor<1xf32>
  func.return
}

// -----

// collective_broadcast with a dynamic root, two values: value 0 from
// member 1, value 1 from member 0.
func.func @from_roots(%d0: tensor<1xi32>, %d1: tensor<1xi32>, %root: tensor<2xi32>) -> (tensor<1xi32>, tensor<1xi32>) {
  %b:2 = "stablehlo.collective_broadcast"(%d0, %d1, %root) {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, has_dynamic_root}
      : (tensor<1xi32>, tensor<1xi32>, tensor<2xi32>) -> (tensor<1xi32>, tensor<1xi32>)
  func.return %b#0, %b#1 : tensor<1xi32>, tensor<1xi32>
}
func.func @main() {
  %a0 = stablehlo.constant dense<[1]> : tensor<1xi32>
  %a1 = stablehlo.constant dense<[2]> : tensor<1xi32>
  %b0 = stablehlo.constant dense<[3]> : tensor<1xi32>
  %b1 = stablehlo.constant dense<[4]> : tensor<1xi32>
  %root = stablehlo.constant dense<[1, 0]> : tensor<2xi32>
  %r:4 = "interpreter.run_parallel"(%a0, %a1, %root, %b0, %b1, %root) {programs = [[@from_roots], [@from_roots]]}
      : (tensor<1xi32>, tensor<1xi32>, tensor<2xi32>, tensor<1xi32>, tensor<1xi32>, tensor<2xi32>) ->
        (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>)
  check.expect_eq_const %r#0, dense<[3]> : tensor<1xi32>
  check.expect_eq_const %r#1, dense<[2]> : tensor<1xi32>
  check.expect_eq_const %r#2, dense<[3]> : tensor<1xi32>
  check.expect_eq_const %r#3, dense<[2]> : tensor<1xi32>
  func.return
}

// -----

// send / recv between two different programs: ping sends and then waits
// for the answer, pong receives, doubles and sends back (a send does not
// wait for its recv).
func.func @ping(%x: tensor<3xi32>, %t: !stablehlo.token) -> tensor<3xi32> {
  %t1 = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>}
      : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
  %r:2 = "stablehlo.recv"(%t1) {channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>}
      : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
  func.return %r#0 : tensor<3xi32>
}
func.func @pong(%t: !stablehlo.token) -> tensor<3xi32> {
  %r:2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>}
      : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
  %d = stablehlo.add %r#0, %r#0 : tensor<3xi32>
  %t2 = "stablehlo.send"(%d, %r#1) {channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>}
      : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
  func.return %r#0 : tensor<3xi32>
}
func.func @main() {
  %x = stablehlo.constant dense<[4, -5, 6]> : tensor<3xi32>
  %t = stablehlo.after_all : !stablehlo.token
  %r:2 = "interpreter.run_parallel"(%x, %t, %t) {programs = [[@ping], [@pong]]}
      : (tensor<3xi32>, !stablehlo.token, !stablehlo.token) -> (tensor<3xi32>, tensor<3xi32>)
  check.expect_eq_const %r#0, dense<[8, -10, 12]> : tensor<3xi32>
  check.expect_eq_const %r#1, dense<[4, -5, 6]> : tensor<3xi32>
  func.return
}

// -----

// infeed takes the infeed functions' results in order; outfeed passes its
// token on.
func.func @feed(%t: !stablehlo.token) -> (tensor<2xf32>, tensor<2xf32>) {
  %a:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
  %t1 = "stablehlo.outfeed"(%a#0, %a#1) : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
  %b:2 = "stablehlo.infeed"(%t1) : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
  func.return %a#0, %b#0 : tensor<2xf32>, tensor<2xf32>
}
func.func @first() -> tensor<2xf32> {
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
func.func @second() -> tensor<2xf32> {
  %c = stablehlo.constant dense<[3.0, 4.0]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
func.func @main() {
  %t = stablehlo.after_all : !stablehlo.token
  %r:2 = "interpreter.run_parallel"(%t) {programs = [[@feed]], infeed = [@first, @second]}
      : (!stablehlo.token) -> (tensor<2xf32>, tensor<2xf32>)
  check.expect_eq_const %r#0, dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_eq_const %r#1, dense<[3.0, 4.0]> : tensor<2xf32>
  func.return
}

// -----

// collective_reduce (spec 'collective_reduce'): each group's sum lands on
// its first member, the others get zeros.  Four replicas in the groups
// [2, 0] and [1, 3]: replica 2 holds 0.5 + 2.5 (x0 + x2 in the group's
// order, 2 first), replica 1 holds 1.5 + 3.5.
func.func @sum_at_root(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.collective_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[2, 0], [1, 3]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
func.func @main() {
  %x0 = stablehlo.constant dense<[0.5, 10.0]> : tensor<2xf32>
  %x1 = stablehlo.constant dense<[1.5, 20.0]> : tensor<2xf32>
  %x2 = stablehlo.constant dense<[2.5, 30.0]> : tensor<2xf32>
  %x3 = stablehlo.constant dense<[3.5, 40.0]> : tensor<2xf32>
  %r:4 = "interpreter.run_parallel"(%x0, %x1, %x2, %x3) {programs = [[@sum_at_root], [@sum_at_root], [@sum_at_root], [@sum_at_root]]}
      : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) ->
        (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  check.expect_eq_const %r#0, dense<[0.0, 0.0]> : tensor<2xf32>
  check.expect_eq_const %r#1, dense<[5.0, 60.0]> : tensor<2xf32>
  check.expect_eq_const %r#2, dense<[3.0, 40.0]> : tensor<2xf32>
  check.expect_eq_const %r#3, dense<[0.0, 0.0]> : tensor<2xf32>
  func.return
}

// -----

// collective_reduce with a dynamic root, two values, maximum: value 0's
// maximum on member 1, value 1's on member 0.
func.func @max_at_roots(%d0: tensor<1xi32>, %d1: tensor<1xi32>, %root: tensor<2xi32>) -> (tensor<1xi32>, tensor<1xi32>) {
  %b:2 = "stablehlo.collective_reduce"(%d0, %d1, %root) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %m = stablehlo.maximum %a, %b : tensor<i32>
      stablehlo.return %m : tensor<i32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, has_dynamic_root}
      : (tensor<1xi32>, tensor<1xi32>, tensor<2xi32>) -> (tensor<1xi32>, tensor<1xi32>)
  func.return %b#0, %b#1 : tensor<1xi32>, tensor<1xi32>
}
func.func @main() {
  %a0 = stablehlo.constant dense<[7]> : tensor<1xi32>
  %a1 = stablehlo.constant dense<[2]> : tensor<1xi32>
  %b0 = stablehlo.constant dense<[3]> : tensor<1xi32>
  %b1 = stablehlo.constant dense<[9]> : tensor<1xi32>
  %root = stablehlo.constant dense<[1, 0]> : tensor<2xi32>
  %r:4 = "interpreter.run_parallel"(%a0, %a1, %root, %b0, %b1, %root) {programs = [[@max_at_roots], [@max_at_roots]]}
      : (tensor<1xi32>, tensor<1xi32>, tensor<2xi32>, tensor<1xi32>, tensor<1xi32>, tensor<2xi32>) ->
        (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>)
  check.expect_eq_const %r#0, dense<[0]> : tensor<1xi32>
  check.expect_eq_const %r#1, dense<[9]> : tensor<1xi32>
  check.expect_eq_const %r#2, dense<[7]> : tensor<1xi32>
  check.expect_eq_const %r#3, dense<[0]> : tensor<1xi32>
  func.return
}
