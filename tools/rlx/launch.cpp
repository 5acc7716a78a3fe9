// rlx launch -n N [--backend gloo|mpi] [--timeout S] -- COMMAND …: N local ranks of a command.
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
#include <cstring>
#include <filesystem>
#include <thread>

#include "commands.h"
#include "dist/communicator.h"
#include "rlx/error.h"
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

}  // namespace

int cmd_launch(Args& args) {
  std::optional<std::string> n_text = args.value("n");
  const std::string backend = args.value_or("backend", "gloo");
  const double timeout = args.float_or("timeout", 60);
  const bool json = args.flag("json");
  std::vector<std::string> pos = args.positionals();
  if (!n_text && pos.size() >= 2 && pos[0] == "-n") n_text = pos[1], pos.erase(pos.begin(), pos.begin() + 2);
  if (!pos.empty()) throw Error(ErrorKind::invalid_argument, cat("rlx launch: unexpected '", pos[0], "' (the command goes after --)"));
  std::vector<std::string> cmd = args.after_separator();
  if (!n_text) throw Error(ErrorKind::invalid_argument, "rlx launch needs -n N (the number of ranks)");
  char* end = nullptr;
  const long n = std::strtol(n_text->c_str(), &end, 10);
  if (*end || n < 1 || n > 256) throw Error(ErrorKind::invalid_argument, cat("rlx launch: -n ", *n_text, " is not a rank count in 1…256"));
  if (cmd.empty()) throw Error(ErrorKind::invalid_argument, "rlx launch needs a command after --, e.g. rlx launch -n 2 -- rlx bench collectives");
  if (!(timeout > 0)) throw Error(ErrorKind::invalid_argument, "rlx launch: --timeout must be a positive number of seconds");
  if (cmd[0] == "rlx") cmd[0] = self_exe();  // this very binary, wherever it is
  const std::vector<std::string> built = dist::backends_built();
  if (std::find(built.begin(), built.end(), backend) == built.end())
    throw Error(ErrorKind::unsupported, cat("rlx launch: the ", backend, " backend is not built into this rlx (built: ", built.empty() ? "none" : join(built), ")"));
  const auto start = std::chrono::steady_clock::now();

  std::vector<pid_t> pids;
  std::string store;
  if (backend == "mpi") {
    const std::string mpirun = find_in_path("mpirun");
    if (mpirun.empty()) throw Error(ErrorKind::unsupported, "rlx launch --backend mpi needs mpirun (apt-get install openmpi-bin)");
    std::vector<std::string> m = {mpirun, "-n", cat(n), "--oversubscribe", "-x", "RLX_DIST_BACKEND", "-x", "RLX_DIST_TIMEOUT"};
    if (geteuid() == 0) m.insert(m.begin() + 1, "--allow-run-as-root");
    m.insert(m.end(), cmd.begin(), cmd.end());
    pid_t pid = fork();
    if (pid < 0) throw Error(ErrorKind::io, cat("rlx launch: fork failed: ", std::strerror(errno)));
    if (pid == 0) exec_child(m, {{"RLX_DIST_BACKEND", "mpi"}, {"RLX_DIST_TIMEOUT", cat(timeout)}});
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
                         {"RLX_DIST_TIMEOUT", cat(timeout)}});
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
