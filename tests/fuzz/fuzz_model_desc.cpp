// libFuzzer target: the runtime's artifact descriptor reader. Bytes become an onnxc_model_desc
// (symbols, shape expressions, tensors, steps, weights: every count, id and code word fuzzed) that
// onnxc_model_from_desc must accept or refuse with a status; one it accepts then runs a session on
// inputs of fuzzed shapes. Kernels are stubs that touch nothing: what is fuzzed is the runtime's
// validation, shape evaluation, memory planning and binding, not generated code.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "onnxc/runtime.h"

namespace {

struct Bytes {
  const uint8_t* p;
  size_t n;
  template <class T>
  T get() {
    T v{};
    size_t k = n < sizeof v ? n : sizeof v;
    std::memcpy(&v, p, k);
    p += k;
    n -= k;
    return v;
  }
  uint32_t below(uint32_t m) { return get<uint8_t>() % m; }
};

int stub_kernel(void**) { return 0; }
int stub_threads(int) { return 0; }

size_t dtype_size(int32_t dt) {
  static const size_t sizes[] = {0, 4, 1, 1, 2, 2, 4, 8, 8, 1, 2, 8, 4, 8, 8, 16, 2};
  return dt >= 0 && dt < 17 ? sizes[dt] : 0;
}

alignas(64) uint8_t g_weights[4096];

// A loop runs as often as its trip count and condition say; the stub kernels write nothing, so a trip
// count read from an intermediate tensor is whatever the arena holds. Sessions run only descriptors
// whose loops are bounded by an input (the harness passes zeros) or a small constant.
bool loops_end_soon(const onnxc_model_desc& d) {
  for (uint32_t k = 0; k < d.n_steps; ++k) {
    const onnxc_step& s = d.steps[k];
    if (s.kind != ONNXC_STEP_LOOP) continue;
    int32_t trip = s.args[1];
    if (trip >= 0 && d.tensors[trip].kind == ONNXC_TENSOR_INPUT) continue;
    if (trip >= 0) return false;
    uint32_t e = static_cast<uint32_t>(-(static_cast<int64_t>(trip)) - 1);
    bool small = d.expr_start[e + 1] - d.expr_start[e] == 2 && d.expr_code[d.expr_start[e]] == ONNXC_EXPR_CONST &&
                 d.expr_code[d.expr_start[e] + 1] <= 16;
    if (!small) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in{data, size};
  std::deque<std::vector<int32_t>> arrays;  // stable storage for the descriptor's int arrays
  auto keep = [&](std::vector<int32_t> v) { return arrays.emplace_back(std::move(v)).data(); };
  static const char* const kSymbols[] = {"batch", "seq", "s2", "s3"};
  static const char* const kNames[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"};

  onnxc_model_desc d{};
  d.abi_version = in.below(16) == 0 ? in.get<uint32_t>() : ONNXC_ABI_VERSION;
  d.name = "fuzz";
  d.target = "x86-64-linux";
  d.producer = "fuzz";
  d.n_symbols = in.below(5);
  d.symbols = kSymbols;

  std::vector<uint32_t> expr_start = {0};
  std::vector<int64_t> code;
  uint32_t n_exprs = in.below(12);
  for (uint32_t e = 0; e < n_exprs; ++e) {
    for (uint32_t w = 0, len = 1 + in.below(6); w < len; ++w) {
      int64_t op = in.below(12);  // 11 is no operation
      code.push_back(op);
      if (op == ONNXC_EXPR_CONST || op == ONNXC_EXPR_SYM) code.push_back(in.below(8) ? in.below(9) : in.get<int64_t>());
    }
    expr_start.push_back(static_cast<uint32_t>(code.size()));
  }
  d.n_exprs = n_exprs;
  d.expr_start = expr_start.data();
  d.expr_code = code.data();

  std::vector<onnxc_tensor_desc> tensors(in.below(10));
  for (size_t t = 0; t < tensors.size(); ++t) {
    onnxc_tensor_desc& td = tensors[t];
    td.name = kNames[t];
    td.dtype = static_cast<int32_t>(in.below(18));
    td.kind = static_cast<int32_t>(in.below(6));
    td.rank = static_cast<int32_t>(in.below(5)) - (in.below(32) == 0 ? 5 : 0);
    std::vector<int32_t> dims;
    for (int32_t k = 0; k < td.rank; ++k) dims.push_back(static_cast<int32_t>(in.below(n_exprs + 2)) - 1);
    td.dims = keep(dims);
    td.view_of = static_cast<int8_t>(in.get<uint8_t>()) % 12;
    td.weight_offset = in.below(4) ? 64u * in.below(70) : in.get<uint64_t>();
    td.weight_bytes = in.below(4) ? in.get<uint16_t>() : in.get<uint64_t>();
    // ABI v5: sequences and optionals (and one unknown value kind), of any kind and rank.
    td.value = in.below(4) == 0 ? static_cast<int32_t>(in.below(5)) : ONNXC_VALUE_TENSOR;
  }
  d.n_tensors = static_cast<uint32_t>(tensors.size());
  d.tensors = tensors.data();

  auto ids = [&](uint32_t max_count) {
    std::vector<int32_t> v(in.below(max_count));
    for (int32_t& x : v) x = static_cast<int8_t>(in.get<uint8_t>()) % 12;
    return v;
  };
  std::vector<int32_t> inputs = ids(4), outputs = ids(4);
  d.n_inputs = static_cast<uint32_t>(inputs.size());
  d.inputs = inputs.data();
  d.n_outputs = static_cast<uint32_t>(outputs.size());
  d.outputs = outputs.data();

  std::vector<onnxc_kernel_desc> kernels(in.below(3), onnxc_kernel_desc{"stub", stub_kernel});
  d.n_kernels = static_cast<uint32_t>(kernels.size());
  d.kernels = kernels.data();
  std::vector<onnxc_step> steps(in.below(6));
  for (onnxc_step& s : steps) {
    s.kernel = static_cast<int8_t>(in.get<uint8_t>()) % 4;
    std::vector<int32_t> args = ids(8);
    s.n_args = static_cast<int32_t>(args.size());
    s.args = keep(args);
    // ABI v2: host steps (real host ops over fuzzed shapes) binding fuzzed symbols, and bad kinds; v3:
    // branches and jumps to fuzzed targets (backward, past the end, forward over host steps); v4: loop
    // heads and nexts to fuzzed targets (crossing, unpaired, jumps into bodies) and the scan host ops.
    s.kind = in.below(3) == 0 ? ONNXC_STEP_HOST : in.below(32) == 0 ? static_cast<int32_t>(in.below(8)) - 1 : ONNXC_STEP_KERNEL;
    if (s.kind == ONNXC_STEP_KERNEL && in.below(4) == 0) s.kind = ONNXC_STEP_BRANCH + static_cast<int32_t>(in.below(4));
    static const int32_t kHostOps[] = {0, 1, 2, 3, 4, 5, ONNXC_HOST_SCAN_SLICE, ONNXC_HOST_SCAN_APPEND, ONNXC_HOST_SCAN_COLLECT,
                                       ONNXC_HOST_VALUE_COPY, ONNXC_HOST_VALUE_EMPTY, ONNXC_HOST_SEQ_INSERT, ONNXC_HOST_SEQ_AT,
                                       ONNXC_HOST_SEQ_ERASE, ONNXC_HOST_SEQ_LENGTH, ONNXC_HOST_OPT_WRAP, ONNXC_HOST_OPT_HAS,
                                       ONNXC_HOST_OPT_GET, 41};
    if (s.kind == ONNXC_STEP_HOST) s.kernel = kHostOps[in.below(19)];  // every host op, and unknown ones
    if (s.kind >= ONNXC_STEP_BRANCH && s.kind <= ONNXC_STEP_NEXT) s.kernel = static_cast<int32_t>(in.below(8)) - 1;
    std::vector<int32_t> binds(in.below(3));
    for (int32_t& b : binds) b = static_cast<int32_t>(in.below(7)) - 2;
    s.n_binds = static_cast<int32_t>(binds.size());
    s.binds = binds.empty() ? nullptr : keep(binds);
  }
  d.n_steps = static_cast<uint32_t>(steps.size());
  d.steps = steps.data();
  d.weights = in.below(2) ? g_weights : nullptr;
  d.weights_size = d.weights ? in.below(65) * 64u : 0;
  d.set_num_threads = stub_threads;

  onnxc_model* model = nullptr;
  if (onnxc_model_from_desc(&d, &model) != ONNXC_OK) return 0;
  if (!loops_end_soon(d)) {  // valid, but would run as long as its (arbitrary) data asks
    onnxc_model_free(model);
    return 0;
  }
  onnxc_session* session = nullptr;
  onnxc_session_options opts;
  onnxc_session_options_default(&opts);
  opts.max_arena_bytes = 64 << 20;  // a fuzzed shape may ask for terabytes: refused, not attempted
  if (onnxc_session_create(model, &opts, &session) == ONNXC_OK) {
    std::deque<std::vector<uint8_t>> buffers;
    std::deque<std::vector<int64_t>> shapes;
    for (size_t i = 0; i < onnxc_model_num_inputs(model); ++i) {
      onnxc_value_info info;
      if (onnxc_model_input_info(model, i, &info) != ONNXC_OK) continue;
      std::vector<int64_t>& dims = shapes.emplace_back();
      size_t numel = 1;
      for (int32_t k = 0; k < info.rank; ++k) {
        dims.push_back(info.dims[k] >= 0 ? info.dims[k] : in.below(5));
        numel *= dims.back() > 64 ? 0 : static_cast<size_t>(dims.back());  // huge fixed dims: empty data
      }
      size_t bytes = numel * dtype_size(info.dtype);
      std::vector<uint8_t>& buf = buffers.emplace_back(bytes + 1);
      onnxc_tensor t{info.dtype, info.rank, dims.data(), buf.data()};
      const onnxc_tensor items[3] = {t, t, t};
      int32_t kind = onnxc_model_desc_of(model)->tensors[onnxc_model_desc_of(model)->inputs[i]].value;
      onnxc_value v{kind, static_cast<int32_t>(in.below(2)), in.below(4), items};
      if (kind == ONNXC_VALUE_TENSOR) onnxc_session_set_input(session, i, &t);
      else onnxc_session_set_input_value(session, i, &v);
    }
    if (onnxc_session_run(session) == ONNXC_OK) {
      for (size_t o = 0; o < onnxc_model_num_outputs(model); ++o) {
        onnxc_tensor out;
        onnxc_session_get_output(session, o, &out);
        onnxc_value value;
        onnxc_session_get_output_value(session, o, &value);
      }
    }
    onnxc_session_free(session);
  }
  onnxc_model_free(model);
  return 0;
}
