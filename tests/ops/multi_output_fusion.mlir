// Producer-consumer multi-output fusion (codegen/fusion.c, merge_consumers):
// a value stored because something else reads it too (a check here, the
// next loop iteration, a returned result), and read in place by another
// kernel's computation, is computed, stored and used by one kernel.  The
// inputs pass through optimization_barrier so that nothing folds them away.
// Every split runs fused and unfused (tests/unit_ops.c).  Values computed
// by hand; every one is exact in f32.

// c' = a * b + c reads two full-size values, so it is stored (it is also
// checked); h' = 2 c' - a reads it in place.  a = i, b = i + 1, c = 16 - i:
// c' = i^2 + 16, h' = 2 i^2 - i + 32.
func.func @main_cell() {
  %a0 = stablehlo.iota dim = 0 : tensor<16xf32>
  %one = stablehlo.constant dense<1.0> : tensor<16xf32>
  %sixteen = stablehlo.constant dense<16.0> : tensor<16xf32>
  %two = stablehlo.constant dense<2.0> : tensor<16xf32>
  %b0 = stablehlo.add %a0, %one : tensor<16xf32>
  %c0 = stablehlo.subtract %sixteen, %a0 : tensor<16xf32>
  %a, %b, %c = stablehlo.optimization_barrier %a0, %b0, %c0 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %ab = stablehlo.multiply %a, %b : tensor<16xf32>
  %c2 = stablehlo.add %ab, %c : tensor<16xf32>
  %d = stablehlo.multiply %c2, %two : tensor<16xf32>
  %h2 = stablehlo.subtract %d, %a : tensor<16xf32>
  check.expect_eq_const %c2, dense<[16.0, 17.0, 20.0, 25.0, 32.0, 41.0, 52.0, 65.0, 80.0, 97.0, 116.0, 137.0, 160.0, 185.0, 212.0, 241.0]> : tensor<16xf32>
  check.expect_eq_const %h2, dense<[32.0, 33.0, 38.0, 47.0, 60.0, 77.0, 98.0, 123.0, 152.0, 185.0, 222.0, 263.0, 308.0, 357.0, 410.0, 467.0]> : tensor<16xf32>
  func.return
}

// -----

// An Adam-like update: m' = m / 2 + g and v' = v + g^2 (each read by the
// update and checked), p' = p - m' / sqrt(v').
func.func @main_adam() {
  %p0 = stablehlo.constant dense<[10.0, 20.0, 30.0, 40.0]> : tensor<4xf32>
  %g0 = stablehlo.constant dense<[3.0, 0.0, 4.0, 1.0]> : tensor<4xf32>
  %m0 = stablehlo.constant dense<[4.0, 6.0, 2.0, 2.0]> : tensor<4xf32>
  %v0 = stablehlo.constant dense<[16.0, 9.0, 9.0, 0.0]> : tensor<4xf32>
  %half = stablehlo.constant dense<0.5> : tensor<4xf32>
  %p, %g, %m, %v = stablehlo.optimization_barrier %p0, %g0, %m0, %v0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %mh = stablehlo.multiply %m, %half : tensor<4xf32>
  %m2 = stablehlo.add %mh, %g : tensor<4xf32>
  %gg = stablehlo.multiply %g, %g : tensor<4xf32>
  %v2 = stablehlo.add %v, %gg : tensor<4xf32>
  %s = stablehlo.sqrt %v2 : tensor<4xf32>
  %u = stablehlo.divide %m2, %s : tensor<4xf32>
  %p2 = stablehlo.subtract %p, %u : tensor<4xf32>
  check.expect_eq_const %m2, dense<[5.0, 3.0, 5.0, 2.0]> : tensor<4xf32>
  check.expect_eq_const %v2, dense<[25.0, 9.0, 25.0, 1.0]> : tensor<4xf32>
  check.expect_eq_const %p2, dense<[9.0, 19.0, 29.0, 38.0]> : tensor<4xf32>
  func.return
}

// -----

