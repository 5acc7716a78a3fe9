// rlx launch -n N [--backend gloo|mpi|nccl] [--timeout S] -- COMMAND …: N local ranks of a command.
// Gloo ranks are started here, each with its rank, the job size and a fresh rendezvous
// directory in its environment (dist/communicator.h); MPI ranks by mpirun. When a rank fails,
// the others are stopped (SIGTERM, then SIGKILL) and the failure is named — a job never hangs on
// a dead rank.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "commands.h"
#include "dist/communicator.h"
#include "dist/plan.h"
#include "formats/hf_config.h"
#include "models/decoder_shape.h"
#include "models/qwen3_weights.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::cli {

namespace {

namespace fs = std::filesystem;

std::string self_exe() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("rlx") : p.string();
}

std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split(path ? path : "", ':')) {
    fs::path p = fs::path(dir.empty() ? "." : dir) / name;
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

std::string describe(int status) {
  if (WIFEXITED(status)) return cat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return cat("was killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  return "stopped";
}

[[noreturn]] void exec_child(const std::vector<std::string>& cmd, const std::vector<std::pair<std::string, std::string>>& env) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // the launcher gone, the rank goes too
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& s : cmd) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "rlx launch: cannot run %s: %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

// The published Qwen3 dense configurations (config.json of each Hugging Face repository).
dist::DecoderShape preset(const std::string& name) {
  auto shape = [&](int64_t hidden, int64_t inter, int64_t layers, int64_t heads, bool tied) {
    dist::DecoderShape m;
    m.name = name;
    m.vocab = 151936;
    m.hidden = hidden;
    m.intermediate = inter;
    m.layers = layers;
    m.heads = heads;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.tied_embeddings = tied;
    m.qk_norm = true;
    return m;
  };
  if (name == "qwen3-0.6b") return shape(1024, 3072, 28, 16, true);
  if (name == "qwen3-1.7b") return shape(2048, 6144, 28, 16, true);
  if (name == "qwen3-4b") return shape(2560, 9728, 36, 32, true);
  if (name == "qwen3-8b") return shape(4096, 12288, 36, 32, false);
  if (name == "qwen3-14b") return shape(5120, 17408, 40, 40, false);
  if (name == "qwen3-32b") return shape(5120, 25600, 64, 64, false);
  // a model directory or config.json
  fs::path p = name;
  if (fs::is_directory(p)) p /= "config.json";
  if (!fs::exists(p)) throw Error(ErrorKind::invalid_argument, cat("--model ", name, ": neither a preset (qwen3-0.6b, -1.7b, -4b, -8b, -14b, -32b) nor a model directory with config.json"));
  return models::decoder_shape(models::llama_spec_from_hf(formats::read_hf_config(p.string()), p.string()), name);
}

double bytes_per_param(const std::string& precision) {
  if (precision == "f32") return 4;
  if (precision == "bf16" || precision == "f16") return 2;
  static const std::pair<const char*, double> types[] = {{"q8_0", 34.0 / 32},   {"q6_k", 210.0 / 256}, {"q5_k", 176.0 / 256}, {"q5_k_m", 176.0 / 256},
                                                         {"q5_1", 24.0 / 32},   {"q5_0", 22.0 / 32},   {"q4_k", 144.0 / 256}, {"q4_k_m", 144.0 / 256},
                                                         {"q4_1", 20.0 / 32},   {"q4_0", 18.0 / 32},   {"q3_k", 110.0 / 256}, {"q2_k", 84.0 / 256},
                                                         {"iq4_nl", 18.0 / 32},  {"iq4_xs", 136.0 / 256}};
  for (const auto& [name, bytes] : types)
    if (precision == name) return bytes;
  throw Error(ErrorKind::invalid_argument, cat("--precision ", precision, " (f32, bf16, f16, q8_0, q6_k, q5_k_m, q5_k, q5_1, q5_0, q4_k_m, q4_k, q4_1, q4_0, iq4_nl, iq4_xs, q3_k, q2_k)"));
}

std::string gib(double b) { return cat(std::round(b / (1u << 30) * 100) / 100); }

// rlx launch -n N --dry-run --model M --tp T --pp P: the per-rank memory and the traffic of a step.
int dry_run(Args& args, long n, bool json) {
  const std::string model = args.value_or("model", "qwen3-8b");
  dist::Layout l;
  l.tp = static_cast<int>(args.int_or("tp", n));
  l.pp = static_cast<int>(args.int_or("pp", 1));
  const std::string precision = args.value_or("precision", "bf16");
  l.weight_bytes = bytes_per_param(precision);
  l.kv_bytes = l.activation_bytes = precision == "f32" ? 4 : 2;
  l.context = args.int_or("ctx", 4096);
  l.batch = args.int_or("batch", 1);
  l.prompt = args.int_or("prompt", 512);
  args.finish();
  if (static_cast<long>(l.tp) * l.pp != n) throw Error(ErrorKind::invalid_argument, cat("rlx launch --dry-run: -n ", n, " ranks but tp=", l.tp, " × pp=", l.pp, " = ", l.tp * l.pp));
  if (l.context < 1 || l.batch < 1 || l.prompt < 1) throw Error(ErrorKind::invalid_argument, "--ctx, --batch and --prompt must be positive");
  const dist::DecoderShape m = preset(model);
  const dist::Plan p = dist::plan(m, l);
  if (json) {
    std::vector<std::string> rows;
    for (const auto& r : p.ranks)
      rows.push_back(cat("{\"rank\":", r.rank, ",\"stage\":", r.stage, ",\"tp_rank\":", r.tp_rank, ",\"layers\":[", r.first_layer, ",", r.first_layer + r.layers,
                         "],\"params\":", r.params, ",\"weight_bytes\":", r.weight_bytes, ",\"kv_bytes\":", r.kv_bytes, "}"));
    auto t = [](const dist::StepTraffic& s) {
      return cat("{\"all_reduces\":", s.all_reduces, ",\"all_reduce_bytes\":", s.all_reduce_bytes, ",\"tp_wire_bytes\":", s.tp_wire_bytes, ",\"logits_gather_bytes\":",
                 s.logits_gather_bytes, ",\"pp_bytes\":", s.pp_bytes, "}");
    };
    std::printf("{\"model\":%s,\"tp\":%d,\"pp\":%d,\"precision\":\"%s\",\"ctx\":%lld,\"batch\":%lld,\"ranks\":[%s],\"decode\":%s,\"prefill\":%s}\n", json_quote(model).c_str(), l.tp, l.pp,
                precision.c_str(), static_cast<long long>(l.context), static_cast<long long>(l.batch), join(rows, ",").c_str(), t(p.decode).c_str(), t(p.prefill).c_str());
    return 0;
  }
  std::printf("%s (%lld layers, hidden %lld, %lld heads / %lld KV heads, vocab %lld) on tp=%d × pp=%d, %s weights, KV for %lld tokens × %lld sequences\n", model.c_str(),
              static_cast<long long>(m.layers), static_cast<long long>(m.hidden), static_cast<long long>(m.heads), static_cast<long long>(m.kv_heads), static_cast<long long>(m.vocab),
              l.tp, l.pp, precision.c_str(), static_cast<long long>(l.context), static_cast<long long>(l.batch));
  std::printf("%-5s %-6s %-3s %-9s %12s %12s %10s %10s\n", "rank", "stage", "tp", "layers", "params (M)", "weights GiB", "KV GiB", "total GiB");
  for (const auto& r : p.ranks)
    std::printf("%-5d %-6d %-3d %-9s %12.1f %12s %10s %10s%s\n", r.rank, r.stage, r.tp_rank, cat(r.first_layer, "-", r.first_layer + r.layers - 1).c_str(), r.params / 1e6,
                gib(r.weight_bytes).c_str(), gib(r.kv_bytes).c_str(), gib(r.total()).c_str(), r.embedding && r.head ? " (embedding, head)" : r.embedding ? " (embedding)" : r.head ? " (head)" : "");
  auto line = [&](const char* what, const dist::StepTraffic& s) {
    std::printf("%-26s %4lld all-reduces of %10s KiB (%s MiB sent per TP rank), logits all-gather %s KiB, %s KiB per pipeline hop\n", what,
                static_cast<long long>(s.all_reduces), cat(std::round(s.all_reduce_bytes / 1024 * 10) / 10).c_str(), cat(std::round(s.tp_wire_bytes / (1 << 20) * 100) / 100).c_str(),
                cat(std::round(s.logits_gather_bytes / 1024)).c_str(), cat(std::round(s.pp_bytes / 1024 * 10) / 10).c_str());
  };
  line("decode step (1 token each):", p.decode);
  line(cat("prefill step (", l.prompt, " tokens):").c_str(), p.prefill);
  for (const auto& note : p.notes) std::printf("note: %s\n", note.c_str());
  return 0;
}

}  // namespace

