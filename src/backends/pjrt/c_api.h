// The part of the PJRT C API (openxla's pjrt_c_api.h, major version 0) this device calls,
// declared from the published description: every argument struct starts with its size and a
// private pointer, fields are only ever appended, so a struct that stops at the last field we
// use is one the plugin reads correctly (it sees our struct_size). The function table is
// PJRT_Api: a header (size, extension chain, version) then function pointers in a fixed order;
// we name the slots we call by their index.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rlx::backends::pjrt::c_api {

struct Error;
struct Event;
struct Client;
struct Device;
struct Memory;
struct LoadedExecutable;
struct Buffer;

struct ApiVersion {
  size_t struct_size;
  void* priv;
  int major_version;
  int minor_version;
};

struct ErrorDestroyArgs {
  size_t struct_size = sizeof(ErrorDestroyArgs);
  void* priv = nullptr;
  Error* error = nullptr;
};
struct ErrorMessageArgs {
  size_t struct_size = sizeof(ErrorMessageArgs);
  void* priv = nullptr;
  const Error* error = nullptr;
  const char* message = nullptr;
  size_t message_size = 0;
};
struct PluginInitializeArgs {
  size_t struct_size = sizeof(PluginInitializeArgs);
  void* priv = nullptr;
};
struct EventArgs {  // Event_Destroy and Event_Await
  size_t struct_size = sizeof(EventArgs);
  void* priv = nullptr;
  Event* event = nullptr;
};
struct ClientCreateArgs {
  size_t struct_size = sizeof(ClientCreateArgs);
  void* priv = nullptr;
  const void* create_options = nullptr;
  size_t num_options = 0;
  void* kv_get_callback = nullptr;
  void* kv_get_user_arg = nullptr;
  void* kv_put_callback = nullptr;
  void* kv_put_user_arg = nullptr;
  Client* client = nullptr;
};
struct ClientDestroyArgs {
  size_t struct_size = sizeof(ClientDestroyArgs);
  void* priv = nullptr;
  Client* client = nullptr;
};
struct ClientStringArgs {  // Client_PlatformName and Client_PlatformVersion
  size_t struct_size = sizeof(ClientStringArgs);
  void* priv = nullptr;
  Client* client = nullptr;
  const char* value = nullptr;
  size_t value_size = 0;
};
struct ClientDevicesArgs {  // Client_AddressableDevices
  size_t struct_size = sizeof(ClientDevicesArgs);
  void* priv = nullptr;
  Client* client = nullptr;
  Device** devices = nullptr;
  size_t num_devices = 0;
};
struct Program {
  size_t struct_size = sizeof(Program);
  void* priv = nullptr;
  char* code = nullptr;
  size_t code_size = 0;
  const char* format = nullptr;
  size_t format_size = 0;
};
struct ClientCompileArgs {
  size_t struct_size = sizeof(ClientCompileArgs);
  void* priv = nullptr;
  Client* client = nullptr;
  Program* program = nullptr;
  const char* compile_options = nullptr;
  size_t compile_options_size = 0;
  LoadedExecutable* executable = nullptr;
};
// PJRT_Buffer_Type
enum BufferType : int {
  kInvalid = 0, kPred, kS8, kS16, kS32, kS64, kU8, kU16, kU32, kU64, kF16, kF32, kF64, kBF16, kC64, kC128,
};
enum HostBufferSemantics : int { kImmutableOnlyDuringCall = 0, kImmutableUntilTransferCompletes = 1, kZeroCopy = 2 };
struct BufferFromHostArgs {
  size_t struct_size = sizeof(BufferFromHostArgs);
  void* priv = nullptr;
  Client* client = nullptr;
  const void* data = nullptr;
  BufferType type = kInvalid;
  const int64_t* dims = nullptr;
  size_t num_dims = 0;
  const int64_t* byte_strides = nullptr;
  size_t num_byte_strides = 0;
  HostBufferSemantics host_buffer_semantics = kImmutableUntilTransferCompletes;
  Device* device = nullptr;
  Memory* memory = nullptr;
  void* device_layout = nullptr;
  Event* done_with_host_buffer = nullptr;
  Buffer* buffer = nullptr;
};
struct ExecuteOptions {
  size_t struct_size = sizeof(ExecuteOptions);
  void* priv = nullptr;
  void** send_callbacks = nullptr;
  void** recv_callbacks = nullptr;
  size_t num_send_ops = 0;
  size_t num_recv_ops = 0;
  int launch_id = 0;
  int padding = 0;  // zero, as the plugin may read up to the next field
};
struct ExecuteArgs {
  size_t struct_size = sizeof(ExecuteArgs);
  void* priv = nullptr;
  LoadedExecutable* executable = nullptr;
  ExecuteOptions* options = nullptr;
  Buffer* const* const* argument_lists = nullptr;
  size_t num_devices = 0;
  size_t num_args = 0;
  Buffer** const* output_lists = nullptr;
  Event** device_complete_events = nullptr;
  Device* execute_device = nullptr;
};
struct LoadedExecutableDestroyArgs {
  size_t struct_size = sizeof(LoadedExecutableDestroyArgs);
  void* priv = nullptr;
  LoadedExecutable* executable = nullptr;
};
struct BufferDestroyArgs {
  size_t struct_size = sizeof(BufferDestroyArgs);
  void* priv = nullptr;
  Buffer* buffer = nullptr;
};
struct BufferToHostArgs {
  size_t struct_size = sizeof(BufferToHostArgs);
  void* priv = nullptr;
  Buffer* src = nullptr;
  void* host_layout = nullptr;
  void* dst = nullptr;
  size_t dst_size = 0;
  Event* event = nullptr;
};

// Plugins built from newer headers require struct_size ≥ their own size (a 0.115 plugin wants 88
// bytes of PJRT_Client_Create_Args where 0.33's had 72). Their extra fields come after ours, and
// zero means "not given" for each (null callbacks, no options): an argument struct is sent with a
// zeroed tail and its size counting it.
template <class T>
struct Args : T {
  unsigned char newer_fields[256] = {};
  Args() { this->struct_size = sizeof(Args); }
};

// PJRT_Api's slots, in the order of the published table (after its 40-byte header).
enum Slot : int {
  kErrorDestroy = 0,
  kErrorMessage = 1,
  kPluginInitialize = 3,
  kEventDestroy = 5,
  kEventAwait = 8,
  kClientCreate = 10,
  kClientDestroy = 11,
  kClientPlatformName = 12,
  kClientPlatformVersion = 14,
  kClientAddressableDevices = 16,
  kClientCompile = 20,
  kClientBufferFromHostBuffer = 22,
  kLoadedExecutableDestroy = 50,
  kLoadedExecutableExecute = 55,
  kBufferDestroy = 58,
  kBufferToHostBuffer = 70,
  kSlotsUsed = 71,
};

// The table as the plugin hands it out.
struct Api {
  size_t struct_size;
  void* extension_start;
  ApiVersion version;
  void* slots[1];  // kSlotsUsed or more; struct_size says how many the plugin has
};

}  // namespace rlx::backends::pjrt::c_api
