// rng_bit_generator, bit-exact with XLA.  Block values are the Random123
// known-answer vectors: threefry2x32_20(key 0, ctr 0) = (0x6b200159,
// 0x99ba4efe); philox4x32_10(key 0, ctr 0) = (0x6627e8d5, 0xe169c58d,
// 0xbc57ac4c, 0x9b00dbd8); philox4x32_10(all ones) = (0x408f276d,
// 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd).
func.func @three_fry_u64() {
  %s = stablehlo.constant dense<[0, 0]> : tensor<2xui64>
  %ns, %out = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<ui64>)
  check.expect_eq_const %ns, dense<[0, 1]> : tensor<2xui64>
  // 0x99ba4efe6b200159
  check.expect_eq_const %out, dense<11077253088097075545> : tensor<ui64>
  func.return
}

// -----

// 32-bit outputs: the shape splits in halves, word 0 at even and word 1 at
// odd positions of the split dimension; the counter advances by 1.
func.func @three_fry_u32() {
  %s = stablehlo.constant dense<[0, 0]> : tensor<2xui64>
  %ns, %out = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2xui32>)
  check.expect_eq_const %ns, dense<[0, 1]> : tensor<2xui64>
  check.expect_eq_const %out, dense<[1797259609, 2579123966]> : tensor<2xui32>
  func.return
}

// -----

func.func @philox_u32() {
  %s = stablehlo.constant dense<[0, 0, 0]> : tensor<3xui64>
  %ns, %out = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<2x2xui32>)
  check.expect_eq_const %ns, dense<[0, 1, 0]> : tensor<3xui64>
  check.expect_eq_const %out, dense<[[1713891541, 3781805453], [3159862348, 2600524760]]> : tensor<2x2xui32>
  func.return
}

// -----

// DEFAULT is Philox in XLA.  The 128-bit counter wraps to zero.
func.func @default_all_ones() {
  %s = stablehlo.constant dense<18446744073709551615> : tensor<3xui64>
  %ns, %out = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)
  check.expect_eq_const %ns, dense<[18446744073709551615, 0, 0]> : tensor<3xui64>
  check.expect_eq_const %out, dense<[1083123565, 1103641358, 2718681030, 1834242557]> : tensor<4xui32>
  func.return
}

// -----

// 64-bit Philox outputs pair words (0, 1) and (2, 3) of each block.
func.func @philox_u64() {
  %s = stablehlo.constant dense<[0, 0, 0]> : tensor<3xui64>
  %ns, %out = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<2xui64>)
  check.expect_eq_const %ns, dense<[0, 1, 0]> : tensor<3xui64>
  // 0xe169c58d6627e8d5, 0x9b00dbd8bc57ac4c
  check.expect_eq_const %out, dense<[16242730742183356629, 11169168799798111308]> : tensor<2xui64>
  func.return
}
