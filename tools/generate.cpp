// `onnxc generate`: a decoder language model token by token. The prompt runs once (prefill), then one
// token per step (decode), each step reading the keys and values of the tokens before it. Inputs and
// outputs are found by the names exporters give them; past/present pairs the compiled model appends in
// place (onnxc.CacheAppend) stay in the session's KV cache, the others are copied back each step.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "ir/error.h"
#include "tools/args.h"
#include "tools/build.h"
#include "tools/profile.h"

namespace onnxc::tools {
namespace {

using Clock = std::chrono::steady_clock;

// This process's CPU time (every thread's, the pool's workers spinning included), in seconds.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;
}

// The output an exporter pairs with a past input: past_key_values.N.key -> present.N.key,
// past_key_N -> present_key_N, past.N -> present.N, pastX -> presentX.
std::vector<std::string> present_names(const std::string& past) {
  std::vector<std::string> r;
  static const std::regex hf(R"(^past_key_values(.*)$)");
  std::smatch m;
  if (std::regex_match(past, m, hf)) {
    r.push_back("present" + m[1].str());
    r.push_back("present_key_values" + m[1].str());
  }
  size_t at = past.find("past");
  if (at != std::string::npos) r.push_back(past.substr(0, at) + "present" + past.substr(at + 4));
  return r;
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// How generate feeds each model input.
enum class Role { Ids, Mask, Positions, Past, Unknown };

Role role_of(const IOInfo& in) {
  std::string n = in.name;
  std::transform(n.begin(), n.end(), n.begin(), ::tolower);
  if (has(n, "past")) return Role::Past;
  if (has(n, "attention_mask")) return Role::Mask;
  if (has(n, "position")) return Role::Positions;
  if (n == "input_ids" || n == "ids" || n == "tokens" || n == "token_ids" || n == "input") return Role::Ids;
  return Role::Unknown;
}

ir::Tensor int_tensor(ir::DType dt, const std::vector<int64_t>& dims, const std::function<int64_t(int64_t)>& at) {
  ir::Tensor t(dt, dims);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dt == ir::DType::Int32) static_cast<int32_t*>(t.mutable_raw())[i] = static_cast<int32_t>(at(i));
    else static_cast<int64_t*>(t.mutable_raw())[i] = at(i);
  }
  return t;
}

// An empty past: the model's dims; symbols given with --dims their value, batch-like symbols 1 and
// the past length 0. The past length is the one remaining symbol, or, where several remain (GenAI's
// builder names the head size `kv_cache_dim`), the one whose name says past/seq/len.
ir::Tensor empty_past(const IOInfo& in, const std::map<std::string, int64_t>& given) {
  std::vector<int64_t> d(in.dims.size());
  std::vector<size_t> open;
  for (size_t k = 0; k < in.dims.size(); ++k) {
    if (in.dims[k] >= 0) {
      d[k] = in.dims[k];
      continue;
    }
    std::string s = in.dim_names[k];
    auto it = given.find(s);
    std::transform(s.begin(), s.end(), s.begin(), ::tolower);
    if (it != given.end()) d[k] = it->second;
    else if (has(s, "batch") || s == "b") d[k] = 1;
    else open.push_back(k);
  }
  if (open.size() > 1) {
    std::vector<size_t> past;
    for (size_t k : open) {
      std::string s = in.dim_names[k];
      std::transform(s.begin(), s.end(), s.begin(), ::tolower);
      if (has(s, "past") || has(s, "seq") || has(s, "len")) past.push_back(k);
    }
    if (past.size() == 1) {
      std::string rest;
      for (size_t k : open)
        if (k != past[0]) rest += (rest.empty() ? "" : ",") + in.dim_names[k] + "=N";
      user_error << "input '" << in.name << "' (" << in.type_str() << "): '" << in.dim_names[past[0]]
                 << "' is the past length, but the size of the other symbols is unknown: give it with --dims "
                 << rest;
    }
  }
  user_check(open.size() == 1) << "input '" << in.name << "' (" << in.type_str()
                               << "): cannot tell its past-length dim (one symbolic dim besides the batch and those "
                                  "given with --dims)";
  d[open[0]] = 0;
  return ir::Tensor(in.dtype, d);
}

