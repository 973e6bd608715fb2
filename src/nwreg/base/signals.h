#pragma once
// Signals held off in one thread for a scope.

#include <pthread.h>

#include <csignal>
#include <initializer_list>

namespace nwreg {

/// Blocks `signals` in the calling thread (each thread has its own mask) while it lives, then
/// restores the thread's mask as it was. A process-directed signal blocked in every thread
/// waits until one unblocks it.
class SignalsBlocked {
 public:
  explicit SignalsBlocked(std::initializer_list<int> signals) {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : signals) sigaddset(&set, sig);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t old_;
};

}  // namespace nwreg
