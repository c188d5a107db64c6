// A small command-line parser shared by the onnxc subcommands: GNU-style long options (`--name V`,
// `--name=V`), short aliases (`-o V`, `-oV`), flags, repeatable options, positionals, `--` to end
// options, and a generated `--help` text. No dependencies; errors are UsageError.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace onnxc::tools {

// A malformed command line: unknown flag, missing value, bad number. The driver prints it with a
// hint to `--help` and exits 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& msg) : std::runtime_error(msg) {}
};

class ArgParser {
 public:
  // `usage` is the synopsis after "onnxc CMD" ("MODEL -o DIR [options]"); `description` is a
  // paragraph printed under it.
  ArgParser(std::string command, std::string usage, std::string description);

  // A boolean switch: --name sets *out to true.
  void flag(const std::string& name, char short_name, const std::string& help, bool* out);
  // An option taking one value; a repeated option keeps the last value.
  void option(const std::string& name, char short_name, const std::string& metavar, const std::string& help,
              std::string* out);
  void option(const std::string& name, char short_name, const std::string& metavar, const std::string& help,
              int* out);
  void option(const std::string& name, char short_name, const std::string& metavar, const std::string& help,
              double* out);
  // An option that may be given several times; every value is appended.
  void option_list(const std::string& name, char short_name, const std::string& metavar,
                   const std::string& help, std::vector<std::string>* out);
  // Positional arguments, in order. A `variadic` one takes every remaining positional and must be last.
  void positional(const std::string& metavar, const std::string& help, std::string* out, bool required = true);
  void positional_list(const std::string& metavar, const std::string& help, std::vector<std::string>* out,
                       size_t min_count = 1);
  // Extra text printed at the end of --help (examples, notes).
  void epilog(std::string text) { epilog_ = std::move(text); }

  // Parses `args` (without the program and command names). Returns false if --help was given (the
  // help text has been printed to stdout); throws UsageError on a bad command line.
  bool parse(const std::vector<std::string>& args);
  std::string help() const;
  const std::string& command() const { return command_; }

 private:
  struct Option {
    std::string name;
    char short_name;
    std::string metavar;  // empty for a flag
    std::string help;
    std::function<void(const std::string&)> set;
  };
  struct Positional {
    std::string metavar, help;
    std::string* out = nullptr;
    std::vector<std::string>* list = nullptr;
    bool required = true;
    size_t min_count = 0;
  };
  const Option* find_long(const std::string& name) const;
  const Option* find_short(char c) const;
  void add(Option o);

  std::string command_, usage_, description_, epilog_;
  std::vector<Option> options_;
  std::vector<Positional> positionals_;
};

// "1x128x64" -> {1, 128, 64}; throws UsageError naming `what` on a malformed value.
std::vector<int64_t> parse_dims(const std::string& text, const std::string& what);
// Integer/float parsing with a UsageError naming the option on failure.
int parse_int(const std::string& text, const std::string& what);
double parse_double(const std::string& text, const std::string& what);
// "a,b,,c" -> {"a","b","c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& text, char sep = ',');

}  // namespace onnxc::tools
