// The `onnxc` driver: the subcommand table, `--help`/`--version`, and the one place where errors
// become exit codes (usage and user errors 2, internal errors 3), so no subcommand can crash out.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "ir/error.h"
#include "tools/args.h"
#include "tools/cleanup.h"
#include "tools/command.h"

#ifndef ONNXC_VERSION
#define ONNXC_VERSION "0.0.0"
#endif

namespace onnxc::tools {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"compile", "compile a model to a library (libNAME.so, libNAME.a, NAME.h)", compile_main},
      {"run", "run a model or compiled library on input tensors, write the outputs", run_main},
      {"compare", "run a model on ONNX test data and compare with the reference outputs", compare_main},
      {"bench", "time a model or compiled library on random inputs", bench_main},
      {"inspect", "describe a model: inputs, outputs, ops, parameters; dump the IR", inspect_main},
      {"optimize", "run graph passes and write the processed model back as ONNX", optimize_main},
      {"generate", "generate tokens with a decoder language model (KV cache kept in place)", generate_main},
      {"test-suite", "run ONNX backend test folders through the compiler", test_suite_main},
  };
  return table;
}

namespace {

void print_main_help() {
  std::printf(
      "Usage: onnxc COMMAND [options] [args]\n"
      "       onnxc COMMAND --help\n\n"
      "onnxc compiles ONNX models into native libraries (Halide/LLVM kernels plus a plan) that a C or\n"
      "C++ program links with libonnxc_runtime. Dynamic dimensions stay symbolic: one library serves\n"
      "every batch size and sequence length.\n\n"
      "Commands:\n");
  for (const Command& c : commands()) std::printf("  %-12s %s\n", c.name, c.summary);
  std::printf(
      "\nOptions:\n"
      "  -h, --help     show this help and exit\n"
      "  --version      print the version and exit\n\n"
      "Exit status: 0 success, 1 outputs differ from the reference (compare, test-suite),\n"
      "2 usage or model error, 3 internal compiler error.\n\n"
      "Environment: ONNXC_CACHE_DIR (kernel cache; default ~/.cache/onnxc), HL_NUM_THREADS.\n"
      "Example: onnxc compile model.onnx -o out/ && onnxc compare out/libmodel.so test_data_set_0/\n");
}

// Error messages are one line: a multi-line message is joined with "; ".
std::string one_line(std::string msg) {
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  std::string out;
  for (char c : msg) {
    if (c == '\n') {
      out += "; ";
    } else {
      out += c;
    }
  }
  return out;
}

int run_command(const Command& cmd, const std::vector<std::string>& args) {
  const std::string who = std::string("onnxc ") + cmd.name;
  try {
    return cmd.run(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\nTry '%s --help' for more information.\n", who.c_str(),
                 one_line(e.what()).c_str(), who.c_str());
    return kExitUserError;
  } catch (const UserError& e) {
    std::fprintf(stderr, "%s: error: %s\n", who.c_str(), one_line(e.what()).c_str());
    return kExitUserError;
  } catch (const InternalError& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", who.c_str(), one_line(e.what()).c_str());
    return kExitInternalError;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", who.c_str());
    return kExitUserError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", who.c_str(), one_line(e.what()).c_str());
    return kExitInternalError;
  } catch (...) {
    std::fprintf(stderr, "%s: internal error: unknown exception\n", who.c_str());
    return kExitInternalError;
  }
}

const Command* find_command(const std::string& name) {
  for (const Command& c : commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace
}  // namespace onnxc::tools

int main(int argc, char** argv) {
  using namespace onnxc::tools;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_main_help();
    return kExitUserError;
  }
  const std::string& first = args[0];
  if (first == "-h" || first == "--help") {
    print_main_help();
    return kExitOk;
  }
  if (first == "--version" || first == "-V") {
    std::printf("onnxc %s\n", ONNXC_VERSION);
    return kExitOk;
  }
  if (first == "help") {
    if (args.size() == 1) {
      print_main_help();
      return kExitOk;
    }
    if (const Command* c = find_command(args[1])) return run_command(*c, {"--help"});
    std::fprintf(stderr, "onnxc: error: unknown command '%s'\nTry 'onnxc --help' for the list of commands.\n",
                 args[1].c_str());
    return kExitUserError;
  }
  const Command* cmd = find_command(first);
  if (cmd) install_interrupt_cleanup();
  if (!cmd) {
    std::fprintf(stderr, "onnxc: error: %s '%s'\nTry 'onnxc --help' for the list of commands.\n",
                 first[0] == '-' ? "unknown option" : "unknown command", first.c_str());
    return kExitUserError;
  }
  return run_command(*cmd, std::vector<std::string>(args.begin() + 1, args.end()));
}
