#include "tensors.h"

#include <dlpack/dlpack.h>

#include "rlx/error.h"
#include "util/half.h"
#include "util/strings.h"

namespace rlx::python {

namespace {

// Keeps a Python object alive for as long as a tensor views its memory; the last owner may go
// away on a thread without the GIL (a compute thread), so releasing takes it.
std::shared_ptr<void> keep_alive(py::object o) {
  return std::shared_ptr<void>(new py::object(std::move(o)), [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
}

std::optional<DType> dtype_of_numpy(const py::dtype& d) {
  char k = d.kind();
  auto n = d.itemsize();
  if (k == 'f') return n == 2 ? DType::f16 : n == 4 ? DType::f32 : n == 8 ? std::optional(DType::f64) : std::nullopt;
  if (k == 'i') return n == 1 ? DType::i8 : n == 2 ? DType::i16 : n == 4 ? DType::i32 : n == 8 ? std::optional(DType::i64) : std::nullopt;
  if (k == 'u' && n == 1) return DType::u8;
  if (k == 'b' && n == 1) return DType::boolean;
  if (k == 'c' && n == 8) return DType::c64;
  if (k == 'c' && n == 16) return DType::c128;
  return std::nullopt;
}

// NumPy's name for an RLX dtype; empty where NumPy has none.
const char* numpy_name(DType d) {
  switch (d) {
    case DType::f16: return "float16";
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::i8: return "int8";
    case DType::u8: return "uint8";
    case DType::i16: return "int16";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
    case DType::boolean: return "bool";
    case DType::c64: return "complex64";
    case DType::c128: return "complex128";
    default: return "";
  }
}

Tensor from_numpy(py::array a, const std::string& what) {
  std::optional<DType> d = dtype_of_numpy(a.dtype());
  if (!d) throw Error(ErrorKind::invalid_argument, cat(what, ": NumPy dtype ", std::string(py::str(a.dtype())), " has no RLX dtype"));
  if (!(a.flags() & py::array::c_style)) a = py::array::ensure(a, py::array::c_style);  // a packed copy
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  void* data = a.mutable_data();
  return Tensor::wrap(*d, shape, data, keep_alive(a));
}

DLDataType dl_dtype(DType d) {
  switch (d) {
    case DType::f16: return {kDLFloat, 16, 1};
    case DType::bf16: return {kDLBfloat, 16, 1};
    case DType::f32: return {kDLFloat, 32, 1};
    case DType::f64: return {kDLFloat, 64, 1};
    case DType::c64: return {kDLComplex, 64, 1};
    case DType::c128: return {kDLComplex, 128, 1};
    case DType::i8: return {kDLInt, 8, 1};
    case DType::i16: return {kDLInt, 16, 1};
    case DType::i32: return {kDLInt, 32, 1};
    case DType::i64: return {kDLInt, 64, 1};
    case DType::u8:
    case DType::boolean: return {kDLUInt, 8, 1};  // DLPack 0.6 has no bool type
    default: throw Error(ErrorKind::unsupported, cat("DLPack has no type for ", dtype_name(d)));
  }
}

DType rlx_dtype(DLDataType t, const std::string& what) {
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 16) return DType::f16;
    if (t.code == kDLFloat && t.bits == 32) return DType::f32;
    if (t.code == kDLFloat && t.bits == 64) return DType::f64;
    if (t.code == kDLBfloat && t.bits == 16) return DType::bf16;
    if (t.code == kDLComplex && t.bits == 64) return DType::c64;
    if (t.code == kDLComplex && t.bits == 128) return DType::c128;
    if (t.code == kDLInt && t.bits == 8) return DType::i8;
    if (t.code == kDLInt && t.bits == 16) return DType::i16;
    if (t.code == kDLInt && t.bits == 32) return DType::i32;
    if (t.code == kDLInt && t.bits == 64) return DType::i64;
    if (t.code == kDLUInt && t.bits == 8) return DType::u8;
    if (t.code == 6 && t.bits == 8) return DType::boolean;  // kDLBool (DLPack 0.8)
  }
  throw Error(ErrorKind::invalid_argument, cat(what, ": DLPack type code ", int(t.code), ", ", int(t.bits), " bits, ", t.lanes, " lanes has no RLX dtype"));
}

struct DlContext {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
};

}  // namespace

// Where a tensor's memory is, as DLPack names it: the CPU, or CUDA device N ("cuda:N").
DLDevice dl_device(const Tensor& t) {
  if (t.on_host()) return {kDLCPU, 0};
  std::string d = t.device();
  if (d.rfind("cuda:", 0) != 0) throw Error(ErrorKind::unsupported, cat("DLPack: no device type for '", d, "'"));
  return {kDLCUDA, std::stoi(d.substr(5))};
}

py::capsule to_dlpack(const Tensor& t) {
  auto* ctx = new DlContext{t, t.shape(), t.strides()};
  auto* m = new DLManagedTensor{};
  m->dl_tensor.data = t.numel() ? t.device_data() : nullptr;
  m->dl_tensor.device = dl_device(t);
  m->dl_tensor.ndim = static_cast<int32_t>(t.shape().size());
  m->dl_tensor.dtype = dl_dtype(t.dtype());
  m->dl_tensor.shape = ctx->shape.data();
  m->dl_tensor.strides = ctx->strides.empty() ? nullptr : ctx->strides.data();
  m->dl_tensor.byte_offset = 0;
  m->manager_ctx = ctx;
  m->deleter = [](DLManagedTensor* self) {
    delete static_cast<DlContext*>(self->manager_ctx);
    delete self;
  };
  // An unconsumed capsule frees the tensor itself; a consumer renames it and calls the deleter.
  PyObject* cap = PyCapsule_New(m, "dltensor", [](PyObject* c) {
    if (PyCapsule_IsValid(c, "dltensor")) {
      auto* mt = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
      mt->deleter(mt);
    }
  });
  if (!cap) {
    m->deleter(m);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

Tensor from_dlpack(const py::handle& obj) {
  py::object cap = py::hasattr(obj, "__dlpack__") ? obj.attr("__dlpack__")() : py::reinterpret_borrow<py::object>(obj);
  if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
    throw Error(ErrorKind::invalid_argument, "from_dlpack expects an object with __dlpack__ or an unused DLPack capsule");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  const DLTensor& d = m->dl_tensor;
  bool cuda = d.device.device_type == kDLCUDA;
  if (d.device.device_type != kDLCPU && d.device.device_type != kDLCUDAHost && !cuda) {
    throw Error(ErrorKind::unsupported, cat("DLPack device type ", int(d.device.device_type),
                                            ": rlx takes host memory and CUDA memory through DLPack"));
  }
  DType dtype = rlx_dtype(d.dtype, "DLPack tensor");
  PyCapsule_SetName(cap.ptr(), "used_dltensor");  // consumed: the deleter is ours to call
  std::shared_ptr<void> owner(m, [](void* p) {
    auto* mt = static_cast<DLManagedTensor*>(p);
    if (mt->deleter) mt->deleter(mt);
  });
  std::vector<int64_t> shape(d.shape, d.shape + d.ndim), strides;
  if (d.strides) strides.assign(d.strides, d.strides + d.ndim);
  void* data = static_cast<uint8_t*>(d.data) + d.byte_offset;
  if (cuda) return Tensor::wrap_device(dtype, shape, data, cat("cuda:", d.device.device_id), owner, strides);  // the same memory: no copy
  return Tensor::wrap(dtype, shape, data, owner, strides);
}

Tensor to_tensor(const py::handle& obj, const std::string& what) {
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  if (py::isinstance<py::array>(obj)) return from_numpy(py::reinterpret_borrow<py::array>(obj), what);
  if (py::hasattr(obj, "__dlpack__")) return from_dlpack(obj);
  try {
    return from_numpy(py::array::ensure(obj), what);
  } catch (const py::error_already_set&) {
  }
  throw Error(ErrorKind::invalid_argument, cat(what, ": expected a NumPy array, an rlx.Tensor or an object with __dlpack__, got ",
                                               std::string(py::str(py::type::handle_of(obj)))));
}

py::object from_tensor(const Tensor& t) {
  const char* np = numpy_name(t.dtype());
  if (!*np || !t.on_host()) return py::cast(t);  // bf16, i4 and device memory: an rlx.Tensor
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides;
  size_t es = dtype_size(t.dtype());
  for (int64_t s : t.strides()) strides.push_back(static_cast<py::ssize_t>(s * static_cast<int64_t>(es)));
  auto* keep = new Tensor(t);
  py::capsule base(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(py::dtype(np), shape, strides, t.numel() ? t.data() : nullptr, base);
}

void bind_tensors(py::module_& m) {
  py::class_<Tensor>(m, "Tensor", "An RLX tensor: what run() returns where NumPy has no dtype (bf16) or the memory is a GPU's; converts with numpy() (host memory) or DLPack")
      .def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", [](const Tensor& t) { return std::string(dtype_name(t.dtype())); })
      .def("numpy", [](const Tensor& t) {
            if (!t.on_host())
              throw Error(ErrorKind::invalid_argument, cat("this tensor is in ", t.device(), " memory: take it with torch.from_dlpack (or another "
                                                           "library's), or run the model on host inputs"));
            if (t.dtype() != DType::bf16) return from_tensor(t);
            Tensor c = t.contiguous();  // bf16 → float32, exactly
            py::array_t<float> out(std::vector<py::ssize_t>(c.shape().begin(), c.shape().end()));
            const auto* src = c.data_as<uint16_t>();
            float* dst = out.mutable_data();
            for (int64_t i = 0; i < c.numel(); ++i) dst[i] = bf16_to_f32(src[i]);
            return py::object(out);
          }, "A NumPy array: a view, or (bf16) a float32 copy")
      .def("__dlpack__", [](const Tensor& t, py::object) { return to_dlpack(t); }, py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const Tensor& t) {
            DLDevice d = dl_device(t);
            return py::make_tuple(static_cast<int>(d.device_type), d.device_id);
          })
      .def_property_readonly("device", &Tensor::device, "Where the elements are: \"cpu\", or \"cuda:0\" (a CUDA tensor in or out of a cuda model)")
      .def_property_readonly("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.device_data()); },
                             "The address of element 0 (host or device memory), as torch's data_ptr()")
      .def("__repr__", [](const Tensor& t) { return cat("rlx.Tensor(", t.str(8), ")"); });
  m.def("from_dlpack", [](py::object o) { return from_tensor(from_dlpack(o)); },
        "A view of another library's tensor (anything with __dlpack__, CPU or CUDA memory): a NumPy array, or an rlx.Tensor (bf16, CUDA)");
  m.def("tensor", [](py::object o) { return to_tensor(o, "rlx.tensor"); }, "An rlx.Tensor viewing (or holding) the value");
}

}  // namespace rlx::python
