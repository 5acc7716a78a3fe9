#include "rlx/tensor.h"

#include <cstdlib>
#include <cstring>

#include "rlx/error.h"
#include "util/host_memory.h"
#include "util/scalar.h"
#include "util/strings.h"
#include "util/strides.h"
#include "util/tensor_span.h"

namespace rlx {

namespace {

// The element count, once the shape's strides are known to fit (util/tensor_span.h).
int64_t checked_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  uint64_t span = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(ErrorKind::invalid_argument, cat("tensor dim ", d, " is negative"));
    if (!extend_span(span, static_cast<uint64_t>(d))) throw Error(ErrorKind::invalid_argument, "tensor element count (or stride) overflows int64");
    n *= d;
  }
  return n;
}

}  // namespace

Tensor Tensor::zeros(DType dtype, std::vector<int64_t> shape) { return allocate(dtype, std::move(shape), true); }

Tensor Tensor::allocate(DType dtype, std::vector<int64_t> shape, bool zero) {
  int64_t n = checked_numel(shape);
  Tensor t;
  t.dtype_ = dtype;
  t.strides_ = contiguous_strides(shape);
  t.shape_ = std::move(shape);
  t.storage_ = std::make_shared<Storage>();
  t.storage_->bytes = dtype_bytes(dtype, n);
  t.storage_->owner = host_alloc(t.storage_->bytes, zero, "a tensor");
  t.storage_->data = t.storage_->owner.get();
  return t;
}

Tensor Tensor::from_bytes(DType dtype, std::vector<int64_t> shape, const void* data, size_t nbytes) {
  int64_t n = checked_numel(shape);
  if (dtype_bytes(dtype, n) != nbytes)
    throw Error(ErrorKind::invalid_argument,
                cat("tensor ", dtype_name(dtype), " with ", n, " elements needs ", dtype_bytes(dtype, n), " bytes, got ", nbytes));
  Tensor t = allocate(dtype, std::move(shape), false);  // every byte is written next
  if (nbytes) std::memcpy(t.storage_->data, data, nbytes);
  return t;
}

Tensor Tensor::wrap(DType dtype, std::vector<int64_t> shape, void* data, std::shared_ptr<void> owner,
                    std::vector<int64_t> strides, int64_t offset) {
  checked_numel(shape);
  if (strides.empty()) strides = contiguous_strides(shape);
  if (strides.size() != shape.size())
    throw Error(ErrorKind::invalid_argument, cat("tensor has ", shape.size(), " dims but ", strides.size(), " strides"));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.offset_ = offset;
  t.storage_ = std::make_shared<Storage>();
  t.storage_->data = data;
  t.storage_->owner = std::move(owner);
  return t;
}

Tensor Tensor::from_f64(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  Tensor t = zeros(dtype, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw Error(ErrorKind::invalid_argument, cat("tensor of ", t.numel(), " elements given ", values.size(), " values"));
  for (size_t i = 0; i < values.size(); ++i) store_f64(t.data(), dtype, static_cast<int64_t>(i), values[i]);
  return t;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

bool Tensor::is_contiguous() const {
  int64_t s = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] != 1 && strides_[i] != s) return false;
    s *= shape_[i];
  }
  return true;
}

Tensor Tensor::wrap_device(DType dtype, std::vector<int64_t> shape, void* data, std::string device, std::shared_ptr<void> owner,
                           std::vector<int64_t> strides) {
  if (device.empty() || device == "cpu") throw Error(ErrorKind::invalid_argument, "wrap_device: name the device the memory is on (\"cuda:0\")");
  Tensor t = wrap(dtype, std::move(shape), data, std::move(owner), std::move(strides));
  t.storage_->device = std::move(device);
  return t;
}

