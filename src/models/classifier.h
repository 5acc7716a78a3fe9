// Image classifiers for training: an MLP and a small CNN, as HIR graphs with their loss.
// Inputs: [params…, images f32[B, 1, 28, 28] (or [B, 784]), labels i64[B]];
// outputs: [mean softmax cross-entropy, number of correct predictions (f32), logits].
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "ir/graph.h"
#include "ops/weight_grid.h"
#include "train/trainer.h"

namespace rlx::models {

struct ClassifierSpec {
  std::string kind = "mlp";           // mlp | cnn
  std::vector<int64_t> hidden = {128};  // mlp hidden widths; cnn conv channels
  int64_t height = 28, width = 28, channels = 1, classes = 10;
  // quantization-aware training: every layer's weight is used through fake_quant on this grid
  std::optional<ops::WeightGrid> qat;
  // ... and every activation a layer reads (the images, each hidden layer's output after its
  // ReLU) through fake_quant on a learned int8 grid: real = (q − z)·s, q in [−128, 127], with
  // s = exp(<name>.act_log_scale) and z = <name>.act_zero_point trained with LSQ's gradients —
  // the grids static int8 PTQ would otherwise calibrate (quant/qat.h). The logits stay float in
  // training (clamping them caps the loss); their grid is calibrated when exported, as PTQ
  // gives a model's output its whole range anyway.
  bool qat_activations = false;
};

struct Classifier {
  ir::Graph forward;
  std::vector<train::NamedTensor> params;  // initial values, in input order
  // With qat_activations: the grids' names, in the order PTQ observes the values ("images",
  // then each hidden layer's name); their parameters come after every weight and bias.
  std::vector<std::string> activation_grids;
};

// Throws rlx::Error naming the bad field.
Classifier build_classifier(const ClassifierSpec& spec, uint64_t seed);
// The flattened or image shape the model's image input expects, with batch B.
std::vector<int64_t> classifier_input_shape(const ClassifierSpec& spec, int64_t batch);

}  // namespace rlx::models
