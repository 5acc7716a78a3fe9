#include "backends/vulkan/program.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {
constexpr uint32_t kSetsPerPool = 256;
constexpr uint32_t kBindingsPerSet = 16;  // the most storage buffers one kernel binds
}  // namespace

Program::Program(Context& c) : c_(c) {
  if (!c.availability().available) throw Error(ErrorKind::unsupported, cat("vulkan is not available: ", c.availability().reason));
  const Api& api = c.api();
  VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpci.queueFamilyIndex = c.queue_family();
  c.check(api.CreateCommandPool(c.device(), &cpci, nullptr, &pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cba{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cba.commandPool = pool_;
  cba.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cba.commandBufferCount = 1;
  c.check(api.AllocateCommandBuffers(c.device(), &cba, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  c.check(api.CreateFence(c.device(), &fci, nullptr, &fence_), "vkCreateFence");
  VkCommandBufferBeginInfo cbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  c.check(api.BeginCommandBuffer(cmd_, &cbi), "vkBeginCommandBuffer");
}

namespace {

// Every profiled dispatch's time by label, printed when the process exits.
struct Profile {
  std::mutex mu;
  std::map<std::string, std::pair<double, int64_t>> ns;  // label → (total ns, count)
  ~Profile() {
    if (ns.empty()) return;
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (const auto& [label, v] : ns) rows.push_back({v.first, label}), total += v.first;
    std::sort(rows.rbegin(), rows.rend());
    std::fprintf(stderr, "vulkan profile (RLX_VULKAN_PROFILE): %.3f ms in dispatches\n%10s %6s %10s  %s\n", total / 1e6, "ms", "%", "count", "kernel");
    for (const auto& [t, label] : rows)
      std::fprintf(stderr, "%10.3f %6.1f %10lld  %s\n", t / 1e6, 100 * t / total, static_cast<long long>(ns[label].second), label.c_str());
  }
};
Profile& profile_table() {
  static Profile p;
  return p;
}

}  // namespace

void Program::profile(size_t max_dispatches) {
  capacity_ = max_dispatches;
  const Api& api = c_.api();
  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = static_cast<uint32_t>(max_dispatches + 1);
  c_.check(api.CreateQueryPool(c_.device(), &qi, nullptr, &queries_), "vkCreateQueryPool");
  api.CmdResetQueryPool(cmd_, queries_, 0, qi.queryCount);
  api.CmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 0);
}

Program::~Program() {
  const Api& api = c_.api();
  if (queries_) api.DestroyQueryPool(c_.device(), queries_, nullptr);
  for (VkDescriptorPool p : descriptor_pools_) api.DestroyDescriptorPool(c_.device(), p, nullptr);
  if (fence_) api.DestroyFence(c_.device(), fence_, nullptr);
  if (pool_) api.DestroyCommandPool(c_.device(), pool_, nullptr);
}

VkDescriptorSet Program::allocate_set(const Pipeline& p) {
  const Api& api = c_.api();
  if (p.bindings > kBindingsPerSet) throw Error(ErrorKind::internal, cat("vulkan: a kernel binds ", p.bindings, " buffers (at most ", kBindingsPerSet, ")"));
  if (sets_left_ == 0) {
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kBindingsPerSet};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = kSetsPerPool;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    VkDescriptorPool pool;
    c_.check(api.CreateDescriptorPool(c_.device(), &dpi, nullptr, &pool), "vkCreateDescriptorPool");
    descriptor_pools_.push_back(pool);
    sets_left_ = kSetsPerPool;
  }
  VkDescriptorSet set;
  VkDescriptorSetAllocateInfo dsa{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dsa.descriptorPool = descriptor_pools_.back();
  dsa.descriptorSetCount = 1;
  dsa.pSetLayouts = &p.set_layout;
  c_.check(api.AllocateDescriptorSets(c_.device(), &dsa, &set), "vkAllocateDescriptorSets");
  --sets_left_;
  return set;
}

void Program::copy(const Region& src, const Region& dst, VkDeviceSize bytes) {
  if (bytes == 0) return;
  VkBufferCopy region{src.offset, dst.offset, bytes};
  c_.api().CmdCopyBuffer(cmd_, src.buffer, dst.buffer, 1, &region);
}

void Program::fill(const Region& dst, uint32_t word) {
  if (dst.bytes == 0) return;
  c_.api().CmdFillBuffer(cmd_, dst.buffer, dst.offset, dst.bytes, word);
}

void Program::dispatch(const Pipeline& p, const std::vector<Region>& bindings, const void* push, uint32_t push_bytes, uint32_t gx, uint32_t gy,
                       uint32_t gz, const std::string& label) {
  const Api& api = c_.api();
  if (bindings.size() != p.bindings || push_bytes != p.push_bytes)
    throw Error(ErrorKind::internal, cat("vulkan: a dispatch gives ", bindings.size(), " buffers and ", push_bytes, " push bytes to a pipeline of ",
                                         p.bindings, " and ", p.push_bytes));
  if (gx == 0 || gy == 0 || gz == 0) return;
  VkDescriptorSet set = allocate_set(p);
  std::vector<VkDescriptorBufferInfo> infos(bindings.size());
  std::vector<VkWriteDescriptorSet> writes(bindings.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    infos[i] = {bindings[i].buffer, bindings[i].offset, bindings[i].bytes ? bindings[i].bytes : VK_WHOLE_SIZE};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  api.UpdateDescriptorSets(c_.device(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  api.CmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  api.CmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  if (push_bytes) api.CmdPushConstants(cmd_, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  api.CmdDispatch(cmd_, gx, gy, gz);
  ++dispatches_;
  if (queries_ && dispatches_ <= capacity_) {
    labels_.push_back(label);
    api.CmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, static_cast<uint32_t>(dispatches_));
  }
}

void Program::barrier() {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  c_.api().CmdPipelineBarrier(cmd_, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Program::end() {
  // the last writes made visible to the host, which reads the mapped staging memory
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  c_.api().CmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                              nullptr, 0, nullptr);
  c_.check(c_.api().EndCommandBuffer(cmd_), "vkEndCommandBuffer");
  ended_ = true;
}

void Program::run() {
  if (!ended_) throw Error(ErrorKind::internal, "vulkan: running a program still being recorded");
  c_.submit_and_wait(cmd_, fence_);
  if (!queries_) return;
  const size_t n = std::min(dispatches_, labels_.size());
  std::vector<uint64_t> t(n + 1);
  c_.check(c_.api().GetQueryPoolResults(c_.device(), queries_, 0, static_cast<uint32_t>(n + 1), t.size() * 8, t.data(), 8,
                                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
           "vkGetQueryPoolResults");
  Profile& p = profile_table();
  std::lock_guard<std::mutex> lock(p.mu);
  for (size_t i = 0; i < n; ++i) {
    auto& e = p.ns[labels_[i]];
    e.first += static_cast<double>(t[i + 1] - t[i]) * c_.timestamp_ns();
    ++e.second;
  }
}

}  // namespace rlx::backends::vulkan