void* Tensor::device_data() const {
  if (!storage_) return nullptr;
  if (dtype_ == DType::i4) return static_cast<uint8_t*>(storage_->data) + offset_ / 2;
  return static_cast<uint8_t*>(storage_->data) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

void* Tensor::data() const {
  if (!storage_) return nullptr;
  if (!storage_->device.empty())
    throw Error(ErrorKind::invalid_argument, cat("a ", dtype_name(dtype_), " tensor in ", storage_->device,
                                                 " memory was used where host memory is needed (copy it to the host first)"));
  if (dtype_ == DType::i4) {
    if (offset_ % 2) throw Error(ErrorKind::invalid_argument, "an i4 view must start on a whole byte");
    return static_cast<uint8_t*>(storage_->data) + offset_ / 2;
  }
  return static_cast<uint8_t*>(storage_->data) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

int64_t Tensor::storage_index(int64_t logical) const {
  int64_t idx = 0;
  for (size_t d = shape_.size(); d-- > 0;) {
    int64_t c = logical % shape_[d];
    logical /= shape_[d];
    idx += c * strides_[d];
  }
  return idx;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor out = zeros(dtype_, shape_);
  int64_t n = numel();
  if (is_contiguous()) {
    std::memcpy(out.data(), data(), nbytes());
    return out;
  }
  if (dtype_ == DType::i4) {
    for (int64_t i = 0; i < n; ++i) store_i64(out.data(), dtype_, i, load_i64(data(), dtype_, storage_index(i)));
    return out;
  }
  size_t es = dtype_size(dtype_);
  const uint8_t* src = static_cast<const uint8_t*>(data());
  uint8_t* dst = static_cast<uint8_t*>(out.data());
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * es, src + storage_index(i) * static_cast<int64_t>(es), es);
  return out;
}

Tensor Tensor::reshape(std::vector<int64_t> shape) const {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw Error(ErrorKind::invalid_argument, "reshape: more than one -1 dim");
      infer = static_cast<int64_t>(i);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) shape[infer] = known ? numel() / known : 0;
  if (checked_numel(shape) != numel())
    throw Error(ErrorKind::invalid_argument, cat("reshape: cannot view ", numel(), " elements as ", shape.size(), "-d shape of ",
                                                 checked_numel(shape), " elements"));
  Tensor c = contiguous();
  c.shape_ = shape;
  c.strides_ = contiguous_strides(shape);
  return c;
}

Tensor Tensor::transpose(const std::vector<int64_t>& perm) const {
  if (perm.size() != shape_.size()) throw Error(ErrorKind::invalid_argument, "transpose: permutation length must equal rank");
  if (dtype_ == DType::i4) throw Error(ErrorKind::invalid_argument, "i4 tensors are storage only and cannot be transposed as views");
  Tensor t = *this;
  std::vector<bool> seen(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = perm[i];
    if (p < 0 || p >= rank() || seen[p]) throw Error(ErrorKind::invalid_argument, "transpose: not a permutation");
    seen[p] = true;
    t.shape_[i] = shape_[p];
    t.strides_[i] = strides_[p];
  }
  return t;
}

Tensor Tensor::slice(int axis, int64_t start, int64_t stop, int64_t step) const {
  if (axis < 0) axis += rank();
  if (axis < 0 || axis >= rank()) throw Error(ErrorKind::invalid_argument, "slice: axis out of range");
  if (step <= 0 || start < 0 || stop > shape_[axis] || start > stop)
    throw Error(ErrorKind::invalid_argument, cat("slice [", start, ":", stop, ":", step, "] out of range for dim ", shape_[axis]));
  Tensor t = *this;
  t.offset_ += start * strides_[axis];
  t.shape_[axis] = (stop - start + step - 1) / step;
  t.strides_[axis] *= step;
  return t;
}

double Tensor::at_f64(int64_t i) const {
  if (!on_host()) data();  // throws: device memory is not readable here
  return load_f64(storage_->data, dtype_, offset_ + storage_index(i));
}

std::vector<double> Tensor::to_f64() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = at_f64(static_cast<int64_t>(i));
  return out;
}

bool Tensor::bytes_equal(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  // the same view of the same storage (the common case when attributes are copied)
  if (storage_ == other.storage_ && offset_ == other.offset_ && strides_ == other.strides_) return true;
  Tensor a = contiguous(), b = other.contiguous();
  return std::memcmp(a.data(), b.data(), nbytes()) == 0;
}

std::string Tensor::str(int max_elements) const {
  std::string out = dtype_name(dtype_);
  out += "[";
  for (size_t i = 0; i < shape_.size(); ++i) out += (i ? "," : "") + std::to_string(shape_[i]);
  if (!on_host()) return out + "] (" + storage_->device + " memory)";
  out += "] [";
  int64_t n = numel();
  for (int64_t i = 0; i < n && i < max_elements; ++i) out += (i ? ", " : "") + format_double(at_f64(i));
  if (n > max_elements) out += ", …";
  return out + "]";
}

}  // namespace rlx
