// A two-layer perceptron with softmax, the example `./dev.sh example` runs.
// Input: a 2x4 f32 batch. Output: 2x3 class probabilities (rows sum to 1).
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w1 = stablehlo.constant dense<[[0.5, -0.25, 0.125, 1.0, 0.0],
                                  [0.25, 0.5, -0.5, 0.0, 1.0],
                                  [-0.125, 0.25, 0.75, 0.5, -1.0],
                                  [1.0, -1.0, 0.25, 0.0, 0.5]]> : tensor<4x5xf32>
  %b1 = stablehlo.constant dense<[0.1, -0.1, 0.0, 0.2, 0.05]> : tensor<5xf32>
  %w2 = stablehlo.constant dense<[[1.0, 0.0, -1.0], [0.5, 0.5, 0.5], [-0.5, 1.0, 0.0],
                                  [0.25, -0.25, 1.0], [0.0, 0.75, -0.5]]> : tensor<5x3xf32>
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  %bb = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<5xf32>) -> tensor<2x5xf32>
  %hb = stablehlo.add %h, %bb : tensor<2x5xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<2x5xf32>
  %relu = stablehlo.maximum %hb, %zero : tensor<2x5xf32>
  %logits = stablehlo.dot_general %relu, %w2, contracting_dims = [1] x [0] : (tensor<2x5xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %max = stablehlo.reduce(%logits init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %maxb = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<2xf32>) -> tensor<2x3xf32>
  %shift = stablehlo.subtract %logits, %maxb : tensor<2x3xf32>
  %e = stablehlo.exponential %shift : tensor<2x3xf32>
  %zs = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %zs) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %sumb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<2xf32>) -> tensor<2x3xf32>
  %p = stablehlo.divide %e, %sumb : tensor<2x3xf32>
  return %p : tensor<2x3xf32>
}
