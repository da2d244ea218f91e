// fft: DFT of [1, 2, 3, 4] is [10, -2+2i, -2, -2-2i]; the inverses undo it.
func.func @fft_c64() {
  %x = stablehlo.constant dense<[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)]> : tensor<4xcomplex<f32>>
  %y = stablehlo.fft %x, type = FFT, length = [4] : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  check.expect_almost_eq_const %y, dense<[(10.0, 0.0), (-2.0, 2.0), (-2.0, 0.0), (-2.0, -2.0)]> : tensor<4xcomplex<f32>>
  func.return
}

// -----

func.func @ifft_batched_c128() {
  %x = stablehlo.constant dense<[[(10.0, 0.0), (-2.0, 2.0), (-2.0, 0.0), (-2.0, -2.0)], [(4.0, 0.0), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0)]]> : tensor<2x4xcomplex<f64>>
  %y = stablehlo.fft %x, type = IFFT, length = [4] : (tensor<2x4xcomplex<f64>>) -> tensor<2x4xcomplex<f64>>
  check.expect_almost_eq_const %y, dense<[[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)], [(1.0, 0.0), (1.0, 0.0), (1.0, 0.0), (1.0, 0.0)]]> : tensor<2x4xcomplex<f64>>
  func.return
}

// -----

func.func @rfft_irfft_f32() {
  %x = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y = stablehlo.fft %x, type = RFFT, length = [4] : (tensor<4xf32>) -> tensor<3xcomplex<f32>>
  check.expect_almost_eq_const %y, dense<[(10.0, 0.0), (-2.0, 2.0), (-2.0, 0.0)]> : tensor<3xcomplex<f32>>
  %z = stablehlo.fft %y, type = IRFFT, length = [4] : (tensor<3xcomplex<f32>>) -> tensor<4xf32>
  check.expect_almost_eq_const %z, dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  func.return
}

// -----

// 2-D: [[1, 2], [3, 4]] -> [[10, -2], [-4, 0]].
func.func @fft_2d() {
  %x = stablehlo.constant dense<[[(1.0, 0.0), (2.0, 0.0)], [(3.0, 0.0), (4.0, 0.0)]]> : tensor<2x2xcomplex<f32>>
  %y = stablehlo.fft %x, type = FFT, length = [2, 2] : (tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  check.expect_almost_eq_const %y, dense<[[(10.0, 0.0), (-2.0, 0.0)], [(-4.0, 0.0), (0.0, 0.0)]]> : tensor<2x2xcomplex<f32>>
  func.return
}
