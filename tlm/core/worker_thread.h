// Helper threads of the models that never run an application's signal handlers. Pure C++
// (POSIX), no SystemC.
#pragma once
#include <pthread.h>
#include <signal.h>

#include <string>
#include <thread>
#include <utility>

namespace cdma {

/// Starts `f` on a new std::thread with the asynchronous termination signals (SIGINT, SIGTERM,
/// SIGHUP, SIGQUIT) blocked in it: they are blocked in the calling thread while the thread is
/// created (a new thread inherits the creator's mask) and restored right after. A process-wide
/// signal is then delivered to one of the application's own threads, so a handler such as
/// cdma-vp's interrupt cleanup never runs on a model's worker (the spill store's I/O thread,
/// the activation producer) while the main thread is between creating a file and registering
/// it. Synchronous signals (SIGSEGV, SIGBUS, ...) are not touched.
/// `name` (at most 15 characters, Linux's limit; longer names are cut) names the thread for
/// `top -H`, `ps -L`, perf and gdb (pthread_setname_np); empty: the process name.
template <typename F>
std::thread start_worker_thread(F&& f, const std::string& name = {}) {
  sigset_t block, old;
  sigemptyset(&block);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  struct restore {
    sigset_t* mask;
    ~restore() { pthread_sigmask(SIG_SETMASK, mask, nullptr); }
  } r{&old};
  std::thread t(std::forward<F>(f));
  if (!name.empty()) pthread_setname_np(t.native_handle(), name.substr(0, 15).c_str());
  return t;
}

}  // namespace cdma
