// Interrupt cleanup. The handler itself only writes the signal number to a pipe (async-signal
// safe); a watcher thread wakes on it and removes the registered folders with ordinary calls,
// then restores the default action and re-raises, so the exit status still says "killed by SIGINT".
#include "tools/cleanup.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace onnxc::tools {
namespace {

std::mutex g_mutex;
std::set<std::string>& paths() {
  static auto* p = new std::set<std::string>;  // never destroyed: the watcher may run during exit
  return *p;
}
int g_pipe[2] = {-1, -1};
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

void on_signal(int sig) {
  unsigned char b = static_cast<unsigned char>(sig);
  ssize_t r = ::write(g_pipe[1], &b, 1);
  (void)r;
}

void remove_all_registered() {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const std::string& p : paths()) {
    // Compile threads may still be writing into the folder: retry until it is really gone.
    for (int attempt = 0; attempt < 20; ++attempt) {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
      if (!std::filesystem::exists(p, ec)) break;
      ::usleep(10000);
    }
  }
}

void watch() {
  unsigned char b = 0;
  while (::read(g_pipe[0], &b, 1) < 0) {
  }
  remove_all_registered();
  std::signal(b, SIG_DFL);
  ::raise(b);
  std::_Exit(128 + b);
}

// The process's private temporary folder, removed at normal exit too.
struct ProcessTmp {
  std::string path;
  ~ProcessTmp() {
    if (path.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
ProcessTmp g_tmp;

}  // namespace

void add_cleanup_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  paths().insert(path);
}

void remove_cleanup_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  paths().erase(path);
}

void install_interrupt_cleanup() {
  if (::pipe2(g_pipe, O_CLOEXEC) != 0) return;  // no cleanup on signals; nothing else changes
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/onnxc-XXXXXX";
  if (::mkdtemp(templ.data())) {
    g_tmp.path = templ;
    ::setenv("TMPDIR", templ.c_str(), 1);
    add_cleanup_path(templ);
  }
  std::thread(watch).detach();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : kSignals) {
    struct sigaction old {};
    // A signal the caller chose to ignore (nohup, a shell's background job) stays ignored.
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace onnxc::tools
