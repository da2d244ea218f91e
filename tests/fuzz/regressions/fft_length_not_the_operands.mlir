// A complex fft whose fft_length is not its operand's trailing dimension:
// the verifier checked fft_length only against the real tensor of rfft and
// irfft, and the kernel printed the length as a GLSL integer literal that
// glslang rejects ("numeric literal too big").
func.func @main(%x : tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>> {
  %r = stablehlo.fft %x, type = FFT, length = [9223372036854775807] : (tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
  func.return %r : tensor<2xcomplex<f64>>
}
