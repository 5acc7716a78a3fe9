// One thread that runs a run's collectives in order while its kernels go on (DESIGN §7: the
// communication thread of the cpu executor). submit() returns a ticket; wait(t) returns once
// every task up to t has finished and rethrows the first failure among them.
#pragma once
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace rlx::runtime {

class CommThread {
 public:
  CommThread();
  ~CommThread();  // finishes the queue first
  CommThread(const CommThread&) = delete;
  CommThread& operator=(const CommThread&) = delete;

  int64_t submit(std::function<void()> task);
  void wait(int64_t ticket);
  void wait_all() { wait(submitted_); }

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  int64_t submitted_ = 0, finished_ = 0;
  std::exception_ptr failure_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace rlx::runtime
