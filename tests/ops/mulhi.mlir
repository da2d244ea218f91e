// chlo.mulhi: the high half of the double-width product.
// 100 * 100 = 10000 = 0x2710 -> 0x27 = 39; -100 * 100 = -10000 -> -40 (floor).
func.func @mulhi_i8() {
  %a = stablehlo.constant dense<[100, -100, 127]> : tensor<3xi8>
  %b = stablehlo.constant dense<[100, 100, 2]> : tensor<3xi8>
  %r = "chlo.mulhi"(%a, %b) : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  check.expect_eq_const %r, dense<[39, -40, 0]> : tensor<3xi8>
  func.return
}

// -----

// 65535^2 = 4294836225 = 0xFFFE0001 -> 65534.
func.func @mulhi_ui16() {
  %a = stablehlo.constant dense<[65535, 256]> : tensor<2xui16>
  %b = stablehlo.constant dense<[65535, 256]> : tensor<2xui16>
  %r = "chlo.mulhi"(%a, %b) : (tensor<2xui16>, tensor<2xui16>) -> tensor<2xui16>
  check.expect_eq_const %r, dense<[65534, 1]> : tensor<2xui16>
  func.return
}

// -----

// 2^30 * 4 = 2^32 -> 1; -2^31 * -2^31 = 2^62 -> 2^30.
func.func @mulhi_i32() {
  %a = stablehlo.constant dense<[1073741824, -2147483648, -1]> : tensor<3xi32>
  %b = stablehlo.constant dense<[4, -2147483648, 1]> : tensor<3xi32>
  %r = "chlo.mulhi"(%a, %b) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  check.expect_eq_const %r, dense<[1, 1073741824, -1]> : tensor<3xi32>
  func.return
}

// -----

// 2^62 * 8 = 2^65 -> 2; -2^62 * 8 -> -2; -1 * 1 -> -1; 3^39 * -3^39 -> floor(-3^78 / 2^64).
func.func @mulhi_i64() {
  %a = stablehlo.constant dense<[4611686018427387904, -4611686018427387904, -1, 4052555153018976267]> : tensor<4xi64>
  %b = stablehlo.constant dense<[8, 8, 1, -4052555153018976267]> : tensor<4xi64>
  %r = "chlo.mulhi"(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  check.expect_eq_const %r, dense<[2, -2, -1, -890303633130962112]> : tensor<4xi64>
  func.return
}

// -----

// (2^64 - 1)^2 = 2^128 - 2^65 + 1 -> 2^64 - 2.
func.func @mulhi_ui64() {
  %a = stablehlo.constant dense<[18446744073709551615, 4294967296]> : tensor<2xui64>
  %b = stablehlo.constant dense<[18446744073709551615, 4294967296]> : tensor<2xui64>
  %r = "chlo.mulhi"(%a, %b) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
  check.expect_eq_const %r, dense<[18446744073709551614, 1]> : tensor<2xui64>
  func.return
}
