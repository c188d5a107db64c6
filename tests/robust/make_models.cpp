// Writes the generated models (and their test data) that the robustness CLI tests run, so that no
// large or hostile model needs to be committed:
//   make_models chain N DIR       x -> N alternating Add(1)/Mul(0.5) nodes -> y, with test_data_set_0
//   make_models softmax_nan DIR   Softmax and LogSoftmax of [[nan,1,2,0],[1,2,3,4]], with the NaN rows
//   make_models reduce_big DIR    ReduceSum(ConstantOfShape([2^32+3], int64 1)): 4294967299
//   make_models two_outputs DIR   x -> Relu -> a, x -> Neg -> b, with a data set missing output_1.pb
//   make_models one_input_add DIR Add with a single input (invalid)
//   make_models external DIR LOC  y = x + w, w: 4 floats of external data at LOC (nothing written there)
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

using onnx::TensorProto;

void save(const google::protobuf::MessageLite& m, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!m.SerializeToOstream(&f)) {
    std::fprintf(stderr, "make_models: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

onnx::ModelProto new_model(int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("main");
  return m;
}

void io(onnx::ValueInfoProto* vi, const std::string& name, int type, const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  auto* s = t->mutable_shape();
  for (int64_t d : dims) s->add_dim()->set_dim_value(d);
}

onnx::NodeProto* node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                      const std::vector<std::string>& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(g->node_size()));
  for (const auto& i : in) n->add_input(i);
  for (const auto& o : out) n->add_output(o);
  return n;
}

TensorProto floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float x : v) t.add_float_data(x);
  return t;
}

std::string data_dir(const std::string& dir) {
  std::string d = dir + "/test_data_set_0";
  ::mkdir(dir.c_str(), 0755);
  ::mkdir(d.c_str(), 0755);
  return d;
}

void chain(int n, const std::string& dir) {
  auto m = new_model();
  auto* g = m.mutable_graph();
  io(g->add_input(), "x", TensorProto::FLOAT, {4});
  *g->add_initializer() = floats("one", {}, {1.0f});
  *g->add_initializer() = floats("half", {}, {0.5f});
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    std::string out = i + 1 == n ? "y" : "v" + std::to_string(i);
    node(g, i % 2 ? "Mul" : "Add", {prev, i % 2 ? "half" : "one"}, {out});
    prev = out;
  }
  io(g->add_output(), "y", TensorProto::FLOAT, {4});
  std::string d = data_dir(dir);
  save(m, dir + "/model.onnx");
  std::vector<float> x = {-3.0f, 0.25f, 7.0f, 100.0f}, y = x;
  for (float& v : y)
    for (int i = 0; i < n; ++i) v = i % 2 ? v * 0.5f : v + 1.0f;
  save(floats("x", {4}, x), d + "/input_0.pb");
  save(floats("y", {4}, y), d + "/output_0.pb");
}

void softmax_nan(const std::string& dir) {
  auto m = new_model(13);
  auto* g = m.mutable_graph();
  io(g->add_input(), "x", TensorProto::FLOAT, {2, 4});
  node(g, "Softmax", {"x"}, {"sm"});
  node(g, "LogSoftmax", {"x"}, {"lsm"});
  io(g->add_output(), "sm", TensorProto::FLOAT, {2, 4});
  io(g->add_output(), "lsm", TensorProto::FLOAT, {2, 4});
  std::string d = data_dir(dir);
  save(m, dir + "/model.onnx");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {nan, 1, 2, 0, 1, 2, 3, 4}, sm(8, nan), lsm(8, nan);
  double sum = 0;
  for (int i = 4; i < 8; ++i) sum += std::exp(static_cast<double>(x[i]) - 4.0);
  for (int i = 4; i < 8; ++i) {
    sm[i] = static_cast<float>(std::exp(x[i] - 4.0) / sum);
    lsm[i] = static_cast<float>(x[i] - 4.0 - std::log(sum));
  }
  save(floats("x", {2, 4}, x), d + "/input_0.pb");
  save(floats("sm", {2, 4}, sm), d + "/output_0.pb");
  save(floats("lsm", {2, 4}, lsm), d + "/output_1.pb");
}

void reduce_big(const std::string& dir) {
  auto m = new_model(13);
  auto* g = m.mutable_graph();
  TensorProto shape;
  shape.set_name("shape");
  shape.set_data_type(TensorProto::INT64);
  shape.add_dims(1);
  shape.add_int64_data((int64_t(1) << 32) + 3);
  *g->add_initializer() = shape;
  auto* c = node(g, "ConstantOfShape", {"shape"}, {"ones"});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(TensorProto::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(1);
  auto* r = node(g, "ReduceSum", {"ones"}, {"y"});
  auto* k = r->add_attribute();
  k->set_name("keepdims");
  k->set_type(onnx::AttributeProto::INT);
  k->set_i(0);
  io(g->add_output(), "y", TensorProto::INT64, {});
  std::string d = data_dir(dir);
  save(m, dir + "/model.onnx");
  TensorProto y;
  y.set_name("y");
  y.set_data_type(TensorProto::INT64);
  y.add_int64_data((int64_t(1) << 32) + 3);
  save(y, d + "/output_0.pb");
}

void two_outputs(const std::string& dir) {
  auto m = new_model();
  auto* g = m.mutable_graph();
  io(g->add_input(), "x", TensorProto::FLOAT, {3});
  node(g, "Relu", {"x"}, {"a"});
  node(g, "Neg", {"x"}, {"b"});
  io(g->add_output(), "a", TensorProto::FLOAT, {3});
  io(g->add_output(), "b", TensorProto::FLOAT, {3});
  std::string d = data_dir(dir);
  save(m, dir + "/model.onnx");
  save(floats("x", {3}, {-1, 0, 2}), d + "/input_0.pb");
  save(floats("a", {3}, {0, 0, 2}), d + "/output_0.pb");  // output_1.pb deliberately missing
}

void one_input_add(const std::string& dir) {
  auto m = new_model();
  auto* g = m.mutable_graph();
  io(g->add_input(), "x", TensorProto::FLOAT, {3});
  node(g, "Add", {"x"}, {"y"});
  io(g->add_output(), "y", TensorProto::FLOAT, {3});
  ::mkdir(dir.c_str(), 0755);
  save(m, dir + "/model.onnx");
}

void external(const std::string& dir, const std::string& location) {
  auto m = new_model();
  auto* g = m.mutable_graph();
  io(g->add_input(), "x", TensorProto::FLOAT, {4});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(TensorProto::EXTERNAL);
  auto* e = w->add_external_data();
  e->set_key("location");
  e->set_value(location);
  node(g, "Add", {"x", "w"}, {"y"});
  io(g->add_output(), "y", TensorProto::FLOAT, {4});
  ::mkdir(dir.c_str(), 0755);
  save(m, dir + "/model.onnx");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 3 && a[0] == "chain") chain(std::atoi(a[1].c_str()), a[2]);
  else if (a.size() == 2 && a[0] == "softmax_nan") softmax_nan(a[1]);
  else if (a.size() == 2 && a[0] == "reduce_big") reduce_big(a[1]);
  else if (a.size() == 2 && a[0] == "two_outputs") two_outputs(a[1]);
  else if (a.size() == 2 && a[0] == "one_input_add") one_input_add(a[1]);
  else if (a.size() == 3 && a[0] == "external") external(a[1], a[2]);
  else {
    std::fprintf(stderr, "usage: make_models chain N DIR | softmax_nan DIR | reduce_big DIR | two_outputs DIR | "
                         "one_input_add DIR | external DIR LOCATION\n");
    return 2;
  }
  return 0;
}
