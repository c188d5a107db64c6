// `onnxc test-suite`: every ONNX backend test folder (model.onnx + test_data_set_*) under the given
// folders goes through the compiled path: import, default passes, codegen (kernel cache on), run
// each data set, compare with ONNX's rule. Each folder runs in a forked child with a timeout, so a
// crashing kernel or a hang is reported for that folder and the suite goes on.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "tools/args.h"
#include "tools/build.h"
#include "tools/check/compare.h"
#include "tools/check/dataset.h"

namespace fs = std::filesystem;

namespace onnxc::tools {
namespace {

enum class Status { Passed, Failed, Errored, Unsupported };
const char* status_name(Status s) {
  switch (s) {
    case Status::Passed: return "passed";
    case Status::Failed: return "failed";
    case Status::Errored: return "errored";
    case Status::Unsupported: return "unsupported";
  }
  return "?";
}

struct Outcome {
  Status status = Status::Errored;
  std::string reason;  // one line; empty when passed
};

struct SuiteOptions {
  check::Tolerance tol;  // ONNX's defaults: rtol 1e-3, atol 1e-7
  int codegen_jobs = 0;
  int threads = 0;
  bool use_cache = true;
  std::string target = "host";
};

std::string first_line(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\n' ? ' ' : c;
  return out.size() > 400 ? out.substr(0, 400) + "..." : out;
}

// Messages codegen uses when it rejects an op or an op variant it cannot lower (e.g. Slice with axes
// given at run time). Codegen has no distinct exception type for these yet; until it has, the
// wording is the signal.
bool says_unsupported(const std::string& msg) {
  for (const char* s : {"does not support", "unsupported", "not supported", "must be constant"}) {
    if (msg.find(s) != std::string::npos) return true;
  }
  return false;
}

// One folder, in this process. Every exception becomes an outcome; the phase is named in the reason.
Outcome run_folder(const std::string& dir, const std::string& work, const SuiteOptions& so) {
  std::string phase = "import";
  try {
    ir::Model m = read_model((fs::path(dir) / "model.onnx").string());
    // The declared types say how to read each data file (a TensorProto, SequenceProto or OptionalProto).
    // Sequences and optionals the runtime does not carry are refused by codegen (unsupported_ops).
    std::vector<ir::Type> in_types, out_types;
    for (const ir::Value* v : m.graph->inputs())
      if (!v->is_constant()) in_types.push_back(v->type());
    for (const ir::Value* v : m.graph->outputs()) out_types.push_back(v->type());
    phase = "passes";
    // The target decides some passes (a CUDA library keeps Concat(past input, new) a Concat: the
    // in-place onnxc.CacheAppend is a host step), as `onnxc compile --target` does.
    PassOptions po;
    po.target = so.target;
    optimize_model(m, po);
    phase = "codegen";
    std::vector<std::string> un = unsupported_ops(m);
    if (!un.empty()) {
      std::string list;
      for (const std::string& u : un) list += (list.empty() ? "" : ", ") + u;
      return {Status::Unsupported, "no lowering for " + list};
    }
    BuildOptions bo;
    bo.name = "model";
    bo.target = so.target;
    bo.jobs = so.codegen_jobs;
    bo.use_cache = so.use_cache;
    BuildResult br;
    try {
      br = build_library(m, work + "/lib", bo);
    } catch (const UserError& e) {
      if (says_unsupported(e.what())) return {Status::Unsupported, "codegen: " + first_line(e.what())};
      throw;
    }
    phase = "run";
    ModelRunner r(br.library, so.threads);
    std::vector<std::string> sets = check::find_data_sets(dir);
    for (const std::string& set : sets) {
      phase = "data " + fs::path(set).filename().string();
      check::DataSet ds = check::load_data_set(set, in_types, out_types);
      user_check(ds.inputs.size() == r.inputs().size())
          << ds.inputs.size() << " input files for " << r.inputs().size() << " model inputs";
      user_check(ds.outputs.size() <= r.outputs().size())
          << ds.outputs.size() << " output files for " << r.outputs().size() << " model outputs";
      phase = "run " + fs::path(set).filename().string();
      for (size_t k = 0; k < ds.inputs.size(); ++k) {
        if (ds.inputs[k].value.kind != frontend::TestValue::Kind::Tensor) r.set_input_value(k, ds.inputs[k].value);
        else r.set_input(k, check::match_stored_dtype(ds.inputs[k].tensor, r.inputs()[k].dtype));
      }
      r.run();
      for (size_t k = 0; k < ds.outputs.size(); ++k) {
        check::TensorReport rep;
        if (ds.outputs[k].value.kind != frontend::TestValue::Kind::Tensor || r.outputs()[k].value != 0) {
          rep = check::compare_values(r.outputs()[k].name, r.output_value(k), ds.outputs[k].value, so.tol, 1);
        } else {
          ir::Tensor actual = r.output(k);
          rep = check::compare_tensors(r.outputs()[k].name, actual,
                                       check::match_stored_dtype(ds.outputs[k].tensor, actual.dtype()), so.tol, 1);
        }
        if (rep.ok) continue;
        std::ostringstream os;
        os << fs::path(set).filename().string() << ": output '" << rep.name << "' ";
        if (!rep.problem.empty()) {
          os << rep.problem;
        } else {
          os << rep.mismatches << " of " << rep.numel << " elements differ, max abs err " << rep.max_abs_err;
          if (!rep.worst.empty()) {
            os << " (at " << check::index_str(rep.worst[0].index) << ": " << rep.worst[0].actual << " vs "
               << rep.worst[0].expected << ")";
          }
        }
        return {Status::Failed, os.str()};
      }
    }
    return {Status::Passed, std::to_string(sets.size()) + " data sets"};
  } catch (const UserError& e) {
    // A kernel may refuse a case only the data reveals (Dropout in training mode with a run-time ratio
    // that is not 0 would need random numbers): that is unsupported, like a refusal at codegen.
    if (phase.rfind("run ", 0) == 0 && says_unsupported(e.what())) return {Status::Unsupported, phase + ": " + first_line(e.what())};
    return {Status::Errored, phase + ": " + first_line(e.what())};
  } catch (const InternalError& e) {
    return {Status::Errored, phase + ": internal error: " + first_line(e.what())};
  } catch (const std::exception& e) {
    return {Status::Errored, phase + ": " + first_line(e.what())};
  }
}

// A folder running in a child process: the child writes "status\treason\n" to `fd` and exits.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  size_t index = 0;
  std::unique_ptr<TempDir> work;
  std::chrono::steady_clock::time_point start;
  std::string out;
};

std::string last_log_line(const std::string& path) {
  std::ifstream f(path);
  std::string line, last;
  while (std::getline(f, line)) {
    if (!line.empty()) last = line;
  }
  return first_line(last);
}

Child spawn(size_t index, const std::string& dir, const SuiteOptions& so) {
  Child c;
  c.index = index;
  c.work = std::make_unique<TempDir>("onnxc-suite");
  int fds[2];
  user_check(pipe(fds) == 0) << "pipe failed: " << std::strerror(errno);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  user_check(pid >= 0) << "fork failed: " << std::strerror(errno);
  if (pid == 0) {
    setpgid(0, 0);  // its own group: a timeout kills the child and any compiler it started
    close(fds[0]);
    int log = open((c.work->path() + "/log.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    Outcome o = run_folder(dir, c.work->path(), so);
    std::string line = std::string(status_name(o.status)) + "\t" + o.reason + "\n";
    ssize_t unused = write(fds[1], line.data(), line.size());
    (void)unused;
    _exit(0);  // no destructors or atexit handlers of the parent's objects
  }
  setpgid(pid, pid);
  close(fds[1]);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  c.pid = pid;
  c.fd = fds[0];
  c.start = std::chrono::steady_clock::now();
  return c;
}

void drain(Child& c) {
  char buf[4096];
  ssize_t n;
  while ((n = read(c.fd, buf, sizeof buf)) > 0) c.out.append(buf, static_cast<size_t>(n));
}

Outcome finish(Child& c, int wstatus, bool timed_out, int timeout_s) {
  drain(c);
  close(c.fd);
  if (timed_out) return {Status::Errored, "timed out after " + std::to_string(timeout_s) + " s"};
  std::string log = last_log_line(c.work->path() + "/log.txt");
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    return {Status::Errored, std::string("crashed: ") + strsignal(sig) + " (signal " + std::to_string(sig) + ")" +
                                 (log.empty() ? "" : "; last output: " + log)};
  }
  size_t tab = c.out.find('\t');
  if (tab == std::string::npos) {
    return {Status::Errored, "exited with status " + std::to_string(WEXITSTATUS(wstatus)) + " and no result" +
                                 (log.empty() ? "" : "; last output: " + log)};
  }
  std::string st = c.out.substr(0, tab), reason = c.out.substr(tab + 1);
  while (!reason.empty() && reason.back() == '\n') reason.pop_back();
  for (Status s : {Status::Passed, Status::Failed, Status::Errored, Status::Unsupported}) {
    if (st == status_name(s)) return {s, reason};
  }
  return {Status::Errored, "unreadable child result: " + first_line(c.out)};
}

using Tests = std::vector<std::pair<std::string, std::string>>;  // (folder, display name)
struct Result {
  Outcome outcome;
  double seconds = 0;
};
using DoneFn = std::function<void(size_t, Result)>;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// --no-fork: one folder after another in this process.
void run_in_process(const Tests& tests, const SuiteOptions& so, const DoneFn& done) {
  for (size_t i = 0; i < tests.size(); ++i) {
    TempDir work("onnxc-suite");
    auto t0 = std::chrono::steady_clock::now();
    Outcome o = run_folder(tests[i].first, work.path(), so);
    done(i, {o, seconds_since(t0)});
  }
}

// Up to `jobs` children at once; a child past `timeout_s` is killed with its process group. This
// process stays single-threaded (it only forks, polls and reaps), so forking is safe.
void run_forked(const Tests& tests, const SuiteOptions& so, int jobs, int timeout_s, const DoneFn& done) {
  std::vector<Child> running;
  size_t next = 0;
  while (next < tests.size() || !running.empty()) {
    while (running.size() < static_cast<size_t>(jobs) && next < tests.size()) {
      running.push_back(spawn(next, tests[next].first, so));
      ++next;
    }
    std::vector<struct pollfd> pfds;
    for (Child& c : running) pfds.push_back({c.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 50);
    for (size_t k = 0; k < running.size();) {
      Child& c = running[k];
      drain(c);
      double elapsed = seconds_since(c.start);
      int ws = 0;
      pid_t reaped = waitpid(c.pid, &ws, WNOHANG);
      bool timed_out = false;
      if (reaped == 0 && elapsed > timeout_s) {
        kill(-c.pid, SIGKILL);
        waitpid(c.pid, &ws, 0);
        timed_out = true;
        reaped = c.pid;
      }
      if (reaped != c.pid) {
        ++k;
        continue;
      }
      kill(-c.pid, SIGKILL);  // anything the child left running in its group
      done(c.index, {finish(c, ws, timed_out, timeout_s), elapsed});
      running.erase(running.begin() + static_cast<long>(k));
    }
  }
}

// test, status, seconds, reason; written to a temporary file and renamed.
void write_tsv(const std::string& path, const Tests& tests, const std::vector<Result>& results) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << "test\tstatus\tseconds\treason\n";
    for (size_t i = 0; i < tests.size(); ++i) {
      f << tests[i].second << "\t" << status_name(results[i].outcome.status) << "\t" << results[i].seconds << "\t"
        << results[i].outcome.reason << "\n";
    }
    user_check(f.good()) << path << ": cannot write";
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  user_check(!ec) << path << ": cannot write: " << ec.message();
}

std::string display_name(const std::string& dir, const std::string& root) {
  std::string rel = fs::relative(dir, root).string();
  return rel.empty() || rel == "." ? fs::path(dir).filename().string() : rel;
}

std::set<std::string> read_expected(const std::string& path) {
  require_file(path);
  std::ifstream f(path);
  std::set<std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    size_t b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t\r");
    if (b != std::string::npos) out.insert(line.substr(b, e - b + 1));
  }
  return out;
}

}  // namespace

