// The Vulkan instance and the device RLX computes on: discovery (every physical device, with its
// type, API version, subgroup size and whether it offers cooperative matrices), the choice (a
// discrete GPU before an integrated one, a virtual one, then a CPU implementation such as
// lavapipe), a compute queue, host-visible buffers and one-shot compute dispatches. Created once,
// on first use; when Vulkan cannot be used, availability() says why and nothing else works.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/loader.h"
#include "runtime/backend.h"

namespace rlx::backends::vulkan {

// What a device offers beyond Vulkan 1.2's core that kernels rely on: 64-bit integers (index
// arithmetic, the integer class), 8- and 16-bit storage (bool/i8/u8, f16/bf16/i16 tensors read
// and written in place), subgroup arithmetic (reductions).
struct Features {
  bool int64 = false, int16 = false, int8 = false;
  bool storage16 = false, storage8 = false;
  bool subgroup_arithmetic = false, subgroup_shuffle = false;
  uint32_t subgroup_size = 0;
  bool float16 = false;  // f16 arithmetic (shaderFloat16)
  // VK_NV_cooperative_matrix with f16 × f16 → f32 fragments of coop_m × coop_n × coop_k on
  // 32-wide subgroups (tensor cores, as NVIDIA's driver offers them)
  bool coopmat = false;
  uint32_t coop_m = 0, coop_n = 0, coop_k = 0;
  uint64_t max_storage_range = 0;  // bytes one storage-buffer binding may span
  uint32_t max_push_bytes = 0;
  uint32_t max_shared_bytes = 0;
  // The kernels' integer class is 32-bit int, not int64_t (a language without signed 64-bit
  // integers: glslang's HLSL): i64 tensors are word pairs whose values must fit (hlsl.h)
  bool int32_class = false;
};

struct PhysicalDevice {
  std::string name;
  Features features;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t api_version = 0;
  uint32_t subgroup_size = 0;
  bool compute_queue = false;
  bool cooperative_matrix = false;  // VK_KHR_cooperative_matrix
  uint64_t device_local_bytes = 0;
  const char* type_name() const;
};

// A buffer in host-visible, coherent memory, mapped for its lifetime.
struct HostBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  size_t bytes = 0;
};

// A range of a buffer, as a shader binds it (storage buffer at an offset).
struct Region {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0, bytes = 0;
};

// A compute pipeline and its layouts: `bindings` storage buffers in set 0, `push_bytes` of push
// constants. Owned by the context (created once per SPIR-V, kept for its lifetime).
struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t bindings = 0, push_bytes = 0;
};

class Context {
 public:
  static Context& get();
  const runtime::Availability& availability() const { return availability_; }
  const std::vector<PhysicalDevice>& devices() const { return devices_; }
  // The one computed on (an index into devices()); −1 when unavailable.
  int chosen() const { return chosen_; }

  // Throws rlx::Error(unsupported) when Vulkan is unavailable, (out_of_memory) when the
  // allocation fails.
  HostBuffer host_buffer(size_t bytes);
  void free(HostBuffer& b);
  // Runs `spirv` (a compute shader, entry point "main", storage buffers at bindings 0…n−1 of set
  // 0, `push_bytes` of push constants) as groups_x workgroups and waits for it.
  void dispatch(const std::vector<uint32_t>& spirv, const std::vector<Region>& regions, const void* push, uint32_t push_bytes, uint32_t groups_x);
  void dispatch(const std::vector<uint32_t>& spirv, const std::vector<HostBuffer*>& buffers, const void* push, uint32_t push_bytes, uint32_t groups_x);

  // Device-local memory, sub-allocated from 64 MiB blocks (a pool: plans allocate once, runs
  // never), each range aligned for storage-buffer binding. Throws rlx::Error(out_of_memory)
  // naming the size when the device has no room.
  Region device_alloc(size_t bytes);
  void device_free(const Region& r);
  size_t device_bytes_reserved() const;  // the pool's blocks, in bytes
  // Copies between host memory and a device region through a host-visible staging buffer.
  void upload(const Region& dst, const void* src, size_t bytes);
  void download(const Region& src, void* dst, size_t bytes);

  // The features of the chosen device (all false when unavailable).
  const Features& features() const;
  VkDeviceSize storage_alignment() const { return storage_alignment_; }
  double timestamp_ns() const { return timestamp_ns_; }  // nanoseconds per timestamp tick
  // The pipeline of `spirv` (compiled by the driver once, then cached).
  const Pipeline& pipeline(const std::vector<uint32_t>& spirv, uint32_t bindings, uint32_t push_bytes);

  // For Program (program.h): the raw handles, and the queue under the context's lock.
  const Api& api() const { return api_; }
  VkDevice device() const { return device_; }
  uint32_t queue_family() const { return queue_family_; }
  void submit_and_wait(VkCommandBuffer cmd, VkFence fence);
  void check(VkResult r, const char* what) const;

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

 private:
  Context();

  Api api_;
  runtime::Availability availability_;
  std::vector<PhysicalDevice> devices_;
  std::vector<VkPhysicalDevice> handles_;
  int chosen_ = -1;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkDeviceSize storage_alignment_ = 256;
  double timestamp_ns_ = 1.0;
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    std::vector<std::pair<VkDeviceSize, VkDeviceSize>> free;  // (offset, bytes), sorted, coalesced
  };
  std::vector<Block> blocks_;
  HostBuffer staging_;
  size_t reserved_locked() const;
  uint32_t memory_type(uint32_t allowed, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) const;
  // A storage buffer of `bytes` bound to fresh memory of a type with `want` (else `fallback`;
  // none: rlx::Error(unsupported) naming `kind`). A failed allocation returns its VkResult with
  // nothing left allocated; `allocated` is the size asked of the driver.
  VkResult create_buffer(VkDeviceSize bytes, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback, const char* kind, VkBuffer& buffer,
                         VkDeviceMemory& memory, VkDeviceSize& allocated);
  // Records one command buffer with `record`, submits it and waits (the one-shot path; plans will
  // record theirs once).
  void submit_once(const std::function<void(VkCommandBuffer)>& record);
  void copy(VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset, VkDeviceSize bytes);
  HostBuffer& staging(size_t bytes);  // the staging buffer, grown to at least `bytes`
  std::map<uint64_t, Pipeline> pipelines_;  // by a hash of the SPIR-V and the layout
  Features no_features_;
  mutable std::mutex mu_;  // the queue, the pool, the pipelines and one-shot objects
};

}  // namespace rlx::backends::vulkan