// A chain: e1 = x y + z, e2 = e1 x + y, e3 = e2 - e1, each checked.
func.func @main_chain() {
  %x0 = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y0 = stablehlo.constant dense<[2.0, 2.0, 2.0, 2.0]> : tensor<4xf32>
  %z0 = stablehlo.constant dense<[0.0, 1.0, 0.0, 1.0]> : tensor<4xf32>
  %x, %y, %z = stablehlo.optimization_barrier %x0, %y0, %z0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %xy = stablehlo.multiply %x, %y : tensor<4xf32>
  %e1 = stablehlo.add %xy, %z : tensor<4xf32>
  %e1x = stablehlo.multiply %e1, %x : tensor<4xf32>
  %e2 = stablehlo.add %e1x, %y : tensor<4xf32>
  %e3 = stablehlo.subtract %e2, %e1 : tensor<4xf32>
  check.expect_eq_const %e1, dense<[2.0, 5.0, 6.0, 9.0]> : tensor<4xf32>
  check.expect_eq_const %e2, dense<[4.0, 12.0, 20.0, 38.0]> : tensor<4xf32>
  check.expect_eq_const %e3, dense<[2.0, 7.0, 14.0, 29.0]> : tensor<4xf32>
  func.return
}

// -----

// A consumer that reads the stored value elsewhere than at its own index
// (reversed): e1 = x y + z = [2, 5, 6, 9], r = reverse(e1) + x.
func.func @main_reversed() {
  %x0 = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y0 = stablehlo.constant dense<[2.0, 2.0, 2.0, 2.0]> : tensor<4xf32>
  %z0 = stablehlo.constant dense<[0.0, 1.0, 0.0, 1.0]> : tensor<4xf32>
  %x, %y, %z = stablehlo.optimization_barrier %x0, %y0, %z0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %xy = stablehlo.multiply %x, %y : tensor<4xf32>
  %e1 = stablehlo.add %xy, %z : tensor<4xf32>
  %re = stablehlo.reverse %e1, dims = [0] : tensor<4xf32>
  %r = stablehlo.add %re, %x : tensor<4xf32>
  check.expect_eq_const %e1, dense<[2.0, 5.0, 6.0, 9.0]> : tensor<4xf32>
  check.expect_eq_const %r, dense<[10.0, 8.0, 8.0, 6.0]> : tensor<4xf32>
  func.return
}

// -----

// A recurrent cell in a loop: c' = 2 c + h, h' = c' - h, three steps from
// c = [1, 2], h = [0, 1]: ([2, 5], [2, 4]), ([6, 14], [4, 10]), ([16, 38], [12, 28]).
func.func @main_loop() {
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %n = stablehlo.constant dense<3> : tensor<i32>
  %c0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %h0 = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %r:3 = stablehlo.while(%i = %i0, %c = %c0, %h = %h0) : tensor<i32>, tensor<2xf32>, tensor<2xf32>
  cond {
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %two = stablehlo.constant dense<2.0> : tensor<2xf32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %cc = stablehlo.multiply %c, %two : tensor<2xf32>
    %c2 = stablehlo.add %cc, %h : tensor<2xf32>
    %h2 = stablehlo.subtract %c2, %h : tensor<2xf32>
    stablehlo.return %i2, %c2, %h2 : tensor<i32>, tensor<2xf32>, tensor<2xf32>
  }
  check.expect_eq_const %r#1, dense<[16.0, 38.0]> : tensor<2xf32>
  check.expect_eq_const %r#2, dense<[12.0, 28.0]> : tensor<2xf32>
  func.return
}

// -----

// A gather read in place by two consumers (an embedding lookup feeding two
// kernels): rows 2 and 0 of the table, squared and negated.
func.func @main_gather() {
  %t0 = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %j0 = stablehlo.constant dense<[[2], [0]]> : tensor<2x1xi32>
  %t, %j = stablehlo.optimization_barrier %t0, %j0 : tensor<4x2xf32>, tensor<2x1xi32>
  %g = "stablehlo.gather"(%t, %j) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>}> : (tensor<4x2xf32>, tensor<2x1xi32>) -> tensor<2x2xf32>
  %sq = stablehlo.multiply %g, %g : tensor<2x2xf32>
  %ng = stablehlo.negate %g : tensor<2x2xf32>
  check.expect_eq_const %sq, dense<[[25.0, 36.0], [1.0, 4.0]]> : tensor<2x2xf32>
  check.expect_eq_const %ng, dense<[[-5.0, -6.0], [-1.0, -2.0]]> : tensor<2x2xf32>
  func.return
}
