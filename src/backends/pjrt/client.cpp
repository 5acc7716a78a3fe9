// The PJRT C API calls (c_api.h) behind Plugin: load, create a client, compile, run.
#include "backends/pjrt/client.h"

#include <dlfcn.h>

#include "backends/pjrt/c_api.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::pjrt {

namespace {

using c_api::Slot;

// xla.CompileOptionsProto{executable_build_options{num_replicas: 1, num_partitions: 1}},
// protobuf wire format: one device, no partitioning.
const char kCompileOptions[] = {0x1a, 0x04, 0x20, 0x01, 0x28, 0x01};

c_api::BufferType buffer_type(DType d) {
  switch (d) {
    case DType::boolean: return c_api::kPred;
    case DType::i8: return c_api::kS8;
    case DType::i16: return c_api::kS16;
    case DType::i32: return c_api::kS32;
    case DType::i64: return c_api::kS64;
    case DType::u8: return c_api::kU8;
    case DType::f16: return c_api::kF16;
    case DType::f32: return c_api::kF32;
    case DType::f64: return c_api::kF64;
    case DType::bf16: return c_api::kBF16;
    case DType::c64: return c_api::kC64;
    case DType::c128: return c_api::kC128;
    default: throw Error(ErrorKind::unsupported, cat("tpu: no PJRT buffer type for ", dtype_name(d)));
  }
}

}  // namespace

template <class Args>
void Plugin::call(int slot, Args& args, const char* what) const {
  using Fn = void* (*)(Args*);
  check(reinterpret_cast<Fn>(api_->slots[slot])(&args), what);
}

void Plugin::check(void* error, const char* what) const {
  if (!error) return;
  auto* e = static_cast<c_api::Error*>(error);
  c_api::Args<c_api::ErrorMessageArgs> m;
  m.error = e;
  reinterpret_cast<void (*)(c_api::ErrorMessageArgs*)>(api_->slots[Slot::kErrorMessage])(&m);
  std::string text(m.message ? m.message : "", m.message_size);
  c_api::Args<c_api::ErrorDestroyArgs> d;
  d.error = e;
  reinterpret_cast<void (*)(c_api::ErrorDestroyArgs*)>(api_->slots[Slot::kErrorDestroy])(&d);
  throw Error(ErrorKind::unsupported, cat("tpu: PJRT ", what, " failed: ", text));
}

Plugin::Plugin(const std::string& path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw Error(ErrorKind::unsupported, cat("tpu: cannot load the PJRT plugin ", path, ": ", dlerror()));
  using GetApi = const c_api::Api* (*)();
  auto get = reinterpret_cast<GetApi>(dlsym(handle_, "GetPjrtApi"));
  if (!get) throw Error(ErrorKind::unsupported, cat("tpu: ", path, " is not a PJRT plugin (no GetPjrtApi)"));
  api_ = get();
  // PJRT_Api grows at its end only; a table shorter than the slots we call, or another major
  // version, is refused by name.
  size_t slots = api_ ? (api_->struct_size - offsetof(c_api::Api, slots)) / sizeof(void*) : 0;
  if (!api_ || api_->version.major_version != 0 || slots < Slot::kSlotsUsed)
    throw Error(ErrorKind::unsupported, cat("tpu: ", path, " speaks PJRT C API ", api_ ? api_->version.major_version : -1, ".",
                                            api_ ? api_->version.minor_version : -1, " with ", slots, " functions; RLX needs 0.x with at least ",
                                            static_cast<int>(Slot::kSlotsUsed)));
  c_api::Args<c_api::PluginInitializeArgs> init;
  call(Slot::kPluginInitialize, init, "plugin initialization");
  c_api::Args<c_api::ClientCreateArgs> create;
  call(Slot::kClientCreate, create, "client creation");
  client_ = create.client;
  c_api::Args<c_api::ClientDevicesArgs> devices;
  devices.client = client_;
  call(Slot::kClientAddressableDevices, devices, "device listing");
  if (devices.num_devices == 0) throw Error(ErrorKind::unsupported, cat("tpu: the PJRT plugin ", path, " has no addressable device"));
  device_ = devices.devices[0];
}

Plugin::~Plugin() {
  if (client_) {
    c_api::Args<c_api::ClientDestroyArgs> d;
    d.client = client_;
    try {
      call(Slot::kClientDestroy, d, "client destruction");
    } catch (const Error&) {
    }
  }
  // the plugin stays loaded: its threads may outlive the client
}

std::string Plugin::platform() const {
  c_api::Args<c_api::ClientStringArgs> a;
  a.client = client_;
  call(Slot::kClientPlatformName, a, "platform name");
  return std::string(a.value, a.value_size);
}

