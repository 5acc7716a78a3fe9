// A typed, possibly strided view of host memory. Storage is shared and reference counted;
// views (transpose, slice, reshape of contiguous data) share it without copying.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rlx/dtype.h"

namespace rlx {

class Tensor {
 public:
  Tensor() = default;

  // Zero-filled contiguous tensor.
  static Tensor zeros(DType dtype, std::vector<int64_t> shape);
  // Uninitialized storage for the caller to fill completely (no zeroing pass over it).
  static Tensor empty(DType dtype, std::vector<int64_t> shape) { return allocate(dtype, std::move(shape), false); }
  // Contiguous copy of `nbytes` of packed row-major data; nbytes must match exactly.
  static Tensor from_bytes(DType dtype, std::vector<int64_t> shape, const void* data, size_t nbytes);
  // Zero-copy view of memory someone else owns; `owner` keeps it alive (may be null).
  static Tensor wrap(DType dtype, std::vector<int64_t> shape, void* data, std::shared_ptr<void> owner,
                     std::vector<int64_t> strides = {}, int64_t offset = 0);
  // Device memory (a CUDA tensor taken through DLPack, or an output a device left in its memory):
  // `device` names where the elements live ("cuda:0"). Host accessors refuse such a tensor —
  // data() throws rlx::Error naming the device — and device_data() is its element 0.
  static Tensor wrap_device(DType dtype, std::vector<int64_t> shape, void* data, std::string device, std::shared_ptr<void> owner,
                            std::vector<int64_t> strides = {});
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, std::vector<int64_t> shape);
  // Elements given as doubles, converted with the rules of mir.cast.
  static Tensor from_f64(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values);
  static Tensor scalar(DType dtype, double value) { return from_f64(dtype, {}, {value}); }

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int64_t>& strides() const { return strides_; }  // in elements
  int64_t offset() const { return offset_; }                        // in elements
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const;
  // Bytes of the elements packed contiguously.
  size_t nbytes() const { return dtype_bytes(dtype_, numel()); }
  bool is_contiguous() const;

  // Pointer to element 0 of the view. i4 views must start on a whole byte.
  void* data() const;
  bool on_host() const { return !storage_ || storage_->device.empty(); }
  std::string device() const { return on_host() ? "cpu" : storage_->device; }
  void* device_data() const;  // element 0 wherever it lives
  template <class T>
  T* data_as() const { return static_cast<T*>(data()); }

  Tensor contiguous() const;  // itself when already contiguous, otherwise a packed copy
  Tensor clone() const;       // always a packed copy
  Tensor reshape(std::vector<int64_t> shape) const;  // a view when contiguous; -1 infers one dim
  Tensor transpose(const std::vector<int64_t>& perm) const;  // a view
  Tensor slice(int axis, int64_t start, int64_t stop, int64_t step = 1) const;  // a view

  // Element `i` in row-major logical order, converted like mir.cast.
  double at_f64(int64_t i) const;
  std::vector<double> to_f64() const;
  template <class T>
  std::vector<T> to_vector() const;
  bool bytes_equal(const Tensor& other) const;
  std::string str(int max_elements = 8) const;  // "f32[2,3] [1, 2, 3, …]"

 private:
  // Storage of `shape`, zeroed or left for the caller to fill.
  static Tensor allocate(DType dtype, std::vector<int64_t> shape, bool zero);

  struct Storage {
    void* data = nullptr;
    size_t bytes = 0;
    std::shared_ptr<void> owner;
    std::string device;  // empty: host memory
  };
  int64_t storage_index(int64_t logical) const;
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::f32;
  std::vector<int64_t> shape_, strides_;
  int64_t offset_ = 0;
};

template <class T>
struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::i8; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::u8; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::i16; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::boolean; };

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& values, std::vector<int64_t> shape) {
  constexpr DType dt = dtype_of<T>::value;
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return from_bytes(dt, std::move(shape), bytes.data(), bytes.size());
  } else {
    return from_bytes(dt, std::move(shape), values.data(), values.size() * sizeof(T));
  }
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  Tensor c = contiguous();
  std::vector<T> out(static_cast<size_t>(numel()));
  if constexpr (std::is_same_v<T, bool>) {
    const uint8_t* p = c.data_as<uint8_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i] != 0;
  } else {
    const T* p = c.data_as<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  }
  return out;
}

}  // namespace rlx
