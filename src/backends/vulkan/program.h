// A command buffer recorded once and submitted many times — the Vulkan counterpart of a CUDA
// graph. A plan records its copies and dispatches (with barriers between dependent steps) at
// compile time; each run is one vkQueueSubmit and one fence wait. The descriptor sets the
// dispatches bind live as long as the program.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backends/vulkan/context.h"

namespace rlx::backends::vulkan {

class Program {
 public:
  explicit Program(Context& c);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Timestamps for up to `max_dispatches` dispatches: the time each took is added to the
  // process's profile under its label (printed at exit) after every run.
  void profile(size_t max_dispatches);

  // Recording (between construction and end()).
  void copy(const Region& src, const Region& dst, VkDeviceSize bytes);
  void fill(const Region& dst, uint32_t word);  // dst.bytes, a multiple of 4
  // `bindings` in binding order; each region's offset a multiple of the device's storage
  // alignment and its size within the binding limit (the caller checks, naming the value).
  void dispatch(const Pipeline& p, const std::vector<Region>& bindings, const void* push, uint32_t push_bytes, uint32_t gx, uint32_t gy = 1,
                uint32_t gz = 1, const std::string& label = "");
  // Makes every earlier write (shader or transfer) visible to every later read or write.
  void barrier();
  void end();

  // Submits the recorded commands and waits for them.
  void run();
  size_t dispatches() const { return dispatches_; }

 private:
  VkDescriptorSet allocate_set(const Pipeline& p);
  Context& c_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> descriptor_pools_;
  uint32_t sets_left_ = 0;
  size_t dispatches_ = 0;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  std::vector<std::string> labels_;
  size_t capacity_ = 0;
  bool ended_ = false;
};

}  // namespace rlx::backends::vulkan