int test_suite_main(const std::vector<std::string>& args) {
  std::vector<std::string> roots;
  std::string filter, tsv, expect_file, target = "host";
  int jobs = 1, timeout_s = 300, threads = 0;
  bool no_cache = false, no_fork = false, quiet = false, only_expected = false;
  SuiteOptions so;
  ArgParser p("test-suite", "DIR... [--jobs N] [--filter REGEX] [--tsv FILE]",
              "Runs every ONNX backend test folder (model.onnx + test_data_set_*) under the DIRs through the\n"
              "compiled path: import, default passes, codegen into a temporary folder (kernel cache on), run\n"
              "every data set, compare with ONNX's rule (rtol 1e-3, atol 1e-7, NaN == NaN; ints, bools,\n"
              "strings and shapes exact). Each folder runs in a child process with a timeout.\n"
              "A folder is passed, failed (an output differs), errored (import, passes, codegen, run, crash\n"
              "or timeout) or unsupported (codegen has no lowering for an op, or non-tensor inputs/outputs).\n"
              "The last line is the totals: `test-suite: N passed, N failed, N errored, N unsupported`.");
  p.positional_list("DIR", "folders to search (e.g. /usr/share/libonnx-testdata/data/node)", &roots, 1);
  p.option("jobs", 'j', "N", "folders run in parallel, each in its own process (default 1)", &jobs);
  p.option("filter", 'f', "REGEX", "only folders whose name (relative to DIR) contains a match\n"
                                              "(ECMAScript regex)", &filter);
  p.option("tsv", 0, "FILE", "also write a table: test, status, seconds, reason", &tsv);
  p.option("timeout", 0, "S", "seconds per folder before it is killed and counted errored (default 300)", &timeout_s);
  p.option("threads", 't', "N", "runtime threads per folder (default: all cores)", &threads);
  p.option("rtol", 0, "R", "relative tolerance (default 1e-3)", &so.tol.rtol);
  p.option("atol", 0, "A", "absolute tolerance (default 1e-7)", &so.tol.atol);
  p.option("target", 0, "T", "compile target (default host)", &target);
  p.option("expect-pass", 0, "FILE", "names (one per line, # comments) that must pass: exit 1 only if one\n"
                                     "of them does not", &expect_file);
  p.flag("only-expected", 0, "run only the folders --expect-pass names (a fixed sample of a long suite)",
         &only_expected);
  p.flag("no-cache", 0, "do not use the kernel cache", &no_cache);
  p.flag("no-fork", 0, "run folders in this process, one at a time (debugging; no crash isolation)", &no_fork);
  p.flag("quiet", 'q', "print only failures, errors and the totals", &quiet);
  p.epilog("Exit status: 0 nothing failed or errored (or every --expect-pass test passed), 1 otherwise,\n"
           "2 usage error.\n\nExample:\n"
           "  onnxc test-suite /usr/share/libonnx-testdata/data/node --filter 'test_(add|mul)' -j 2 --tsv out.tsv");
  if (!p.parse(args)) return kExitOk;
  if (jobs < 1) throw UsageError("--jobs must be >= 1");
  if (timeout_s < 1) throw UsageError("--timeout must be >= 1");
  std::regex re;
  try {
    re = std::regex(filter.empty() ? "." : filter, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UsageError("--filter: bad regular expression '" + filter + "': " + e.what());
  }
  std::set<std::string> expected;
  if (!expect_file.empty()) expected = read_expected(expect_file);
  if (only_expected && expect_file.empty()) throw UsageError("--only-expected needs --expect-pass FILE");
  so.codegen_jobs = jobs > 1 ? 1 : 0;
  so.threads = threads;
  so.use_cache = !no_cache;
  so.target = target;

  Tests tests;
  for (const std::string& root : roots) {
    std::error_code ec;
    user_check(fs::exists(root, ec)) << root << ": no such directory";
    for (const std::string& d : check::find_model_test_dirs(root)) {
      std::string name = display_name(d, root);
      if (std::regex_search(name, re) && (!only_expected || expected.count(name))) tests.emplace_back(d, name);
    }
  }
  user_check(!tests.empty()) << "no test folders (model.onnx + test_data_set_*) found"
                             << (filter.empty() ? "" : " matching '" + filter + "'");

  std::vector<Result> results(tests.size());
  size_t finished = 0;
  int width = static_cast<int>(std::to_string(tests.size()).size());
  auto done = [&](size_t i, Result r) {
    results[i] = std::move(r);
    ++finished;
    const Outcome& o = results[i].outcome;
    if (quiet && (o.status == Status::Passed || o.status == Status::Unsupported)) return;
    std::printf("[%*zu/%zu] %-11s %s (%.1f s)%s%s\n", width, finished, tests.size(), status_name(o.status),
                tests[i].second.c_str(), results[i].seconds, o.status == Status::Passed ? "" : ": ",
                o.status == Status::Passed ? "" : o.reason.c_str());
    std::fflush(stdout);
  };

  if (no_fork) {
    run_in_process(tests, so, done);
  } else {
    run_forked(tests, so, jobs, timeout_s, done);
  }
  int counts[4] = {0, 0, 0, 0};
  for (const Result& r : results) ++counts[static_cast<int>(r.outcome.status)];
  if (!tsv.empty()) write_tsv(tsv, tests, results);
  int rc = kExitOk;
  if (!expected.empty()) {
    std::set<std::string> seen;
    for (size_t i = 0; i < tests.size(); ++i) {
      if (!expected.count(tests[i].second)) continue;
      seen.insert(tests[i].second);
      if (results[i].outcome.status != Status::Passed) {
        std::printf("expected to pass but %s: %s\n", status_name(results[i].outcome.status), tests[i].second.c_str());
        rc = kExitMismatch;
      }
    }
    for (const std::string& e : expected) {
      if (!seen.count(e) && filter.empty()) {
        std::printf("expected to pass but not found: %s\n", e.c_str());
        rc = kExitMismatch;
      }
    }
  } else if (counts[1] || counts[2]) {
    rc = kExitMismatch;
  }
  std::printf("test-suite: %d passed, %d failed, %d errored, %d unsupported\n", counts[0], counts[1], counts[2],
              counts[3]);
  return rc;
}

}  // namespace onnxc::tools
