#include "backends/vulkan/loader.h"

#include <dlfcn.h>

namespace rlx::backends::vulkan {

bool open_loader(Api& api, std::string& why) {
  static void* lib = [] {
    void* h = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    return h ? h : dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
  }();
  if (!lib) {
    why = "no Vulkan loader (libvulkan.so.1 not found: install libvulkan1)";
    return false;
  }
  api.GetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!api.GetInstanceProcAddr) {
    why = "the Vulkan loader has no vkGetInstanceProcAddr";
    return false;
  }
  api.CreateInstance = reinterpret_cast<PFN_vkCreateInstance>(api.GetInstanceProcAddr(nullptr, "vkCreateInstance"));
  api.EnumerateInstanceVersion = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(api.GetInstanceProcAddr(nullptr, "vkEnumerateInstanceVersion"));
  if (!api.CreateInstance) {
    why = "the Vulkan loader has no vkCreateInstance";
    return false;
  }
  return true;
}

#define RLX_VK_INSTANCE(name) api.name = reinterpret_cast<PFN_vk##name>(api.GetInstanceProcAddr(instance, "vk" #name))
#define RLX_VK_DEVICE(name) api.name = reinterpret_cast<PFN_vk##name>(api.GetDeviceProcAddr(device, "vk" #name))

void load_instance(Api& api, VkInstance instance) {
  RLX_VK_INSTANCE(DestroyInstance);
  RLX_VK_INSTANCE(EnumeratePhysicalDevices);
  RLX_VK_INSTANCE(GetPhysicalDeviceProperties);
  RLX_VK_INSTANCE(GetPhysicalDeviceProperties2);
  RLX_VK_INSTANCE(GetPhysicalDeviceFeatures2);
  RLX_VK_INSTANCE(GetPhysicalDeviceCooperativeMatrixPropertiesNV);
  RLX_VK_INSTANCE(GetPhysicalDeviceQueueFamilyProperties);
  RLX_VK_INSTANCE(GetPhysicalDeviceMemoryProperties);
  RLX_VK_INSTANCE(EnumerateDeviceExtensionProperties);
  RLX_VK_INSTANCE(CreateDevice);
  RLX_VK_INSTANCE(GetDeviceProcAddr);
}

void load_device(Api& api, VkDevice device) {
  RLX_VK_DEVICE(DestroyDevice);
  RLX_VK_DEVICE(GetDeviceQueue);
  RLX_VK_DEVICE(CreateBuffer);
  RLX_VK_DEVICE(DestroyBuffer);
  RLX_VK_DEVICE(GetBufferMemoryRequirements);
  RLX_VK_DEVICE(AllocateMemory);
  RLX_VK_DEVICE(FreeMemory);
  RLX_VK_DEVICE(BindBufferMemory);
  RLX_VK_DEVICE(MapMemory);
  RLX_VK_DEVICE(UnmapMemory);
  RLX_VK_DEVICE(CreateShaderModule);
  RLX_VK_DEVICE(DestroyShaderModule);
  RLX_VK_DEVICE(CreateDescriptorSetLayout);
  RLX_VK_DEVICE(DestroyDescriptorSetLayout);
  RLX_VK_DEVICE(CreatePipelineLayout);
  RLX_VK_DEVICE(DestroyPipelineLayout);
  RLX_VK_DEVICE(CreateComputePipelines);
  RLX_VK_DEVICE(DestroyPipeline);
  RLX_VK_DEVICE(CreateDescriptorPool);
  RLX_VK_DEVICE(DestroyDescriptorPool);
  RLX_VK_DEVICE(AllocateDescriptorSets);
  RLX_VK_DEVICE(UpdateDescriptorSets);
  RLX_VK_DEVICE(CreateCommandPool);
  RLX_VK_DEVICE(DestroyCommandPool);
  RLX_VK_DEVICE(AllocateCommandBuffers);
  RLX_VK_DEVICE(BeginCommandBuffer);
  RLX_VK_DEVICE(EndCommandBuffer);
  RLX_VK_DEVICE(CmdBindPipeline);
  RLX_VK_DEVICE(CmdBindDescriptorSets);
  RLX_VK_DEVICE(CmdPushConstants);
  RLX_VK_DEVICE(CmdDispatch);
  RLX_VK_DEVICE(CmdCopyBuffer);
  RLX_VK_DEVICE(CmdFillBuffer);
  RLX_VK_DEVICE(CreateQueryPool);
  RLX_VK_DEVICE(DestroyQueryPool);
  RLX_VK_DEVICE(CmdResetQueryPool);
  RLX_VK_DEVICE(CmdWriteTimestamp);
  RLX_VK_DEVICE(GetQueryPoolResults);
  RLX_VK_DEVICE(CmdPipelineBarrier);
  RLX_VK_DEVICE(FreeCommandBuffers);
  RLX_VK_DEVICE(CreateFence);
  RLX_VK_DEVICE(DestroyFence);
  RLX_VK_DEVICE(WaitForFences);
  RLX_VK_DEVICE(ResetFences);
  RLX_VK_DEVICE(QueueSubmit);
}

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    default: return "VkResult (other)";
  }
}

}  // namespace rlx::backends::vulkan
