// An image-classification dataset in MNIST form (IDX images + labels), resident in memory as
// f32 in [0, 1], with seeded shuffling and batching into reusable tensors.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rlx/tensor.h"

namespace rlx::train {

struct ImageDataset {
  Tensor images;  // f32[N, H·W] (pixels / 255)
  Tensor labels;  // i64[N]
  int64_t count = 0, height = 0, width = 0;
};

// Reads DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]. Throws rlx::Error naming the
// missing or malformed file.
ImageDataset load_mnist_split(const std::string& dir, const std::string& split);  // "train" | "t10k"

// Iterates a dataset in (optionally shuffled) batches; the last batch may be smaller.
class BatchIterator {
 public:
  BatchIterator(const ImageDataset& d, int64_t batch, bool shuffle, uint64_t seed);
  // Fills images [b, H·W] and labels [b]; returns false after the last batch of the epoch.
  bool next(Tensor& images, Tensor& labels);
  void new_epoch();
  int64_t batches_per_epoch() const;

 private:
  const ImageDataset& d_;
  int64_t batch_, pos_ = 0;
  bool shuffle_;
  std::mt19937_64 rng_;
  std::vector<int64_t> order_;
};

// A synthetic resident dataset (random pixels and labels) for benchmarks.
ImageDataset synthetic_dataset(int64_t count, int64_t height, int64_t width, int64_t classes, uint64_t seed);

}  // namespace rlx::train
