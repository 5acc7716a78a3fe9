#include "train/image_dataset.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>

#include "formats/idx.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::train {

namespace {

std::string find_file(const std::string& dir, const std::string& stem) {
  for (const char* ext : {"", ".gz"}) {
    std::filesystem::path p = std::filesystem::path(dir) / (stem + ext);
    if (std::filesystem::exists(p)) return p.string();
  }
  throw Error(ErrorKind::io, cat("no ", stem, "[.gz] in ", dir, " (an MNIST-format directory; Debian's dataset-fashion-mnist installs one in /usr/share/datasets/fashion-mnist)"));
}

}  // namespace

ImageDataset load_mnist_split(const std::string& dir, const std::string& split) {
  std::string ipath = find_file(dir, split + "-images-idx3-ubyte"), lpath = find_file(dir, split + "-labels-idx1-ubyte");
  Tensor img = formats::read_idx(ipath), lab = formats::read_idx(lpath);
  if (img.dtype() != DType::u8 || img.rank() != 3) throw Error(ErrorKind::format, cat(ipath, ": expected u8 images [N, H, W]"));
  if (lab.dtype() != DType::u8 || lab.rank() != 1) throw Error(ErrorKind::format, cat(lpath, ": expected u8 labels [N]"));
  if (lab.shape()[0] != img.shape()[0])
    throw Error(ErrorKind::format, cat(lpath, ": ", lab.shape()[0], " labels for ", img.shape()[0], " images in ", ipath));
  ImageDataset d;
  d.count = img.shape()[0];
  d.height = img.shape()[1];
  d.width = img.shape()[2];
  int64_t px = d.height * d.width;
  d.images = Tensor::zeros(DType::f32, {d.count, px});
  const uint8_t* src = img.data_as<uint8_t>();
  float* dst = d.images.data_as<float>();
  for (int64_t i = 0; i < d.count * px; ++i) dst[i] = static_cast<float>(src[i]) / 255.0f;
  d.labels = Tensor::zeros(DType::i64, {d.count});
  for (int64_t i = 0; i < d.count; ++i) d.labels.data_as<int64_t>()[i] = lab.data_as<uint8_t>()[i];
  return d;
}

BatchIterator::BatchIterator(const ImageDataset& d, int64_t batch, bool shuffle, uint64_t seed)
    : d_(d), batch_(batch), shuffle_(shuffle), rng_(seed), order_(static_cast<size_t>(d.count)) {
  if (batch <= 0) throw Error(ErrorKind::invalid_argument, cat("batch size must be positive, got ", batch));
  std::iota(order_.begin(), order_.end(), 0);
  new_epoch();
}

void BatchIterator::new_epoch() {
  pos_ = 0;
  if (shuffle_) std::shuffle(order_.begin(), order_.end(), rng_);
}

int64_t BatchIterator::batches_per_epoch() const { return (d_.count + batch_ - 1) / batch_; }

bool BatchIterator::next(Tensor& images, Tensor& labels) {
  if (pos_ >= d_.count) return false;
  int64_t b = std::min(batch_, d_.count - pos_);
  int64_t px = d_.images.shape()[1];
  if (!images.defined() || images.shape()[0] != b) {
    images = Tensor::zeros(DType::f32, {b, px});
    labels = Tensor::zeros(DType::i64, {b});
  }
  const float* src = d_.images.data_as<float>();
  const int64_t* lab = d_.labels.data_as<int64_t>();
  for (int64_t i = 0; i < b; ++i) {
    int64_t r = order_[static_cast<size_t>(pos_ + i)];
    std::memcpy(images.data_as<float>() + i * px, src + r * px, static_cast<size_t>(px) * sizeof(float));
    labels.data_as<int64_t>()[i] = lab[r];
  }
  pos_ += b;
  return true;
}

ImageDataset synthetic_dataset(int64_t count, int64_t height, int64_t width, int64_t classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  ImageDataset d;
  d.count = count;
  d.height = height;
  d.width = width;
  d.images = Tensor::zeros(DType::f32, {count, height * width});
  for (int64_t i = 0; i < count * height * width; ++i) d.images.data_as<float>()[i] = u(rng);
  d.labels = Tensor::zeros(DType::i64, {count});
  for (int64_t i = 0; i < count; ++i) d.labels.data_as<int64_t>()[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(classes));
  return d;
}

}  // namespace rlx::train