int cmd_launch(Args& args) {
  std::optional<std::string> n_text = args.value("n");
  const bool dry = args.flag("dry-run");
  const std::string backend = args.value_or("backend", "gloo");
  const double timeout = args.float_or("timeout", 60);
  const bool json = args.flag("json");
  // -n N (Args reads --keys: a single-dash -n is taken when it comes first)
  std::vector<std::string> pos = args.positionals();
  if (!n_text && pos.size() >= 2 && pos[0] == "-n") n_text = pos[1], pos.erase(pos.begin(), pos.begin() + 2);
  if (!n_text) throw Error(ErrorKind::invalid_argument, "rlx launch needs -n N (the number of ranks)");
  char* end = nullptr;
  const long n = std::strtol(n_text->c_str(), &end, 10), most = dry ? 4096 : 256;  // planned ranks may be many more than local ones
  if (*end || n < 1 || n > most) throw Error(ErrorKind::invalid_argument, cat("rlx launch: -n ", *n_text, " is not a rank count in 1…", most));
  if (dry) return dry_run(args, n, json);
  if (!pos.empty()) throw Error(ErrorKind::invalid_argument, cat("rlx launch: unexpected '", pos[0], "' (the command goes after --)"));
  std::vector<std::string> cmd = args.after_separator();
  if (cmd.empty()) throw Error(ErrorKind::invalid_argument, "rlx launch needs a command after --, e.g. rlx launch -n 2 -- rlx bench collectives");
  if (!(timeout > 0)) throw Error(ErrorKind::invalid_argument, "rlx launch: --timeout must be a positive number of seconds");
  if (cmd[0] == "rlx") cmd[0] = self_exe();  // this very binary, wherever it is
  const std::vector<std::string> built = dist::backends_built();
  if (std::find(built.begin(), built.end(), backend) == built.end())
    throw Error(ErrorKind::unsupported, cat("rlx launch: the ", backend, " backend is not built into this rlx (built: ", built.empty() ? "none" : join(built), ")"));
  const auto start = std::chrono::steady_clock::now();
  // The cores shared out: N ranks each spinning up a thread per core oversubscribe the machine
  // (on 2 cores, 2 ranks of 2 threads ran pipeline training 100× slower than 1 thread each).
  // RLX_NUM_THREADS set for launch itself (or a rank's --threads) wins.
  const std::string threads = flags().RLX_NUM_THREADS > 0 ? cat(flags().RLX_NUM_THREADS)
                                                          : cat(std::max<long>(1, static_cast<long>(std::thread::hardware_concurrency()) / n));

  std::vector<pid_t> pids;
  std::string store;
  if (backend == "mpi") {
    const std::string mpirun = find_in_path("mpirun");
    if (mpirun.empty()) throw Error(ErrorKind::unsupported, "rlx launch --backend mpi needs mpirun (apt-get install openmpi-bin)");
    std::vector<std::string> m = {mpirun, "-n", cat(n), "--oversubscribe", "-x", "RLX_DIST_BACKEND", "-x", "RLX_DIST_TIMEOUT", "-x", "RLX_NUM_THREADS"};
    if (geteuid() == 0) m.insert(m.begin() + 1, "--allow-run-as-root");
    m.insert(m.end(), cmd.begin(), cmd.end());
    pid_t pid = fork();
    if (pid < 0) throw Error(ErrorKind::io, cat("rlx launch: fork failed: ", std::strerror(errno)));
    if (pid == 0) exec_child(m, {{"RLX_DIST_BACKEND", "mpi"}, {"RLX_DIST_TIMEOUT", cat(static_cast<int64_t>(std::ceil(timeout)))}, {"RLX_NUM_THREADS", threads}});
    pids.push_back(pid);
  } else {
    char dir[] = "/tmp/rlx-launch-XXXXXX";
    if (!mkdtemp(dir)) throw Error(ErrorKind::io, cat("rlx launch: cannot make a rendezvous directory: ", std::strerror(errno)));
    store = dir;
    const std::string job = cat("job", getpid());
    for (long r = 0; r < n; ++r) {
      pid_t pid = fork();
      if (pid < 0) {
        for (pid_t p : pids) kill(p, SIGKILL);
        throw Error(ErrorKind::io, cat("rlx launch: fork failed: ", std::strerror(errno)));
      }
      if (pid == 0)
        exec_child(cmd, {{"RLX_RANK", cat(r)}, {"RLX_WORLD_SIZE", cat(n)}, {"RLX_DIST_BACKEND", backend}, {"RLX_DIST_STORE", store}, {"RLX_DIST_JOB", job},
                         {"RLX_DIST_TIMEOUT", cat(static_cast<int64_t>(std::ceil(timeout)))}, {"RLX_NUM_THREADS", threads}});
      pids.push_back(pid);
    }
  }

  // Wait for every rank; the first failure stops the rest.
  int failed = -1, failed_status = 0, live = static_cast<int>(pids.size());
  std::vector<bool> done(pids.size(), false);
  std::chrono::steady_clock::time_point kill_at{};
  bool terminated = false;
  while (live > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (size_t i = 0; i < pids.size(); ++i)
        if (pids[i] == pid && !done[i]) {
          done[i] = true;
          --live;
          const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
          if (!ok && failed < 0 && !terminated) {
            failed = static_cast<int>(i);
            failed_status = status;
            for (size_t j = 0; j < pids.size(); ++j)
              if (!done[j]) kill(pids[j], SIGTERM);
            terminated = true;
            kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(5);
          }
        }
      continue;
    }
    if (terminated && std::chrono::steady_clock::now() > kill_at)
      for (size_t j = 0; j < pids.size(); ++j)
        if (!done[j]) kill(pids[j], SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!store.empty()) {
    std::error_code ec;
    fs::remove_all(store, ec);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (json)
    std::printf("{\"ranks\":%ld,\"backend\":\"%s\",\"ok\":%s,\"failed_rank\":%d,\"seconds\":%.3f}\n", n, backend.c_str(), failed < 0 ? "true" : "false",
                backend == "mpi" ? (failed < 0 ? -1 : 0) : failed, seconds);
  if (failed < 0) return 0;
  if (backend == "mpi")
    std::fprintf(stderr, "rlx launch: mpirun %s (a rank failed; MPI stopped the job)\n", describe(failed_status).c_str());
  else
    std::fprintf(stderr, "rlx launch: rank %d of %ld %s; stopped the other ranks\n", failed, n, describe(failed_status).c_str());
  return WIFEXITED(failed_status) && WEXITSTATUS(failed_status) != 0 ? WEXITSTATUS(failed_status) : 1;
}

}  // namespace rlx::cli
