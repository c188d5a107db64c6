// The shared command-line parser: matching, value conversion and the generated help text.
#include "tools/args.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace onnxc::tools {

ArgParser::ArgParser(std::string command, std::string usage, std::string description)
    : command_(std::move(command)), usage_(std::move(usage)), description_(std::move(description)) {}

void ArgParser::add(Option o) {
  for (const Option& e : options_) {
    if (e.name == o.name || (o.short_name && e.short_name == o.short_name)) {
      throw std::logic_error("duplicate option --" + o.name);
    }
  }
  options_.push_back(std::move(o));
}

void ArgParser::flag(const std::string& name, char short_name, const std::string& help, bool* out) {
  add({name, short_name, "", help, [out](const std::string&) { *out = true; }});
}

void ArgParser::option(const std::string& name, char short_name, const std::string& metavar,
                       const std::string& help, std::string* out) {
  add({name, short_name, metavar, help, [out](const std::string& v) { *out = v; }});
}

void ArgParser::option(const std::string& name, char short_name, const std::string& metavar,
                       const std::string& help, int* out) {
  add({name, short_name, metavar, help, [out, name](const std::string& v) { *out = parse_int(v, "--" + name); }});
}

void ArgParser::option(const std::string& name, char short_name, const std::string& metavar,
                       const std::string& help, double* out) {
  add({name, short_name, metavar, help,
       [out, name](const std::string& v) { *out = parse_double(v, "--" + name); }});
}

void ArgParser::option_list(const std::string& name, char short_name, const std::string& metavar,
                            const std::string& help, std::vector<std::string>* out) {
  add({name, short_name, metavar, help, [out](const std::string& v) { out->push_back(v); }});
}

void ArgParser::positional(const std::string& metavar, const std::string& help, std::string* out, bool required) {
  Positional p;
  p.metavar = metavar;
  p.help = help;
  p.out = out;
  p.required = required;
  positionals_.push_back(std::move(p));
}

void ArgParser::positional_list(const std::string& metavar, const std::string& help,
                                std::vector<std::string>* out, size_t min_count) {
  Positional p;
  p.metavar = metavar;
  p.help = help;
  p.list = out;
  p.required = min_count > 0;
  p.min_count = min_count;
  positionals_.push_back(std::move(p));
}

const ArgParser::Option* ArgParser::find_long(const std::string& name) const {
  for (const Option& o : options_) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

const ArgParser::Option* ArgParser::find_short(char c) const {
  for (const Option& o : options_) {
    if (o.short_name == c) return &o;
  }
  return nullptr;
}

bool ArgParser::parse(const std::vector<std::string>& args) {
  std::vector<std::string> positional_args;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a == "-" || a.size() < 2 || a[0] != '-') {
      positional_args.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      std::fputs(help().c_str(), stdout);
      return false;
    }
    const Option* opt = nullptr;
    std::string value;
    bool has_value = false;
    if (a[1] == '-') {
      std::string name = a.substr(2);
      size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      opt = find_long(name);
      if (!opt) throw UsageError("unknown option '--" + name + "'");
      if (opt->metavar.empty() && has_value) throw UsageError("option '--" + name + "' takes no value");
    } else {
      opt = find_short(a[1]);
      if (!opt) throw UsageError(std::string("unknown option '-") + a[1] + "'");
      if (a.size() > 2) {
        if (opt->metavar.empty()) throw UsageError("option '-" + std::string(1, a[1]) + "' takes no value");
        value = a.substr(2);
        has_value = true;
      }
    }
    if (!opt->metavar.empty() && !has_value) {
      if (i + 1 >= args.size()) throw UsageError("option '--" + opt->name + "' needs a value (" + opt->metavar + ")");
      value = args[++i];
    }
    opt->set(value);
  }

  size_t next = 0;
  for (const Positional& p : positionals_) {
    if (p.list) {
      while (next < positional_args.size()) p.list->push_back(positional_args[next++]);
      if (p.list->size() < p.min_count) throw UsageError("missing " + p.metavar);
    } else if (next < positional_args.size()) {
      *p.out = positional_args[next++];
    } else if (p.required) {
      throw UsageError("missing " + p.metavar);
    }
  }
  if (next < positional_args.size()) throw UsageError("unexpected argument '" + positional_args[next] + "'");
  return true;
}

std::string ArgParser::help() const {
  std::ostringstream os;
  os << "Usage: onnxc " << command_ << " " << usage_ << "\n\n" << description_ << "\n";
  auto row = [&os](const std::string& left, const std::string& text) {
    const size_t col = 26;
    os << "  " << left;
    if (left.size() + 2 >= col) {
      os << "\n" << std::string(col, ' ');
    } else {
      os << std::string(col - 2 - left.size(), ' ');
    }
    // Continuation lines of a multi-line help text stay in the help column.
    for (char c : text) {
      os << c;
      if (c == '\n') os << std::string(col, ' ');
    }
    os << "\n";
  };
  if (!positionals_.empty()) {
    os << "\nArguments:\n";
    for (const Positional& p : positionals_) row(p.metavar + (p.list ? "..." : ""), p.help);
  }
  os << "\nOptions:\n";
  for (const Option& o : options_) {
    std::string left = o.short_name ? std::string("-") + o.short_name + ", " : "    ";
    left += "--" + o.name;
    if (!o.metavar.empty()) left += " " + o.metavar;
    row(left, o.help);
  }
  row("-h, --help", "show this help and exit");
  if (!epilog_.empty()) os << "\n" << epilog_ << (epilog_.back() == '\n' ? "" : "\n");
  return os.str();
}

std::vector<int64_t> parse_dims(const std::string& text, const std::string& what) {
  std::vector<int64_t> dims;
  if (text.empty() || text == "scalar") return dims;
  size_t start = 0;
  while (true) {
    size_t x = text.find_first_of("x,", start);
    std::string item = text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || v < 0) {
      throw UsageError(what + ": '" + text + "' is not a shape like 1x128x64");
    }
    dims.push_back(v);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return dims;
}

int parse_int(const std::string& text, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < INT32_MIN || v > INT32_MAX) {
    throw UsageError(what + ": '" + text + "' is not an integer");
  }
  return static_cast<int>(v);
}

double parse_double(const std::string& text, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0) throw UsageError(what + ": '" + text + "' is not a number");
  return v;
}

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream is(text);
  while (std::getline(is, cur, sep)) {
    if (!cur.empty()) out.push_back(cur);
  }
  return out;
}

}  // namespace onnxc::tools
