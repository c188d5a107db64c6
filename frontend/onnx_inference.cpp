// ONNX shape inference on a stripped copy of the model, in a forked child that sends the result
// back through a pipe. A crash, a hang or an exception there only means "no ONNX types".
#include "frontend/onnx_inference.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/shape_inference/implementation.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace onnxc::frontend {
namespace {

constexpr const char* kUnchecked = "onnxc.unchecked";
constexpr int kTimeoutMs = 300 * 1000;

// Inference reads only small constants (shapes, axes): large initializers travel without data.
void copy_initializers(const onnx::GraphProto& g, onnx::GraphProto* c) {
  for (const onnx::TensorProto& t : g.initializer()) {
    onnx::TensorProto* ct = c->add_initializer();
    size_t values = static_cast<size_t>(t.float_data_size()) + t.int32_data_size() + t.int64_data_size() +
                    t.double_data_size() + t.uint64_data_size() + t.string_data_size();
    if (t.raw_data().size() + 8 * values <= 4096) {
      *ct = t;
    } else {
      ct->set_name(t.name());
      ct->set_data_type(t.data_type());
      *ct->mutable_dims() = t.dims();
    }
  }
}

// Nodes failing ONNX's node check (schema, attribute kinds, subgraphs) move to a domain with no
// schemas: inference skips them, and the node list keeps its shape for pairing graphs later.
void copy_nodes_checked(const onnx::ModelProto& p, onnx::ModelProto* c) {
  const onnx::GraphProto& g = p.graph();
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(p.ir_version()));
  std::unordered_map<std::string, int> opsets;
  for (const auto& o : p.opset_import()) opsets[o.domain()] = static_cast<int>(o.version());
  ctx.set_opset_imports(opsets);
  onnx::checker::LexicalScopeContext scope;
  for (const auto& v : g.input()) scope.add(v.name());
  for (const auto& t : g.initializer()) scope.add(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) scope.add(o);
  bool moved = false;
  for (const onnx::NodeProto& n : g.node()) {
    onnx::NodeProto* cn = c->mutable_graph()->add_node();
    *cn = n;
    try {
      onnx::checker::check_node(n, ctx, scope);
    } catch (const std::exception&) {
      cn->set_domain(kUnchecked);
      moved = true;
    }
  }
  if (moved) {  // without an import of the domain, inference would stop at the first such node
    auto* o = c->add_opset_import();
    o->set_domain(kUnchecked);
    o->set_version(1);
  }
}

onnx::ModelProto inference_copy(const onnx::ModelProto& p) {
  onnx::ModelProto c;
  c.set_ir_version(p.ir_version());
  *c.mutable_opset_import() = p.opset_import();
  *c.mutable_functions() = p.functions();
  const onnx::GraphProto& g = p.graph();
  onnx::GraphProto* cg = c.mutable_graph();
  cg->set_name(g.name());
  copy_nodes_checked(p, &c);
  *cg->mutable_input() = g.input();
  *cg->mutable_output() = g.output();
  *cg->mutable_value_info() = g.value_info();
  *cg->mutable_sparse_initializer() = g.sparse_initializer();
  copy_initializers(g, cg);
  return c;
}

[[noreturn]] void run_child(onnx::ModelProto& c, int fd) {
  int rc = 1;
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(c, onnx::OpSchemaRegistry::Instance(), options);
    std::string out;
    if (c.SerializeToString(&out)) {
      const char* p = out.data();
      size_t n = out.size();
      while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        p += w;
        n -= static_cast<size_t>(w);
      }
      rc = n == 0 ? 0 : 1;
    }
  } catch (...) {
  }
  ::_exit(rc);  // no atexit handlers or stream flushes of the parent's state
}

// Reads the child's output until EOF; false on timeout.
bool read_all(int fd, std::string& out) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

std::optional<onnx::ModelProto> infer_with_onnx(const onnx::ModelProto& model) {
  onnx::ModelProto c = inference_copy(model);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(c, fds[1]);
  }
  ::close(fds[1]);
  std::string out;
  bool done = read_all(fds[0], out);
  ::close(fds[0]);
  if (!done) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!done || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  onnx::ModelProto inferred;
  if (!inferred.ParseFromString(out) || inferred.graph().node_size() != model.graph().node_size()) return std::nullopt;
  return inferred;
}

}  // namespace onnxc::frontend
