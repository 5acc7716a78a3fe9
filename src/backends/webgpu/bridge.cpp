#include "backends/webgpu/bridge.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "rlx/error.h"
#include "util/flags.h"
#include "util/strings.h"
#include "webgpu_runner_js.h"

extern char** environ;

namespace rlx::backends::webgpu {

namespace {

enum Op : uint32_t { hello = 1, buffer_op = 2, write_op = 3, pipeline_op = 4, program_op = 5, run_op = 6, read_op = 7, free_op = 8 };

void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_f64(std::string& s, double v) { s.append(reinterpret_cast<const char*>(&v), 8); }

std::string module_path() {
  const std::string& flag = flags().RLX_WEBGPU_MODULE;
  if (!flag.empty()) return flag;
  const char* home = std::getenv("HOME");
  return cat(home ? home : "", "/.cache/rlx-npm/node_modules/webgpu/index.js");
}

}  // namespace

Bridge& Bridge::get() {
  static Bridge b;
  return b;
}

Bridge::~Bridge() {
  if (fd_ >= 0) close(fd_);  // the runner sees its stdin end and exits
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
  if (!stderr_path_.empty()) std::filesystem::remove(stderr_path_);
}

const runtime::Availability& Bridge::availability() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_) start();
  return availability_;
}

const WebgpuInfo& Bridge::info() {
  availability();
  return info_;
}

std::string Bridge::runner_stderr() const {
  std::ifstream f(stderr_path_);
  std::string s((std::istreambuf_iterator<char>(f)), {});
  if (s.size() > 2000) s = "…" + s.substr(s.size() - 2000);
  return s;
}

