// ASan preset only (linked into every executable by cmake/asan-systemc-fibers.cmake, which
// CMakePresets.json's "asan" preset loads through CMAKE_PROJECT_INCLUDE; never in the default
// build).
//
// Why: Debian's SystemC 2.3.4 runs SC_THREADs on QuickThreads coroutine stacks and tells
// AddressSanitizer about stack switches only half-way:
//   * sc_cor_pkg_qt::yield() calls __sanitizer_start_switch_fiber(nullptr, next->m_stack,
//     next->m_stack_size), but the main coroutine has m_stack == nullptr and size 0, so after
//     every switch back to sc_main / the test body ASan believes the current stack is [0, 0);
//   * sc_cor_pkg_qt::abort() (the switch made when an SC_THREAD's function returns) does not
//     annotate at all, so ASan keeps the bounds of the dead thread's stack.
// With wrong bounds __asan_handle_no_return (run on every throw) refuses to clear the
// redzones of the frames the exception unwinds ("WARNING: ASan is ignoring requested
// __asan_handle_no_return ... google/sanitizers#189"); a later call at the same stack depth
// then hits those stale redzones and ASan reports a stack-buffer-overflow (or, with
// use-after-scope, stack-use-after-scope) that does not exist. Check it with
// `nm -D /usr/lib/x86_64-linux-gnu/libsystemc-2.3.4.so | grep -i -e qt_ -e switch_fiber`
// and `objdump -d` of sc_cor_pkg_qt::abort (no call to __sanitizer_start_switch_fiber).
//
// What this does: it completes SystemC's annotation, nothing else. ASan keeps checking every
// access; it only gets the true stack bounds.
//   * __sanitizer_start_switch_fiber (libsystemc's only caller is yield()): forwards to ASan,
//     substituting the main thread's real stack for the main coroutine's (nullptr, 0), and
//     remembers each coroutine stack it sees;
//   * sc_cor_qt_aborthelp (the helper QuickThreads runs on the resumed stack after abort()):
//     announces the stack it now runs on (main thread stack or a remembered coroutine stack).
// Both are exported libsystemc symbols reached through its GOT, so the executable's
// definitions take precedence; the originals are called through dlsym(RTLD_NEXT).
#if defined(__SANITIZE_ADDRESS__)

#include <dlfcn.h>
#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>

namespace {

using start_fn = void (*)(void**, const void*, std::size_t);
using finish_fn = void (*)(void*, const void**, std::size_t*);
using helper_fn = void* (*)(void*, void*, void*);

struct stack_range {
  std::uintptr_t bottom = 0;
  std::size_t size = 0;
  bool contains(std::uintptr_t p) const { return p >= bottom && p < bottom + size; }
};

start_fn real_start() {
  static const start_fn f =
      reinterpret_cast<start_fn>(dlsym(RTLD_NEXT, "__sanitizer_start_switch_fiber"));
  return f;
}
finish_fn real_finish() {
  static const finish_fn f =
      reinterpret_cast<finish_fn>(dlsym(RTLD_NEXT, "__sanitizer_finish_switch_fiber"));
  return f;
}

// The process's main thread stack (SystemC's main coroutine runs on it).
stack_range main_stack() {
  static const stack_range r = [] {
    stack_range s;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      std::size_t size = 0;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        s.bottom = reinterpret_cast<std::uintptr_t>(addr);
        s.size = size;
      }
      pthread_attr_destroy(&attr);
    }
    return s;
  }();
  return r;
}

// Coroutine stacks seen in yield(), keyed by bottom (SystemC is single-threaded).
std::map<std::uintptr_t, std::size_t>& coroutine_stacks() {
  static auto* m = new std::map<std::uintptr_t, std::size_t>();  // never destroyed: used at exit
  return *m;
}

void remember(std::uintptr_t bottom, std::size_t size) {
  auto& m = coroutine_stacks();
  // Drop stale entries overlapping this stack (a freed stack's memory reused by a new one).
  auto it = m.lower_bound(bottom);
  if (it != m.begin() && std::prev(it)->first + std::prev(it)->second > bottom) --it;
  while (it != m.end() && it->first < bottom + size) it = m.erase(it);
  m.emplace(bottom, size);
}

stack_range lookup(std::uintptr_t p) {
  const stack_range ms = main_stack();
  if (ms.contains(p)) return ms;
  const auto& m = coroutine_stacks();
  auto it = m.upper_bound(p);
  if (it != m.begin()) {
    --it;
    const stack_range r{it->first, it->second};
    if (r.contains(p)) return r;
  }
  return {};
}

}  // namespace

extern "C" {

void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, std::size_t size) {
  const start_fn start = real_start();
  if (start == nullptr) return;
  if (bottom == nullptr && size == 0) {  // SystemC's main coroutine: the main thread's stack
    const stack_range ms = main_stack();
    bottom = reinterpret_cast<const void*>(ms.bottom);
    size = ms.size;
  } else {
    remember(reinterpret_cast<std::uintptr_t>(bottom), size);
  }
  start(fake_stack_save, bottom, size);
}

// Runs on the stack of the coroutine abort() resumed; SystemC's version only returns 0.
void* sc_cor_qt_aborthelp(void* old_sp, void* old_cor, void* arg) {
  static const helper_fn real = reinterpret_cast<helper_fn>(dlsym(RTLD_NEXT, "sc_cor_qt_aborthelp"));
  void* const ret = real != nullptr ? real(old_sp, old_cor, arg) : nullptr;
  // The frame address, not a local's: with detect_stack_use_after_return locals live elsewhere.
  const stack_range r = lookup(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)));
  const start_fn start = real_start();
  const finish_fn finish = real_finish();
  if (r.size != 0 && start != nullptr && finish != nullptr) {
    start(nullptr, reinterpret_cast<const void*>(r.bottom), r.size);
    finish(nullptr, nullptr, nullptr);
  }
  return ret;
}

}  // extern "C"

#endif  // __SANITIZE_ADDRESS__
