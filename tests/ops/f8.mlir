// Small float types: stored as their bits in a byte, computed as float,
// rounded to nearest even after every op.
// f8E4M3FN: 3 mantissa bits; 1.0625 ties to 1.0, 1.1875 ties to 1.25,
// 300 -> 288 (spacing 32 in [256, 512)), 448 is the largest finite value.
func.func @convert_e4m3fn() {
  %x = stablehlo.constant dense<[1.0625, 1.1875, 300.0, 448.0, -0.0]> : tensor<5xf32>
  %f8 = stablehlo.convert %x : (tensor<5xf32>) -> tensor<5xf8E4M3FN>
  %y = stablehlo.convert %f8 : (tensor<5xf8E4M3FN>) -> tensor<5xf32>
  check.expect_eq_const %y, dense<[1.0, 1.25, 288.0, 448.0, -0.0]> : tensor<5xf32>
  func.return
}

// -----

// f8E5M2: 2 mantissa bits; 1.125 ties to 1.0, 1.375 ties to 1.5;
// 2^-16 is the smallest subnormal.
func.func @convert_e5m2() {
  %x = stablehlo.constant dense<[1.125, 1.375, 1.52587890625e-05, 57344.0]> : tensor<4xf32>
  %f8 = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xf8E5M2>
  %y = stablehlo.convert %f8 : (tensor<4xf8E5M2>) -> tensor<4xf32>
  check.expect_eq_const %y, dense<[1.0, 1.5, 1.52587890625e-05, 57344.0]> : tensor<4xf32>
  func.return
}

// -----

// Arithmetic rounds to the type: in f8E4M3FN, 1 + 0.0625 = 1.0625 -> 1.0.
func.func @add_rounds() {
  %a = stablehlo.constant dense<[1.0, 1.0, 2.0]> : tensor<3xf8E4M3FN>
  %b = stablehlo.constant dense<[0.0625, 0.125, 0.25]> : tensor<3xf8E4M3FN>
  %s = stablehlo.add %a, %b : tensor<3xf8E4M3FN>
  %y = stablehlo.convert %s : (tensor<3xf8E4M3FN>) -> tensor<3xf32>
  check.expect_eq_const %y, dense<[1.0, 1.125, 2.25]> : tensor<3xf32>
  func.return
}

// -----

// FNUZ types: 0x80 is the NaN, so -0 becomes +0.  15.5 ties to 16 with
// 3 mantissa bits and is exact with 4 (f8E3M4, whose largest value it is).
func.func @fnuz_and_others() {
  %x = stablehlo.constant dense<[0.5, -0.0, 15.5]> : tensor<3xf32>
  %a = stablehlo.convert %x : (tensor<3xf32>) -> tensor<3xf8E4M3FNUZ>
  %ya = stablehlo.convert %a : (tensor<3xf8E4M3FNUZ>) -> tensor<3xf32>
  check.expect_eq_const %ya, dense<[0.5, 0.0, 16.0]> : tensor<3xf32>
  %b = stablehlo.convert %x : (tensor<3xf32>) -> tensor<3xf8E4M3B11FNUZ>
  %yb = stablehlo.convert %b : (tensor<3xf8E4M3B11FNUZ>) -> tensor<3xf32>
  check.expect_eq_const %yb, dense<[0.5, 0.0, 16.0]> : tensor<3xf32>
  %c = stablehlo.convert %x : (tensor<3xf32>) -> tensor<3xf8E3M4>
  %yc = stablehlo.convert %c : (tensor<3xf8E3M4>) -> tensor<3xf32>
  check.expect_eq_const %yc, dense<[0.5, -0.0, 15.5]> : tensor<3xf32>
  func.return
}

// -----

func.func @dot_e4m3() {
  %a = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf8E4M3>
  %d = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0] : (tensor<3xf8E4M3>, tensor<3xf8E4M3>) -> tensor<f8E4M3>
  %y = stablehlo.convert %d : (tensor<f8E4M3>) -> tensor<f32>
  check.expect_eq_const %y, dense<14.0> : tensor<f32>
  func.return
}