struct Sampler {
  int top_k = 0;
  double temperature = 1.0;
  std::mt19937_64 rng;
  // The next token from the last row of logits [.., vocab].
  int64_t next(const ir::Tensor& logits) {
    user_check(logits.dtype() == ir::DType::Float32 && logits.rank() >= 1)
        << "the logits output must be float32 [.., vocab], not " << ir::dtype_name(logits.dtype());
    int64_t vocab = logits.dims().back();
    const float* row = static_cast<const float*>(logits.raw()) + (logits.numel() - vocab);
    if (top_k <= 0) return std::max_element(row, row + vocab) - row;
    std::vector<int64_t> idx(static_cast<size_t>(vocab));
    for (int64_t i = 0; i < vocab; ++i) idx[static_cast<size_t>(i)] = i;
    int64_t k = std::min<int64_t>(top_k, vocab);
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
    std::vector<double> w(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) w[static_cast<size_t>(i)] = std::exp((row[idx[static_cast<size_t>(i)]] - row[idx[0]]) / temperature);
    std::discrete_distribution<int64_t> pick(w.begin(), w.end());
    return idx[static_cast<size_t>(pick(rng))];
  }
};

struct Plan {
  int ids = -1, mask = -1, positions = -1;
  int logits = -1;
  std::vector<std::pair<int, int>> in_place, copied;  // (past input, present output)
  std::vector<std::string> unpaired;
};

Plan plan_inputs(ModelRunner& r) {
  Plan p;
  std::vector<std::pair<size_t, size_t>> cache = r.cache_pairs();
  std::vector<bool> output_used(r.outputs().size());
  for (size_t i = 0; i < r.inputs().size(); ++i) {
    const IOInfo& in = r.inputs()[i];
    Role role = role_of(in);
    if (role == Role::Unknown && p.ids < 0 && in.dims.size() == 2 &&
        (in.dtype == ir::DType::Int64 || in.dtype == ir::DType::Int32))
      role = Role::Ids;
    int idx = static_cast<int>(i);
    switch (role) {
      case Role::Ids: p.ids = idx; break;
      case Role::Mask: p.mask = idx; break;
      case Role::Positions: p.positions = idx; break;
      case Role::Past: {
        int out = -1;
        for (const std::string& name : present_names(in.name))
          for (size_t o = 0; o < r.outputs().size() && out < 0; ++o)
            if (r.outputs()[o].name == name) out = static_cast<int>(o);
        if (out < 0) {
          p.unpaired.push_back("input '" + in.name + "' (no output named " + present_names(in.name).front() + ")");
          break;
        }
        output_used[static_cast<size_t>(out)] = true;
        bool kept = std::find(cache.begin(), cache.end(), std::make_pair(i, static_cast<size_t>(out))) != cache.end();
        (kept ? p.in_place : p.copied).push_back({idx, out});
        break;
      }
      case Role::Unknown: p.unpaired.push_back("input '" + in.name + "' (" + in.type_str() + ")"); break;
    }
  }
  for (size_t o = 0; o < r.outputs().size() && p.logits < 0; ++o)
    if (r.outputs()[o].name == "logits") p.logits = static_cast<int>(o);
  for (size_t o = 0; o < r.outputs().size() && p.logits < 0; ++o)
    if (!output_used[o]) p.logits = static_cast<int>(o);
  return p;
}

std::vector<int64_t> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  for (const std::string& s : split_list(text, ',')) ids.push_back(parse_int(s, "--prompt-ids"));
  if (ids.empty()) throw UsageError("--prompt-ids: give at least one token id, e.g. --prompt-ids 1,2,3");
  return ids;
}

}  // namespace

