// Library linking. The weights are embedded with an assembler `.incbin` of the blob file rather than
// as a C array: one self-contained artifact (no weights file beside the library to lose or mismatch),
// and the assembler copies the bytes in a fraction of the time a C compiler takes to parse a
// multi-megabyte initializer.
#include "codegen/emit/library.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

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

// The blob file, streamed piece by piece from the weights' own storage, zeros between them.
void write_blob(const fs::path& p, const WeightsBlob& blob) {
  std::ofstream f(p, std::ios::binary);
  static const char zeros[64] = {};
  uint64_t at = 0;
  for (const WeightsBlob::Piece& piece : blob.pieces) {
    internal_check(piece.offset >= at && piece.offset - at < 64) << "weights blob pieces out of order";
    f.write(zeros, static_cast<std::streamsize>(piece.offset - at));
    f.write(static_cast<const char*>(piece.tensor.raw()), static_cast<std::streamsize>(piece.tensor.nbytes()));
    at = piece.offset + piece.tensor.nbytes();
  }
  internal_check(at == blob.size) << "weights blob size " << blob.size << " but pieces end at " << at;
  f.close();
  user_check(f.good()) << "cannot write " << p.string() << " (" << blob.size << " bytes; is the disk full?)";
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string c_compiler() {
  const char* cc = std::getenv("CC");
  return cc && *cc ? cc : "cc";
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
                           const std::string& out_dir, const std::string& work_dir) {
  const std::string& n = plan.name;
  fs::path out(out_dir), work(work_dir);
  fs::create_directories(out);
  fs::create_directories(work / "onnxc");
  write_text(work / "onnxc" / "model_abi.h", kModelAbiHeader);
  LibraryFiles r;
  r.plan_c_path = (out / (n + "_plan.c")).string();
  write_text(r.plan_c_path, generate_plan_c(plan));
  std::string log = (work / "cc.log").string();
  std::string cc = c_compiler();

  std::vector<std::string> parts = {(work / "plan.o").string()};
  run_command({cc, "-c", "-O1", "-fPIC", "-std=c11", "-I", work.string(), r.plan_c_path, "-o", parts[0]}, log);
  if (!plan.weights.empty()) {
    write_blob(work / "weights.bin", plan.weights);
    std::string sym = "onnxc_weights_" + n;
    // A blob beyond 1 GiB goes to a large section (SHF_X86_64_LARGE), which the linker places after
    // .bss: code and its small data then stay within the ±2 GiB of 32-bit PC-relative addressing,
    // and the blob is only reached through the plan's 64-bit pointer.
    const bool large = plan.weights.size > (uint64_t(1) << 30);
    const std::string section = large ? ".lrodata.onnxc_weights,\"al\"" : ".rodata.onnxc_weights,\"a\"";
    write_text(work / "weights.S",
               "/* The weights blob of model '" + n + "', embedded by onnxc. */\n"
               "  .section " + section + ",@progbits\n  .balign 64\n  .globl " + sym +
               "\n  .type " + sym + ", @object\n" + sym + ":\n  .incbin \"" + (work / "weights.bin").string() +
               "\"\n  .size " + sym + ", . - " + sym + "\n  .section .note.GNU-stack,\"\",@progbits\n");
    parts.push_back((work / "weights.o").string());
    run_command({cc, "-c", (work / "weights.S").string(), "-o", parts.back()}, log);
  }
  parts.insert(parts.end(), objects.begin(), objects.end());

  // One relocatable object with only the model's entry points global. Its COMDAT groups (the Halide
  // runtime's vtables and inline functions) are dissolved first: two models' copies of a group would
  // otherwise be merged by the linker while the symbols into them are local to each model.
  std::string all = (work / (n + ".o")).string();
  std::vector<std::string> ld = {"ld", "-r", "-o", all};
  ld.insert(ld.end(), parts.begin(), parts.end());
  run_command(ld, log);
  run_command({"objcopy", "--remove-section=.group", "--keep-global-symbol=onnxc_model_" + n,
               "--keep-global-symbol=onnxc_model_entry", all}, log);

  r.a_path = (out / ("lib" + n + ".a")).string();
  fs::remove(r.a_path);
  run_command({"ar", "rcs", r.a_path, all}, log);
  r.so_path = (out / ("lib" + n + ".so")).string();
  run_command({cc, "-shared", "-o", r.so_path, all, "-ldl", "-lpthread", "-lm"}, log);
  r.header_path = (out / (n + ".h")).string();
  write_text(r.header_path, generate_header(n));
  r.library_bytes = fs::file_size(r.so_path);
  return r;
}

}  // namespace onnxc::codegen