std::string Plugin::platform_version() const {
  c_api::Args<c_api::ClientStringArgs> a;
  a.client = client_;
  call(Slot::kClientPlatformVersion, a, "platform version");
  return std::string(a.value, a.value_size);
}

int Plugin::api_minor() const { return api_->version.minor_version; }

std::unique_ptr<Plugin::Program> Plugin::compile(const std::string& mlir) const {
  c_api::Args<c_api::Program> program;
  std::string code = mlir;
  program.code = code.data();
  program.code_size = code.size();
  program.format = "mlir";
  program.format_size = 4;
  c_api::Args<c_api::ClientCompileArgs> a;
  a.client = client_;
  a.program = &program;
  a.compile_options = kCompileOptions;
  a.compile_options_size = sizeof kCompileOptions;
  call(Slot::kClientCompile, a, "compilation of the StableHLO module");
  return std::unique_ptr<Program>(new Program(this, a.executable));
}

Plugin::Program::~Program() {
  c_api::Args<c_api::LoadedExecutableDestroyArgs> d;
  d.executable = exe_;
  try {
    plugin_->call(Slot::kLoadedExecutableDestroy, d, "executable destruction");
  } catch (const Error&) {
  }
}

void Plugin::Program::run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                          const std::vector<std::pair<DType, std::vector<int64_t>>>& out_types) {
  const Plugin& p = *plugin_;
  std::vector<c_api::Buffer*> args, results(out_types.size(), nullptr);
  auto destroy = [&](c_api::Buffer* b) {
    if (!b) return;
    c_api::Args<c_api::BufferDestroyArgs> d;
    d.buffer = b;
    try {
      p.call(Slot::kBufferDestroy, d, "buffer destruction");
    } catch (const Error&) {
    }
  };
  auto await = [&](c_api::Event* e, const char* what) {
    if (!e) return;
    c_api::Args<c_api::EventArgs> w;
    w.event = e;
    void* err = reinterpret_cast<void* (*)(c_api::EventArgs*)>(p.api_->slots[Slot::kEventAwait])(&w);
    c_api::Args<c_api::EventArgs> d;
    d.event = e;
    reinterpret_cast<void* (*)(c_api::EventArgs*)>(p.api_->slots[Slot::kEventDestroy])(&d);
    p.check(err, what);
  };
  try {
    std::vector<Tensor> keep;  // contiguous copies live until their transfers finished
    for (const Tensor& t : inputs) {
      keep.push_back(t.contiguous());
      const Tensor& c = keep.back();
      std::vector<int64_t> dims = c.shape();
      c_api::Args<c_api::BufferFromHostArgs> a;
      a.client = p.client_;
      a.data = c.data();
      a.type = buffer_type(c.dtype());
      a.dims = dims.data();
      a.num_dims = dims.size();
      a.device = p.device_;
      p.call(Slot::kClientBufferFromHostBuffer, a, "host-to-device copy");
      args.push_back(a.buffer);
      await(a.done_with_host_buffer, "host-to-device copy");
    }
    c_api::Args<c_api::ExecuteOptions> options;
    c_api::Args<c_api::ExecuteArgs> e;
    c_api::Buffer* const* arg_list = args.data();
    c_api::Buffer** out_list = results.data();
    c_api::Event* done = nullptr;
    e.executable = exe_;
    e.options = &options;
    e.argument_lists = &arg_list;
    e.num_devices = 1;
    e.num_args = args.size();
    e.output_lists = &out_list;
    e.device_complete_events = &done;
    p.call(Slot::kLoadedExecutableExecute, e, "execution");
    await(done, "execution");
    outputs.resize(out_types.size());
    for (size_t i = 0; i < out_types.size(); ++i) {
      Tensor& o = outputs[i];
      if (!o.defined() || o.dtype() != out_types[i].first || o.shape() != out_types[i].second || !o.is_contiguous())
        o = Tensor::empty(out_types[i].first, out_types[i].second);
      c_api::Args<c_api::BufferToHostArgs> a;
      a.src = results[i];
      a.dst = o.data();
      a.dst_size = o.nbytes();
      p.call(Slot::kBufferToHostBuffer, a, "device-to-host copy");
      await(a.event, "device-to-host copy");
    }
  } catch (...) {
    for (c_api::Buffer* b : args) destroy(b);
    for (c_api::Buffer* b : results) destroy(b);
    throw;
  }
  for (c_api::Buffer* b : args) destroy(b);
  for (c_api::Buffer* b : results) destroy(b);
}

}  // namespace rlx::backends::pjrt
