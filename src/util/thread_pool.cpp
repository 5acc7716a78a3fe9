#include "util/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "util/flags.h"

namespace rlx {

namespace {

thread_local bool t_in_pool = false;

class Pool {
 public:
  static Pool& get() {
    static Pool p;
    return p;
  }

  int threads() const { return threads_.load(std::memory_order_relaxed); }
  void resize(int n) {
    std::lock_guard<std::mutex> lock(run_mu_);
    stop_workers();
    threads_ = std::max(1, n);
    start_workers();
  }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    int nt = threads();
    int64_t chunks = std::min<int64_t>({nt, grain > 0 ? (n + grain - 1) / grain : n, 0xffff});
    std::unique_lock<std::mutex> lock(run_mu_, std::try_to_lock);
    if (chunks <= 1 || t_in_pool || !lock.owns_lock()) {  // small, nested or concurrent: inline
      if (n > 0) fn(0, n);
      return;
    }
    fn_ = &fn;
    n_ = n;
    pending_.store(static_cast<int>(chunks - 1), std::memory_order_relaxed);
    error_ = nullptr;
    // Publishes the job: chunk 0 is the caller's, the others go to whoever claims them first.
    uint64_t gen = generation_.load(std::memory_order_relaxed) + 1;
    work_.store(pack(gen, chunks, 1), std::memory_order_release);
    generation_.store(gen, std::memory_order_release);
    generation_.notify_all();
    run_chunk(0, chunks);
    int64_t c;
    while ((c = claim()) >= 0) {  // help with chunks nobody took yet
      run_chunk(c, chunks);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
    int spins = 0;
    for (int p = pending_.load(std::memory_order_acquire); p > 0; p = pending_.load(std::memory_order_acquire)) {
      if (++spins < 4000) cpu_relax();
      else pending_.wait(p, std::memory_order_acquire);
    }
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  Pool() {
    int64_t n = flags().RLX_NUM_THREADS;
    threads_ = n > 0 ? static_cast<int>(n) : std::max(1u, std::thread::hardware_concurrency());
    start_workers();
  }
  ~Pool() { stop_workers(); }

  static void cpu_relax() {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }

  // The job word: generation (32 bits) | chunk count (16) | next unclaimed chunk (16). A chunk is
  // claimed by one compare-exchange of the whole word, so a worker that wakes late, or loops back
  // after the job it served has ended, can never take a chunk of another job by its index nor read
  // a job's fields before the caller has published them (the claim acquires the publishing store).
  static uint64_t pack(uint64_t gen, int64_t chunks, int64_t next) {
    return (gen << 32) | (static_cast<uint64_t>(chunks) << 16) | static_cast<uint64_t>(next);
  }
  // The index of a chunk this thread now owns, with its job's chunk count in *chunks; -1 when the
  // published job has no chunk left.
  int64_t claim(int64_t* chunks = nullptr) {
    uint64_t w = work_.load(std::memory_order_acquire);
    while (true) {
      int64_t count = static_cast<int64_t>((w >> 16) & 0xffff), next = static_cast<int64_t>(w & 0xffff);
      if (next >= count) return -1;
      if (work_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        if (chunks) *chunks = count;
        return next;
      }
    }
  }

  void run_chunk(int64_t c, int64_t chunks) {
    int64_t per = (n_ + chunks - 1) / chunks;
    int64_t lo = c * per, hi = std::min(n_, lo + per);
    if (lo >= hi) return;
    try {
      (*fn_)(lo, hi);
    } catch (...) {
      std::lock_guard<std::mutex> lock(err_mu_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void worker() {
    t_in_pool = true;
    uint64_t seen = generation_.load(std::memory_order_acquire);
    while (true) {
      // Spin a little (back-to-back kernels), then sleep until the next job.
      int spins = 0;
      uint64_t g;
      while ((g = generation_.load(std::memory_order_acquire)) == seen) {
        if (stop_.load(std::memory_order_relaxed)) return;
        if (++spins < 4000) cpu_relax();
        else generation_.wait(seen, std::memory_order_acquire);
      }
      seen = g;
      if (stop_.load(std::memory_order_relaxed)) return;
      int64_t c, chunks;
      while ((c = claim(&chunks)) >= 0) {
        run_chunk(c, chunks);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_all();
      }
    }
  }

  void start_workers() {
    stop_ = false;
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { worker(); });
  }
  void stop_workers() {
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  std::atomic<int> threads_{1};
  std::vector<std::thread> workers_;
  std::mutex run_mu_, err_mu_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> work_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  std::exception_ptr error_;
};

}  // namespace

int num_threads() { return Pool::get().threads(); }

void set_num_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (n != Pool::get().threads()) Pool::get().resize(n);
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) { Pool::get().run(n, grain, fn); }

}  // namespace rlx
