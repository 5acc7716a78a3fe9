#include "runtime/comm_thread.h"

namespace rlx::runtime {

CommThread::CommThread() : thread_([this] { loop(); }) {}

CommThread::~CommThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

int64_t CommThread::submit(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(task));
  cv_.notify_all();
  return ++submitted_;
}

void CommThread::wait(int64_t ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return finished_ >= ticket; });
  if (failure_) {
    std::exception_ptr f = failure_;
    failure_ = nullptr;
    std::rethrow_exception(f);
  }
}

void CommThread::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    std::exception_ptr err;
    try {
      if (!failure_) task();  // after a failure the rest are skipped (their peers are gone too)
    } catch (...) {
      err = std::current_exception();
    }
    lock.lock();
    if (err && !failure_) failure_ = err;
    ++finished_;
    cv_.notify_all();
  }
}

}  // namespace rlx::runtime