int generate_main(const std::vector<std::string>& args) {
  std::string model, prompt, dims_arg;
  int max_new = 16, top_k = 0, seed = 0, capacity = 0;
  double temperature = 1.0;
  bool json = false, profile = false, copy_cache = false;
  Executable::Options eo;
  ArgParser p("generate", "MODEL --prompt-ids ID,... [options]",
              "Generates tokens with a decoder language model: runs the prompt (prefill), then one token per\n"
              "step (decode), and prints the new token ids, prefill and decode tokens/s, time to the first\n"
              "token and peak memory. Inputs are bound by their exporters' names: input_ids, attention_mask,\n"
              "position_ids, and each past (past_key_values.N.key, past_key_N, ...) from the output of the same\n"
              "name with 'present'. Pairs the compiled model appends in place stay in the session's KV cache\n"
              "(no copy per token); the others are copied back each step, and the output says which.");
  p.positional("MODEL", "model.onnx or a compiled libNAME.so", &model);
  p.option("prompt-ids", 0, "ID,...", "the prompt's token ids", &prompt);
  p.option("max-new-tokens", 'n', "N", "tokens to generate (default 16)", &max_new);
  p.option("top-k", 0, "K", "sample among the K most likely tokens (default 0: greedy)", &top_k);
  p.option("temperature", 0, "T", "divides the logits before sampling (default 1)", &temperature);
  p.option("seed", 0, "S", "seed of the sampler (default 0)", &seed);
  p.option("capacity", 0, "N", "positions the KV cache holds (default: prompt + new tokens)", &capacity);
  p.flag("json", 0, "print one JSON object: tokens, prefill_tokens_per_s, decode_tokens_per_s,\n"
                    "time_to_first_token_ms, peak_rss_mib (and how the cache was paired)", &json);
  p.flag("profile", 0, "time every step of the decode runs and print the per-kernel table\n"
                        "(onnxc bench --profile's): the cache steps (CacheAppend) show what a token moves", &profile);
  p.flag("copy-cache", 0, "copy every present back as the next past (no cache kept in place), to compare", &copy_cache);
  p.option("dims", 0, "SYM=N,...", "sizes of the past's symbols other than batch and past length\n"
                                     "(e.g. GenAI's --dims kv_cache_dim=64)", &dims_arg);
  add_executable_options(p, &eo);
  add_external_path_option(p);
  p.epilog("Example:\n  onnxc generate decoder.onnx --prompt-ids 1,2,3 --max-new-tokens 64 --json");
  if (!p.parse(args)) return kExitOk;
  std::vector<int64_t> ids = parse_ids(prompt);
  std::map<std::string, int64_t> dims;
  for (const std::string& item : split_list(dims_arg, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) throw UsageError("--dims: '" + item + "' is not SYM=N");
    dims[item.substr(0, eq)] = parse_int(item.substr(eq + 1), "--dims " + item.substr(0, eq));
  }
  if (max_new < 1 || top_k < 0 || !(temperature > 0) || capacity < 0)
    throw UsageError("--max-new-tokens must be >= 1, --top-k >= 0, --temperature > 0, --capacity >= 0");

  require_file(model);
  eo.quiet = true;
  Executable exe(model, eo);
  ModelRunner& r = exe.runner();
  Plan plan = plan_inputs(r);
  if (copy_cache) {
    plan.copied.insert(plan.copied.end(), plan.in_place.begin(), plan.in_place.end());
    plan.in_place.clear();
  }
  user_check(plan.ids >= 0) << model << ": found no token ids input (input_ids [batch, seq], int64 or int32)";
  user_check(plan.logits >= 0) << model << ": found no logits output";
  user_check(plan.unpaired.empty()) << model << ": could not pair or bind " << [&] {
    std::string s;
    for (const std::string& u : plan.unpaired) s += (s.empty() ? "" : "; ") + u;
    return s;
  }();
  const int64_t total = static_cast<int64_t>(ids.size()) + max_new;
  if (!plan.in_place.empty()) r.keep_cache(capacity ? capacity : total);

  Sampler sampler{top_k, temperature, std::mt19937_64(static_cast<uint64_t>(seed))};
  std::vector<ir::Tensor> copied_past(plan.copied.size());
  std::vector<int64_t> out_tokens;
  std::ofstream("/proc/self/clear_refs") << "5";  // peak RSS from here on (Linux >= 4.0)
  double prefill_s = 0, decode_s = 0, decode_cpu_s = 0;
  int64_t past = 0;
  std::vector<int64_t> step = ids;
  StepProfile prof;
  for (int t = 0; t < max_new; ++t) {
    if (profile && t == 1) r.set_profiler(&StepProfile::record, &prof);
    if (profile && t >= 1) prof.begin_run();
    const int64_t s = static_cast<int64_t>(step.size());
    const IOInfo& idi = r.inputs()[static_cast<size_t>(plan.ids)];
    r.set_input(static_cast<size_t>(plan.ids), int_tensor(idi.dtype, {1, s}, [&](int64_t i) { return step[static_cast<size_t>(i)]; }));
    if (plan.mask >= 0)
      r.set_input(static_cast<size_t>(plan.mask), int_tensor(r.inputs()[static_cast<size_t>(plan.mask)].dtype, {1, past + s}, [](int64_t) { return 1; }));
    if (plan.positions >= 0)
      r.set_input(static_cast<size_t>(plan.positions), int_tensor(r.inputs()[static_cast<size_t>(plan.positions)].dtype, {1, s}, [&](int64_t i) { return past + i; }));
    for (size_t k = 0; k < plan.copied.size(); ++k) {
      const IOInfo& in = r.inputs()[static_cast<size_t>(plan.copied[k].first)];
      r.set_input(static_cast<size_t>(plan.copied[k].first), t == 0 ? empty_past(in, dims) : copied_past[k]);
    }
    if (t == 0)  // the kept caches start empty; later steps read them in place
      for (const auto& [in, out] : plan.in_place) r.set_input(static_cast<size_t>(in), empty_past(r.inputs()[static_cast<size_t>(in)], dims));
    auto t0 = Clock::now();
    const double c0 = cpu_seconds();
    r.run();
    int64_t next = sampler.next(r.output(static_cast<size_t>(plan.logits)));
    for (size_t k = 0; k < plan.copied.size(); ++k) copied_past[k] = r.output(static_cast<size_t>(plan.copied[k].second));
    double sec = std::chrono::duration<double>(Clock::now() - t0).count();
    (t == 0 ? prefill_s : decode_s) += sec;
    if (t > 0) decode_cpu_s += cpu_seconds() - c0;
    out_tokens.push_back(next);
    past += s;
    step = {next};
  }
  r.set_profiler(nullptr, nullptr);
  const double prefill_tps = static_cast<double>(ids.size()) / prefill_s;
  const double decode_tps = max_new > 1 ? (max_new - 1) / decode_s : 0.0;
  const double decode_cpu_ms = max_new > 1 ? decode_cpu_s * 1e3 / (max_new - 1) : 0.0;
  const double peak_mib = static_cast<double>(peak_rss_bytes()) / (1024.0 * 1024.0);
  auto names = [&](const std::vector<std::pair<int, int>>& pairs) {
    std::string s;
    for (const auto& pr : pairs) s += (s.empty() ? "" : ", ") + r.inputs()[static_cast<size_t>(pr.first)].name;
    return s;
  };
  if (json) {
    std::ostringstream os;
    os << "{\"tokens\": [";
    for (size_t i = 0; i < out_tokens.size(); ++i) os << (i ? ", " : "") << out_tokens[i];
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "], \"prefill_tokens_per_s\": %.3f, \"decode_tokens_per_s\": %.3f, \"time_to_first_token_ms\": %.3f, "
                  "\"decode_cpu_ms_per_step\": %.3f, \"peak_rss_mib\": %.1f, \"cache_in_place\": %zu, \"cache_copied\": %zu}",
                  prefill_tps, decode_tps, prefill_s * 1e3, decode_cpu_ms, peak_mib, plan.in_place.size(), plan.copied.size());
    std::printf("%s%s\n", os.str().c_str(), buf);
    return kExitOk;
  }
  std::printf("model     %s (%s)\n", model.c_str(), r.name().c_str());
  std::printf("tokens    ");
  for (size_t i = 0; i < out_tokens.size(); ++i) std::printf("%s%lld", i ? "," : "", static_cast<long long>(out_tokens[i]));
  std::printf("\nprefill   %zu tokens in %.3f ms: %.1f tokens/s (time to first token %.3f ms)\n", ids.size(),
              prefill_s * 1e3, prefill_tps, prefill_s * 1e3);
  std::printf("decode    %d tokens in %.3f ms: %.1f tokens/s (CPU %.3f ms a step)\n", max_new - 1, decode_s * 1e3,
              decode_tps, decode_cpu_ms);
  std::printf("memory    peak RSS %.1f MiB\n", peak_mib);
  if (!plan.in_place.empty()) std::printf("cache     in place: %s\n", names(plan.in_place).c_str());
  if (!plan.copied.empty())
    std::printf("cache     copied each step (%s): %s\n",
                copy_cache ? "--copy-cache" : "the model does not append them in place: `onnxc inspect --fusions` says why",
                names(plan.copied).c_str());
  if (profile && max_new > 1) prof.print_table(decode_s * 1e3 / (max_new - 1), /*by_size=*/false);
  return kExitOk;
}

}  // namespace onnxc::tools
