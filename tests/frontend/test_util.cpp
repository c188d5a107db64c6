// Helpers for frontend tests.
#include "test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/error.h"

namespace onnxc::frontend::test {

TempDir::TempDir() {
  char tmpl[] = "/tmp/onnxc_frontend_test_XXXXXX";
  char* p = ::mkdtemp(tmpl);
  if (!p) throw std::runtime_error("mkdtemp failed");
  path_ = p;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> TempDir::list() const {
  std::vector<std::string> r;
  for (const auto& e : std::filesystem::directory_iterator(path_)) r.push_back(e.path().filename().string());
  std::sort(r.begin(), r.end());
  return r;
}

std::string user_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "a user error should be one line: " << msg;
    return msg.empty() ? "(empty message)" : msg;
  }
  return "";
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_model(const onnx::ModelProto& m, const std::string& path) { write_bytes(path, m.SerializeAsString()); }

onnx::ModelProto new_model(int64_t opset, int64_t ir_version) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("main");
  return m;
}

onnx::ValueInfoProto tensor_info(const std::string& name, int elem_type, const std::vector<std::string>& dims) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  auto* t = vi.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (const auto& d : dims) {
    auto* pd = shape->add_dim();
    if (d.empty()) continue;
    if (std::all_of(d.begin(), d.end(), ::isdigit)) pd->set_dim_value(std::stoll(d));
    else pd->set_dim_param(d);
  }
  return vi;
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  if (!name.empty()) n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

onnx::TensorProto float_tensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t.add_dims(d);
  for (float f : v) t.add_float_data(f);
  return t;
}

std::string source_dir() { return ONNXC_SOURCE_DIR; }

}  // namespace onnxc::frontend::test
