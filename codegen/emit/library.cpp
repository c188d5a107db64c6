// Library linking. The weights are embedded in the library (one self-contained artifact: no weights
// file beside it to lose or mismatch) as an ELF object onnxc writes itself (elf_object.h), streamed
// straight into the static library (archive.h): no C compiler parses a multi-megabyte initializer,
// and no assembler or `ar` copies the blob once more.
#include "codegen/emit/library.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "codegen/emit/archive.h"
#include "codegen/emit/elf_object.h"
#include "codegen/version.h"
#include "ir/error.h"

extern char** environ;

namespace onnxc::codegen {

namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& p, const void* data, size_t n) {
  std::ofstream f(p, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  user_check(f.good()) << "cannot write " << p.string();
}
void write_text(const fs::path& p, const std::string& s) { write_file(p, s.data(), s.size()); }

std::string read_binary(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::string s(std::istreambuf_iterator<char>(f), {});
  user_check(f.good() || f.eof()) << "cannot read " << p.string();
  return s;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

void run_command(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  user_check(rc == 0) << "cannot run '" << argv[0] << "' (" << cmd << ")";
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    internal_error << "command failed: " << cmd << "\n" << read_text(log_path);
}

LibraryFiles build_library(const PlanDescription& plan, const std::vector<std::string>& objects,
                           const std::string& out_dir, const std::string& work_dir, const Toolchain& tools) {
  const std::string& n = plan.name;
  fs::path out(out_dir), work(work_dir);
  fs::create_directories(out);
  fs::create_directories(work / "onnxc");
  write_text(work / "onnxc" / "model_abi.h", kModelAbiHeader);
  LibraryFiles r;
  r.plan_c_path = (out / (n + "_plan.c")).string();
  write_text(r.plan_c_path, generate_plan_c(plan));
  std::string log = (work / "cc.log").string();
  const std::string& cc = tools.cc;

  std::vector<std::string> parts = {(work / "plan.o").string()};
  run_command({cc, "-c", "-O1", "-fPIC", "-std=c11", "-I", work.string(), r.plan_c_path, "-o", parts[0]}, log);
  parts.insert(parts.end(), objects.begin(), objects.end());

  // One relocatable object of the plan and the kernels with only the model's entry points global.
  // Its COMDAT groups (the Halide runtime's vtables and inline functions) are dissolved first: two
  // models' copies of a group would otherwise be merged by the linker while the symbols into them
  // are local to each model. The weights never pass through those tools: they are streamed once
  // into the archive as their own object (elf_object.h), and the shared library is linked from
  // the archive.
  const std::string weights_sym = "onnxc_weights_" + n;
  std::string model_o = (work / (n + ".o")).string();
  std::vector<std::string> ld = {tools.ld, "-r", "-o", model_o};
  ld.insert(ld.end(), parts.begin(), parts.end());
  run_command(ld, log);
  run_command({tools.objcopy, "--remove-section=.group", "--keep-global-symbol=onnxc_model_" + n,
               "--keep-global-symbol=onnxc_model_entry", "--keep-global-symbol=" + weights_sym, model_o},
              log);
  const std::string model_bytes = read_binary(model_o);
  std::vector<ArchiveMember> members;
  members.push_back({"model.o", elf_defined_globals(model_bytes), model_bytes.size(),
                     [&](std::ostream& o) { o.write(model_bytes.data(), static_cast<std::streamsize>(model_bytes.size())); }});
  const WeightsObject weights(plan.weights, weights_sym, tools.large_sections ? uint64_t(1) << 30 : UINT64_MAX,
                              tools.elf_machine);
  if (!plan.weights.empty())
    members.push_back({"weights.o", {weights_sym}, weights.size(), [&](std::ostream& o) { weights.write(o); }});

  r.a_path = (out / ("lib" + n + ".a")).string();
  write_archive(r.a_path, members);
  r.so_path = (out / ("lib" + n + ".so")).string();
  run_command({cc, "-shared", "-o", r.so_path, "-Wl,--whole-archive", r.a_path, "-Wl,--no-whole-archive", "-ldl",
               "-lpthread", "-lm"},
              log);
  r.header_path = (out / (n + ".h")).string();
  write_text(r.header_path, generate_header(n));
  r.library_bytes = fs::file_size(r.so_path);
  return r;
}

}  // namespace onnxc::codegen
