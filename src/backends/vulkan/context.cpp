#include "backends/vulkan/context.h"
#include "backends/vulkan/program.h"

// Vulkan's idiom: a struct is value-initialized from its sType, every other member zero.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <algorithm>
#include <cstring>
#include <functional>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

// Lower is preferred.
int rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

}  // namespace

const char* PhysicalDevice::type_name() const {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

Context& Context::get() {
  static Context c;
  return c;
}

Context::Context() {
  auto unavailable = [&](std::string why) { availability_ = {false, std::move(why)}; };
  std::string why;
  if (!open_loader(api_, why)) {
    unavailable(why);
    return;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "rlx";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkResult r = api_.CreateInstance(&ici, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    {
    // also what the loader says when a driver is installed but its libraries do not load
    unavailable("no Vulkan driver (ICD) could be loaded for Vulkan 1.2: none is installed (mesa-vulkan-drivers gives lavapipe) or its "
                "libraries are missing (VK_LOADER_DEBUG=error names them)");
    return;
  }
  if (r != VK_SUCCESS) {
    unavailable(cat("vkCreateInstance failed: ", result_name(r)));
    return;
  }
  load_instance(api_, instance_);
  uint32_t n = 0;
  api_.EnumeratePhysicalDevices(instance_, &n, nullptr);
  if (n == 0) {
    unavailable("no Vulkan device: the loader found no driver (ICD) that reports one (install mesa-vulkan-drivers for lavapipe)");
    return;
  }
  handles_.resize(n);
  api_.EnumeratePhysicalDevices(instance_, &n, handles_.data());
  for (VkPhysicalDevice h : handles_) {
    PhysicalDevice d;
    uint32_t en = 0;
    api_.EnumerateDeviceExtensionProperties(h, nullptr, &en, nullptr);
    std::vector<VkExtensionProperties> ext(en);
    api_.EnumerateDeviceExtensionProperties(h, nullptr, &en, ext.data());
    auto has_extension = [&](const char* name) {
      for (const auto& e : ext)
        if (std::strcmp(e.extensionName, name) == 0) return true;
      return false;
    };
    VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &sub;
    api_.GetPhysicalDeviceProperties2(h, &p2);
    d.name = p2.properties.deviceName;
    d.type = p2.properties.deviceType;
    d.api_version = p2.properties.apiVersion;
    d.subgroup_size = sub.subgroupSize;
    {
      VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
      VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
      f11.pNext = &f12;
      VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
      f2.pNext = &f11;
      api_.GetPhysicalDeviceFeatures2(h, &f2);
      Features& f = d.features;
      f.int64 = f2.features.shaderInt64;
      f.int16 = f2.features.shaderInt16;
      f.int8 = f12.shaderInt8;
      f.storage16 = f11.storageBuffer16BitAccess;
      f.storage8 = f12.storageBuffer8BitAccess;
      f.subgroup_arithmetic = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
      f.subgroup_shuffle = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (sub.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
      f.subgroup_size = sub.subgroupSize;
      f.max_storage_range = p2.properties.limits.maxStorageBufferRange;
      f.max_push_bytes = p2.properties.limits.maxPushConstantsSize;
      f.max_shared_bytes = p2.properties.limits.maxComputeSharedMemorySize;
      f.float16 = f12.shaderFloat16;
      if (has_extension("VK_NV_cooperative_matrix") && api_.GetPhysicalDeviceCooperativeMatrixPropertiesNV && f12.vulkanMemoryModel && f.float16 && sub.subgroupSize == 32) {
        uint32_t pn = 0;
        api_.GetPhysicalDeviceCooperativeMatrixPropertiesNV(h, &pn, nullptr);
        std::vector<VkCooperativeMatrixPropertiesNV> props(pn, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
        api_.GetPhysicalDeviceCooperativeMatrixPropertiesNV(h, &pn, props.data());
        for (const auto& cp : props)  // the largest f16 × f16 + f32 fragment whose sides divide 32
          if (cp.AType == VK_COMPONENT_TYPE_FLOAT16_NV && cp.BType == VK_COMPONENT_TYPE_FLOAT16_NV && cp.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
              cp.DType == VK_COMPONENT_TYPE_FLOAT32_NV && cp.scope == VK_SCOPE_SUBGROUP_NV && 32 % cp.MSize == 0 && 32 % cp.NSize == 0 && 32 % cp.KSize == 0 &&
              cp.MSize * cp.NSize > f.coop_m * f.coop_n) {
            f.coopmat = true;
            f.coop_m = cp.MSize, f.coop_n = cp.NSize, f.coop_k = cp.KSize;
          }
      }
    }
    uint32_t qn = 0;
    api_.GetPhysicalDeviceQueueFamilyProperties(h, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> qf(qn);
    api_.GetPhysicalDeviceQueueFamilyProperties(h, &qn, qf.data());
    for (const auto& q : qf) d.compute_queue = d.compute_queue || (q.queueFlags & VK_QUEUE_COMPUTE_BIT);
    d.cooperative_matrix = has_extension("VK_KHR_cooperative_matrix");
    VkPhysicalDeviceMemoryProperties mp;
    api_.GetPhysicalDeviceMemoryProperties(h, &mp);
    for (uint32_t i = 0; i < mp.memoryHeapCount; ++i)
      if (mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) d.device_local_bytes += mp.memoryHeaps[i].size;
    devices_.push_back(std::move(d));
  }
  for (size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i].compute_queue && (chosen_ < 0 || rank(devices_[i].type) < rank(devices_[static_cast<size_t>(chosen_)].type))) chosen_ = static_cast<int>(i);
  if (chosen_ < 0) {
    unavailable(cat(devices_.size(), " Vulkan device(s), none with a compute queue"));
    return;
  }
  VkPhysicalDevice pd = handles_[static_cast<size_t>(chosen_)];
  uint32_t qn = 0;
  api_.GetPhysicalDeviceQueueFamilyProperties(pd, &qn, nullptr);
  std::vector<VkQueueFamilyProperties> qf(qn);
  api_.GetPhysicalDeviceQueueFamilyProperties(pd, &qn, qf.data());
  for (uint32_t i = 0; i < qn; ++i)
    if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      queue_family_ = i;
      break;
    }
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  // the features kernels use, each enabled where the device has it (claims check them)
  const Features& want = devices_[static_cast<size_t>(chosen_)].features;
  if (!want.int64) {
    unavailable(cat(devices_[static_cast<size_t>(chosen_)].name, " lacks shaderInt64, which every RLX kernel's index arithmetic uses"));
    chosen_ = -1;
    return;
  }
  VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  e12.shaderInt8 = want.int8;
  e12.storageBuffer8BitAccess = want.storage8;
  e12.shaderFloat16 = want.float16;
  e12.vulkanMemoryModel = want.coopmat;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  coop.cooperativeMatrix = VK_TRUE;
  if (want.coopmat) e12.pNext = &coop;
  const char* coop_ext = "VK_NV_cooperative_matrix";
  VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  e11.storageBuffer16BitAccess = want.storage16;
  e11.pNext = &e12;
  VkPhysicalDeviceFeatures2 e2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  e2.features.shaderInt64 = VK_TRUE;
  e2.features.shaderInt16 = want.int16;
  e2.pNext = &e11;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &e2;
  if (want.coopmat) {
    dci.enabledExtensionCount = 1;
    dci.ppEnabledExtensionNames = &coop_ext;
  }
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  r = api_.CreateDevice(pd, &dci, nullptr, &device_);
  if (r != VK_SUCCESS) {
    std::string name = devices_[static_cast<size_t>(chosen_)].name;
    chosen_ = -1;
    {
    unavailable(cat("vkCreateDevice on ", name, " failed: ", result_name(r)));
    return;
  }
  }
  load_device(api_, device_);
  api_.GetDeviceQueue(device_, queue_family_, 0, &queue_);
  api_.GetPhysicalDeviceMemoryProperties(pd, &memory_);
  VkPhysicalDeviceProperties props;
  api_.GetPhysicalDeviceProperties(pd, &props);
  storage_alignment_ = std::max<VkDeviceSize>(256, props.limits.minStorageBufferOffsetAlignment);
  timestamp_ns_ = props.limits.timestampPeriod;
}

Context::~Context() {
  for (auto& [key, p] : pipelines_) {
    api_.DestroyPipeline(device_, p.pipeline, nullptr);
    api_.DestroyPipelineLayout(device_, p.layout, nullptr);
    api_.DestroyDescriptorSetLayout(device_, p.set_layout, nullptr);
  }
  for (Block& b : blocks_) {
    api_.DestroyBuffer(device_, b.buffer, nullptr);
    api_.FreeMemory(device_, b.memory, nullptr);
  }
  if (staging_.buffer) free(staging_);
  if (device_) api_.DestroyDevice(device_, nullptr);
  if (instance_) api_.DestroyInstance(instance_, nullptr);
}

void Context::check(VkResult r, const char* what) const {
  if (r == VK_SUCCESS) return;
  ErrorKind kind = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? ErrorKind::out_of_memory : ErrorKind::runtime;
  throw Error(kind, cat("vulkan: ", what, " failed: ", result_name(r)));
}

HostBuffer Context::host_buffer(size_t bytes) {
  if (!availability_.available) throw Error(ErrorKind::unsupported, cat("vulkan is not available: ", availability_.reason));
  HostBuffer b;
  b.bytes = bytes;
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  VkDeviceSize allocated = 0;
  VkResult r = create_buffer(std::max<size_t>(bytes, 4), want, want, "host-visible coherent", b.buffer, b.memory, allocated);
  check(r, cat("vkAllocateMemory of ", allocated, " bytes").c_str());
  check(api_.MapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  return b;
}

void Context::free(HostBuffer& b) {
  if (b.memory) {
    api_.UnmapMemory(device_, b.memory);
    api_.FreeMemory(device_, b.memory, nullptr);
  }
  if (b.buffer) api_.DestroyBuffer(device_, b.buffer, nullptr);
  b = HostBuffer{};
}

void Context::dispatch(const std::vector<uint32_t>& spirv, const std::vector<HostBuffer*>& buffers, const void* push, uint32_t push_bytes,
                       uint32_t groups_x) {
  std::vector<Region> regions;
  for (HostBuffer* b : buffers) regions.push_back({b->buffer, 0, VK_WHOLE_SIZE});
  dispatch(spirv, regions, push, push_bytes, groups_x);
}

void Context::dispatch(const std::vector<uint32_t>& spirv, const std::vector<Region>& buffers, const void* push, uint32_t push_bytes,
                       uint32_t groups_x) {
  if (!availability_.available) throw Error(ErrorKind::unsupported, cat("vulkan is not available: ", availability_.reason));
  const Pipeline& p = pipeline(spirv, static_cast<uint32_t>(buffers.size()), push_bytes);
  Program program(*this);
  program.dispatch(p, buffers, push, push_bytes, groups_x);
  program.end();
  program.run();
}

const Features& Context::features() const { return chosen_ < 0 ? no_features_ : devices_[static_cast<size_t>(chosen_)].features; }

const Pipeline& Context::pipeline(const std::vector<uint32_t>& spirv, uint32_t bindings, uint32_t push_bytes) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the words and the layout
  auto mix = [&](uint32_t w) {
    for (int b = 0; b < 4; ++b) h = (h ^ ((w >> (8 * b)) & 0xffu)) * 1099511628211ull;
  };
  for (uint32_t w : spirv) mix(w);
  mix(bindings);
  mix(push_bytes);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pipelines_.find(h);
  if (it != pipelines_.end()) return it->second;
  Pipeline p;
  p.bindings = bindings;
  p.push_bytes = push_bytes;
  VkShaderModule module = VK_NULL_HANDLE;
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = spirv.size() * 4;
  smi.pCode = spirv.data();
  check(api_.CreateShaderModule(device_, &smi, nullptr, &module), "vkCreateShaderModule");
  struct Module {
    const Api& api;
    VkDevice d;
    VkShaderModule m;
    ~Module() { api.DestroyShaderModule(d, m, nullptr); }
  } owned{api_, device_, module};
  std::vector<VkDescriptorSetLayoutBinding> binds(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    binds[i].binding = i;
    binds[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    binds[i].descriptorCount = 1;
    binds[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dli.bindingCount = bindings;
  dli.pBindings = binds.data();
  check(api_.CreateDescriptorSetLayout(device_, &dli, nullptr, &p.set_layout), "vkCreateDescriptorSetLayout");
  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p.set_layout;
  pli.pushConstantRangeCount = push_bytes ? 1 : 0;
  pli.pPushConstantRanges = push_bytes ? &pcr : nullptr;
  VkResult r = api_.CreatePipelineLayout(device_, &pli, nullptr, &p.layout);
  if (r != VK_SUCCESS) api_.DestroyDescriptorSetLayout(device_, p.set_layout, nullptr);
  check(r, "vkCreatePipelineLayout");
  VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, module, "main", nullptr};
  cpi.layout = p.layout;
  r = api_.CreateComputePipelines(device_, VK_NULL_HANDLE, 1, &cpi, nullptr, &p.pipeline);
  if (r != VK_SUCCESS) {
    api_.DestroyPipelineLayout(device_, p.layout, nullptr);
    api_.DestroyDescriptorSetLayout(device_, p.set_layout, nullptr);
  }
  check(r, "vkCreateComputePipelines");
  return pipelines_[h] = p;
}

void Context::submit_and_wait(VkCommandBuffer cmd, VkFence fence) {
  std::lock_guard<std::mutex> lock(mu_);
  check(api_.ResetFences(device_, 1, &fence), "vkResetFences");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  check(api_.QueueSubmit(queue_, 1, &si, fence), "vkQueueSubmit");
  check(api_.WaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

uint32_t Context::memory_type(uint32_t allowed, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) const {
  for (VkMemoryPropertyFlags flags : {want, fallback})
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
      if ((allowed & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & flags) == flags) return i;
  return UINT32_MAX;
}

VkResult Context::create_buffer(VkDeviceSize bytes, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback, const char* kind, VkBuffer& buffer,
                                VkDeviceMemory& memory, VkDeviceSize& allocated) {
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = bytes;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(api_.CreateBuffer(device_, &bci, nullptr, &buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  api_.GetBufferMemoryRequirements(device_, buffer, &req);
  allocated = req.size;
  const uint32_t type = memory_type(req.memoryTypeBits, want, fallback);
  if (type == UINT32_MAX) {
    api_.DestroyBuffer(device_, buffer, nullptr);
    buffer = VK_NULL_HANDLE;
    throw Error(ErrorKind::unsupported, cat("vulkan: the device has no ", kind, " memory for storage buffers"));
  }
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type;
  VkResult r = api_.AllocateMemory(device_, &mai, nullptr, &memory);
  if (r != VK_SUCCESS) {
    api_.DestroyBuffer(device_, buffer, nullptr);
    buffer = VK_NULL_HANDLE;
    return r;
  }
  check(api_.BindBufferMemory(device_, buffer, memory, 0), "vkBindBufferMemory");
  return VK_SUCCESS;
}

Region Context::device_alloc(size_t bytes) {
  if (!availability_.available) throw Error(ErrorKind::unsupported, cat("vulkan is not available: ", availability_.reason));
  std::lock_guard<std::mutex> lock(mu_);
  const VkDeviceSize a = storage_alignment_;
  const VkDeviceSize want = std::max<VkDeviceSize>(a, (bytes + a - 1) / a * a);
  for (Block& b : blocks_)
    for (size_t i = 0; i < b.free.size(); ++i)
      if (b.free[i].second >= want) {
        Region r{b.buffer, b.free[i].first, bytes};
        b.free[i].first += want;
        b.free[i].second -= want;
        if (b.free[i].second == 0) b.free.erase(b.free.begin() + static_cast<std::ptrdiff_t>(i));
        return r;
      }
  // a new block: 64 MiB, or the request
  Block b;
  b.size = std::max<VkDeviceSize>(VkDeviceSize{64} << 20, want);
  VkDeviceSize allocated = 0;
  VkResult res = create_buffer(b.size, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, "device-local", b.buffer, b.memory, allocated);
  if (res != VK_SUCCESS)
    throw Error(ErrorKind::out_of_memory, cat("vulkan: no room for ", allocated, " bytes of device memory (", result_name(res), "); the pool holds ",
                                              reserved_locked(), " bytes"));
  Region r{b.buffer, 0, bytes};
  if (b.size > want) b.free.push_back({want, b.size - want});
  blocks_.push_back(std::move(b));
  return r;
}

void Context::device_free(const Region& r) {
  std::lock_guard<std::mutex> lock(mu_);
  const VkDeviceSize a = storage_alignment_;
  const VkDeviceSize bytes = std::max<VkDeviceSize>(a, (r.bytes + a - 1) / a * a);
  for (Block& b : blocks_) {
    if (b.buffer != r.buffer) continue;
    auto at = std::lower_bound(b.free.begin(), b.free.end(), std::make_pair(r.offset, VkDeviceSize{0}));
    at = b.free.insert(at, {r.offset, bytes});
    // coalesce with the neighbours
    if (at + 1 != b.free.end() && at->first + at->second == (at + 1)->first) {
      at->second += (at + 1)->second;
      b.free.erase(at + 1);
    }
    if (at != b.free.begin() && (at - 1)->first + (at - 1)->second == at->first) {
      (at - 1)->second += at->second;
      b.free.erase(at);
    }
    return;
  }
  throw Error(ErrorKind::internal, "vulkan: freeing a region of no pool block");
}

size_t Context::device_bytes_reserved() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reserved_locked();
}

size_t Context::reserved_locked() const {
  size_t n = 0;
  for (const Block& b : blocks_) n += b.size;
  return n;
}

void Context::submit_once(const std::function<void(VkCommandBuffer)>& record) {
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  struct Cleanup {
    Context& c;
    VkCommandPool& p;
    VkFence& f;
    ~Cleanup() {
      if (f) c.api_.DestroyFence(c.device_, f, nullptr);
      if (p) c.api_.DestroyCommandPool(c.device_, p, nullptr);
    }
  } cleanup{*this, pool, fence};
  VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpci.queueFamilyIndex = queue_family_;
  check(api_.CreateCommandPool(device_, &cpci, nullptr, &pool), "vkCreateCommandPool");
  VkCommandBuffer cmd;
  VkCommandBufferAllocateInfo cba{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cba.commandPool = pool;
  cba.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cba.commandBufferCount = 1;
  check(api_.AllocateCommandBuffers(device_, &cba, &cmd), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo cbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  cbi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(api_.BeginCommandBuffer(cmd, &cbi), "vkBeginCommandBuffer");
  record(cmd);
  check(api_.EndCommandBuffer(cmd), "vkEndCommandBuffer");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(api_.CreateFence(device_, &fci, nullptr, &fence), "vkCreateFence");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  check(api_.QueueSubmit(queue_, 1, &si, fence), "vkQueueSubmit");
  check(api_.WaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

void Context::copy(VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset, VkDeviceSize bytes) {
  submit_once([&](VkCommandBuffer cmd) {
    VkBufferCopy region{src_offset, dst_offset, bytes};
    api_.CmdCopyBuffer(cmd, src, dst, 1, &region);
  });
}

HostBuffer& Context::staging(size_t bytes) {
  if (staging_.bytes < bytes) {
    if (staging_.buffer) free(staging_);
    staging_ = host_buffer(bytes);
  }
  return staging_;
}

void Context::upload(const Region& dst, const void* src, size_t bytes) {
  if (bytes > dst.bytes) throw Error(ErrorKind::invalid_argument, cat("vulkan: uploading ", bytes, " bytes into a region of ", dst.bytes));
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::memcpy(staging(bytes).mapped, src, bytes);
  copy(staging_.buffer, 0, dst.buffer, dst.offset, bytes);
}

void Context::download(const Region& src, void* dst, size_t bytes) {
  if (bytes > src.bytes) throw Error(ErrorKind::invalid_argument, cat("vulkan: downloading ", bytes, " bytes from a region of ", src.bytes));
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  copy(src.buffer, src.offset, staging(bytes).buffer, 0, bytes);
  std::memcpy(dst, staging_.mapped, bytes);
}

}  // namespace rlx::backends::vulkan
