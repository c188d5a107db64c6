// The subcommand table's entries and the small helpers the subcommands share (formatting, TTY
// detection, temporary folders). Each subcommand lives in its own file and is declared here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onnxc::tools {

// Exit codes of every subcommand.
enum ExitCode { kExitOk = 0, kExitMismatch = 1, kExitUserError = 2, kExitInternalError = 3 };

// A subcommand: its arguments exclude "onnxc" and the command name. Returns the exit code; throws
// UsageError, UserError or InternalError, which the driver prints as one line.
using CommandFn = int (*)(const std::vector<std::string>& args);

struct Command {
  const char* name;
  const char* summary;  // one line, for `onnxc --help`
  CommandFn run;
};

int inspect_main(const std::vector<std::string>& args);
int compile_main(const std::vector<std::string>& args);
int run_main(const std::vector<std::string>& args);
int compare_main(const std::vector<std::string>& args);
int bench_main(const std::vector<std::string>& args);
int test_suite_main(const std::vector<std::string>& args);
int optimize_main(const std::vector<std::string>& args);
int generate_main(const std::vector<std::string>& args);

// The table, in `--help` order.
const std::vector<Command>& commands();

// "1.5 MiB", "312 B"
std::string human_bytes(uint64_t bytes);
// "1,234,567"
std::string with_commas(int64_t n);
bool stdout_is_tty();
bool stderr_is_tty();

// A fresh folder under $TMPDIR (or /tmp), removed with its contents when the object dies.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "onnxc");
  // Makes the folder inside `parent` instead (same filesystem, so its files can be renamed out).
  TempDir(const std::string& parent, const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Keeps the folder (e.g. for --keep-temps); it is no longer removed.
  void release();

 private:
  std::string path_;
};

}  // namespace onnxc::tools