void Bridge::start() {
  started_ = true;
  const std::string module = module_path();
  if (!std::filesystem::exists(module)) {
    availability_ = {false, cat("the npm webgpu package (Dawn) is not installed: ", module, " is missing (`make setup` installs it; RLX_WEBGPU_MODULE names another)")};
    return;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    availability_ = {false, cat("socketpair failed: ", std::strerror(errno))};
    return;
  }
  if (!stderr_path_.empty()) std::filesystem::remove(stderr_path_);
  char tmpl[] = "/tmp/rlx-webgpu-XXXXXX";
  const int err_fd = mkstemp(tmpl);
  stderr_path_ = err_fd >= 0 ? tmpl : "";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
  if (err_fd >= 0) posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  // Dawn's OpenGL ES backend needs EGL without a display
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  if (!std::getenv("EGL_PLATFORM")) env.emplace_back("EGL_PLATFORM=surfaceless");
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string node = flags().RLX_WEBGPU_NODE, input_type = "--input-type=module", eval = "-e", script = kWebgpuRunnerJs;
  std::vector<char*> argv = {node.data(), input_type.data(), eval.data(), script.data(), nullptr};
  const int rc = posix_spawnp(&pid_, node.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(sv[1]);
  if (err_fd >= 0) close(err_fd);
  if (rc != 0) {
    close(sv[0]);
    pid_ = -1;
    availability_ = {false, cat("Node.js could not be started (", node, ": ", std::strerror(rc), "; install nodejs, or name it with RLX_WEBGPU_NODE)")};
    return;
  }
  fd_ = sv[0];
  nlohmann::json req = {{"module", std::filesystem::absolute(module).string()}, {"backends", nlohmann::json::array()}};
  for (const std::string& b : split(flags().RLX_WEBGPU_BACKEND, ',')) req["backends"].push_back(b);
  try {
    const nlohmann::json r = nlohmann::json::parse(request(hello, req.dump(), "starting WebGPU"));
    info_.adapter = r.value("adapter", "");
    info_.backend = r.value("backend", "");
    const auto& l = r.at("limits");
    info_.max_binding_bytes = l.value("maxStorageBufferBindingSize", uint64_t{0});
    info_.max_buffer_bytes = l.value("maxBufferSize", uint64_t{0});
    info_.max_storage_buffers = l.value("maxStorageBuffersPerShaderStage", 0u);
    info_.max_shared_bytes = l.value("maxComputeWorkgroupStorageSize", 0u);
    info_.max_invocations = l.value("maxComputeInvocationsPerWorkgroup", 0u);
    info_.max_groups = l.value("maxComputeWorkgroupsPerDimension", 0u);
    availability_ = {true, ""};
  } catch (const std::exception& e) {
    availability_ = {false, e.what()};
  }
}

std::string Bridge::request(uint32_t op, const std::string& payload, const std::string& what) {
  if (fd_ < 0 && op != hello && availability_.available) {
    // the runner died (its error went to the request that saw it): a new one for what comes
    // next; plans made on the old one fail naming a buffer or program it never had
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
    pid_ = -1;
    pipelines_.clear();
    start();
  }
  if (fd_ < 0) throw Error(ErrorKind::runtime, cat("webgpu: ", what, ": the runner is not running (", availability_.reason, ")"));
  std::string frame;
  put_u32(frame, static_cast<uint32_t>(payload.size() + 4));
  put_u32(frame, op);
  frame += payload;
  auto died = [&](const char* how) {
    close(fd_);
    fd_ = -1;
    int status = 0;
    std::string exit;
    if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) {
      exit = WIFSIGNALED(status) ? cat(" (signal ", WTERMSIG(status), ")") : cat(" (exit status ", WEXITSTATUS(status), ")");
      pid_ = -1;
    }
    return Error(ErrorKind::runtime, cat("webgpu: ", what, ": the Node runner ", how, exit, "; its messages:\n", runner_stderr()));
  };
  for (size_t off = 0; off < frame.size();) {
    const ssize_t n = send(fd_, frame.data() + off, frame.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw died("stopped taking requests");
    off += static_cast<size_t>(n);
  }
  auto take = [&](void* into, size_t bytes) {
    auto* p = static_cast<char*>(into);
    for (size_t off = 0; off < bytes;) {
      const ssize_t n = recv(fd_, p + off, bytes - off, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw died("exited");
      off += static_cast<size_t>(n);
    }
  };
  uint32_t head[2];
  take(head, sizeof head);
  std::string body(head[0] - 4, '\0');
  take(body.data(), body.size());
  if (head[1] != 0) throw Error(ErrorKind::runtime, cat("webgpu: ", what, ": ", body));
  return body;
}

uint32_t Bridge::new_id() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_id_++;
}

void Bridge::buffer(uint32_t id, uint64_t bytes) {
  std::string p;
  put_u32(p, id);
  put_f64(p, static_cast<double>(bytes));
  std::lock_guard<std::mutex> lock(mu_);
  request(buffer_op, p, cat("allocating a buffer of ", bytes, " bytes"));
}

void Bridge::write(uint32_t id, uint64_t offset, const void* data, size_t bytes) {
  std::string p;
  put_u32(p, id);
  put_f64(p, static_cast<double>(offset));
  p.append(static_cast<const char*>(data), bytes);
  std::lock_guard<std::mutex> lock(mu_);
  request(write_op, p, cat("writing ", bytes, " bytes"));
}

uint32_t Bridge::pipeline(const std::string& wgsl, uint32_t bindings, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = cat(bindings, "\n", wgsl);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
  const uint32_t id = next_id_++;
  std::string p;
  put_u32(p, id);
  put_u32(p, bindings);
  p += wgsl;
  request(pipeline_op, p, cat("the WGSL of ", name, " does not compile"));
  pipelines_[key] = id;
  return id;
}

void Bridge::program(uint32_t id, const std::vector<uint32_t>& words) {
  std::string p;
  put_u32(p, id);
  p.append(reinterpret_cast<const char*>(words.data()), words.size() * 4);
  std::lock_guard<std::mutex> lock(mu_);
  request(program_op, p, "making the plan's bind groups");
}

void Bridge::run(uint32_t program) {
  std::string p;
  put_u32(p, program);
  std::lock_guard<std::mutex> lock(mu_);
  request(run_op, p, "running the plan");
}

void Bridge::read(uint32_t id, uint64_t offset, void* out, size_t bytes) {
  std::string p;
  put_u32(p, id);
  put_f64(p, static_cast<double>(offset));
  put_f64(p, static_cast<double>(bytes));
  std::lock_guard<std::mutex> lock(mu_);
  const std::string r = request(read_op, p, cat("reading ", bytes, " bytes"));
  if (r.size() != bytes) throw Error(ErrorKind::internal, cat("webgpu: read ", r.size(), " bytes of ", bytes));
  std::memcpy(out, r.data(), bytes);
}

void Bridge::free(Kind kind, uint32_t id) {
  std::string p;
  put_u32(p, static_cast<uint32_t>(kind));
  put_u32(p, id);
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) request(free_op, p, "freeing");
}

}  // namespace rlx::backends::webgpu
