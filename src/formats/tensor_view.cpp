#include "formats/tensor_view.h"

#include <cstring>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // readers have checked that this does not overflow
  return n;
}

std::string TensorView::type_name() const {
  if (type == WeightType::unsupported) {
    const char* n = ggml_type_name(ggml_type);
    return n ? n : cat("ggml type ", ggml_type);
  }
  return weight_type_name(type);
}

Tensor to_tensor(const TensorView& view) {
  auto dt = weight_type_dtype(view.type);
  if (!dt)
    throw Error(ErrorKind::unsupported,
                cat("tensor '", view.name, "' is ", view.type_name(),
                    ", which has no RLX dtype; use formats::dequantize() to get f32 values"));
  size_t elem = dtype_size(*dt);
  if (reinterpret_cast<uintptr_t>(view.data) % elem == 0)
    // The mapping is copy-on-write (see MappedFile), so a writable view is safe.
    return Tensor::wrap(*dt, view.shape, const_cast<uint8_t*>(view.data), view.owner);
  return Tensor::from_bytes(*dt, view.shape, view.data, view.nbytes);
}

TensorView view_of(const std::string& name, const Tensor& tensor) {
  Tensor c = tensor.contiguous();
  TensorView v;
  v.name = name;
  v.type = weight_type_of(c.dtype());
  v.shape = c.shape();
  v.data = static_cast<const uint8_t*>(c.data());
  v.nbytes = c.nbytes();
  v.owner = std::make_shared<Tensor>(c);
  return v;
}

TensorView owned_view(std::string name, WeightType type, std::vector<int64_t> shape, std::vector<uint8_t> bytes) {
  auto buf = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  TensorView v;
  v.name = std::move(name);
  v.type = type;
  if (auto id = weight_type_ggml_id(type)) v.ggml_type = *id;
  v.shape = std::move(shape);
  v.data = buf->data();
  v.nbytes = buf->size();
  v.owner = buf;
  return v;
}

}  // namespace rlx::formats
