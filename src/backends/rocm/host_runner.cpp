// run.cpp of an exported ROCm program: the host that runs plan.inc with HIP's module API. It is
// text here (the rlx binary links no HIP runtime); `make` in the export builds it with hipcc.
#include "backends/rocm/rocm.h"

namespace rlx::backends::rocm {

const char* host_runner_source() {
  return R"HOST(// The host of a program `rlx export --target rocm` wrote: loads the kernels' code objects,
// makes the buffers, copies the inputs in, launches every dispatch of plan.inc in order on one
// stream, checks the index-error words and writes the outputs.
//   ./run input0.bin ... -o OUT_DIR     (raw little-endian tensors, in plan order)
#include <hip/hip_runtime.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

struct RlxBuffer { const char* name; size_t bytes; };
struct RlxTensor { const char* name; size_t buffer, offset, bytes; const char* dtype; };
struct RlxDispatch {
  size_t kernel;
  std::vector<size_t> buffers;
  std::vector<unsigned> words;
  unsigned groups[3], threads[3];
  const char* node;
};
#include "plan.inc"

static void check(hipError_t e, const char* what) {
  if (e == hipSuccess) return;
  std::fprintf(stderr, "run: %s: %s\n", what, hipGetErrorString(e));
  std::exit(1);
}

static std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) { std::fprintf(stderr, "run: cannot read %s\n", path.c_str()); std::exit(1); }
  return std::string(std::istreambuf_iterator<char>(f), {});
}

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string out = ".";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
    else inputs.push_back(argv[i]);
  }
  if (inputs.size() != kInputs.size()) {
    std::fprintf(stderr, "usage: %s", argv[0]);
    for (const RlxTensor& t : kInputs) std::fprintf(stderr, " %s.bin (%s, %zu bytes)", t.name, t.dtype, t.bytes);
    std::fprintf(stderr, " -o OUT_DIR\n");
    return 2;
  }
  int devices = 0;
  if (hipGetDeviceCount(&devices) != hipSuccess || devices == 0) { std::fprintf(stderr, "run: no HIP device\n"); return 1; }
  std::vector<char*> buf(kBuffers.size());
  for (size_t b = 0; b < kBuffers.size(); ++b) {
    check(hipMalloc(reinterpret_cast<void**>(&buf[b]), kBuffers[b].bytes), kBuffers[b].name);
    check(hipMemset(buf[b], 0, kBuffers[b].bytes), kBuffers[b].name);
  }
  const std::string weights = read_file("weights.bin");
  if (weights.size() > kBuffers[kWeights].bytes) { std::fprintf(stderr, "run: weights.bin is larger than the plan's weights\n"); return 1; }
  check(hipMemcpy(buf[kWeights], weights.data(), weights.size(), hipMemcpyHostToDevice), "weights");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string x = read_file(inputs[i]);
    if (x.size() != kInputs[i].bytes) {
      std::fprintf(stderr, "run: %s has %zu bytes; input %s is %s of %zu bytes\n", inputs[i].c_str(), x.size(), kInputs[i].name, kInputs[i].dtype, kInputs[i].bytes);
      return 2;
    }
    check(hipMemcpy(buf[kInputs[i].buffer] + kInputs[i].offset, x.data(), x.size(), hipMemcpyHostToDevice), kInputs[i].name);
  }
  std::vector<hipFunction_t> fn(kKernels.size());
  for (size_t k = 0; k < kKernels.size(); ++k) {
    hipModule_t m;
    check(hipModuleLoad(&m, kKernels[k].c_str()), kKernels[k].c_str());
    check(hipModuleGetFunction(&fn[k], m, "rlx_kernel"), kKernels[k].c_str());
  }
  hipEvent_t start, stop;
  check(hipEventCreate(&start), "event");
  check(hipEventCreate(&stop), "event");
  check(hipEventRecord(start, nullptr), "event");
  for (const RlxDispatch& d : kDispatches) {
    // the kernel's arguments as one block: the buffers' pointers, then the words' struct
    std::vector<char> args(d.buffers.size() * sizeof(void*) + 4 * (d.words.empty() ? 1 : d.words.size()), 0);
    for (size_t b = 0; b < d.buffers.size(); ++b) std::memcpy(args.data() + b * sizeof(void*), &buf[d.buffers[b]], sizeof(void*));
    if (!d.words.empty()) std::memcpy(args.data() + d.buffers.size() * sizeof(void*), d.words.data(), 4 * d.words.size());
    size_t size = args.size();
    void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, args.data(), HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
    check(hipModuleLaunchKernel(fn[d.kernel], d.groups[0], d.groups[1], d.groups[2], d.threads[0], d.threads[1], d.threads[2], 0, nullptr, nullptr, config), d.node);
  }
  check(hipEventRecord(stop, nullptr), "event");
  check(hipEventSynchronize(stop), "the dispatches");
  float ms = 0;
  check(hipEventElapsedTime(&ms, start, stop), "event");
  unsigned error[16];
  check(hipMemcpy(error, buf[kError], sizeof error, hipMemcpyDeviceToHost), "error words");
  if (error[0] != 0) {
    const long long v = static_cast<long long>((static_cast<unsigned long long>(error[3]) << 32) | error[2]);
    const long long n = static_cast<long long>((static_cast<unsigned long long>(error[5]) << 32) | error[4]);
    std::fprintf(stderr, "run: step %u: index %lld is out of range for a dimension of %lld\n", error[1], v, n);
    return 3;
  }
  for (const RlxTensor& t : kOutputs) {
    std::string host(t.bytes, '\0');
    check(hipMemcpy(&host[0], buf[t.buffer] + t.offset, t.bytes, hipMemcpyDeviceToHost), t.name);
    std::string name = t.name;
    for (char& c : name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
    const std::string path = out + "/" + name + ".bin";
    std::ofstream(path, std::ios::binary).write(host.data(), static_cast<std::streamsize>(host.size()));
    std::printf("%s: %s, %zu bytes\n", path.c_str(), t.dtype, t.bytes);
  }
  std::printf("%zu dispatches in %.3f ms\n", kDispatches.size(), ms);
  return 0;
}
)HOST";
}

}  // namespace rlx::backends::rocm
