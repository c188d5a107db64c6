// Helpers shared by the subcommands: number formatting, TTY checks, temporary folders.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "ir/error.h"
#include "tools/cleanup.h"
#include "tools/command.h"

namespace onnxc::tools {

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  }
  return buf;
}

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

bool stdout_is_tty() { return isatty(STDOUT_FILENO) == 1; }
bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

namespace {
std::string make_temp_dir(const std::string& parent, const std::string& prefix) {
  std::string templ = parent + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  user_check(mkdtemp(buf.data()) != nullptr) << "cannot create a temporary folder in " << parent;
  return buf.data();
}
}  // namespace

TempDir::TempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  path_ = make_temp_dir(tmp && *tmp ? tmp : "/tmp", prefix);
  add_cleanup_path(path_);
}

TempDir::TempDir(const std::string& parent, const std::string& prefix) : path_(make_temp_dir(parent, prefix)) {
  add_cleanup_path(path_);
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  remove_cleanup_path(path_);
}

void TempDir::release() {
  remove_cleanup_path(path_);
  path_.clear();
}

}  // namespace onnxc::tools
