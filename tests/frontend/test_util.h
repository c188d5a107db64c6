// Helpers for frontend tests: scratch folders, small hand-built ModelProtos, error capture.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>
#include <vector>

namespace onnxc::frontend::test {

// A fresh folder under /tmp, removed with everything in it when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::vector<std::string> list() const;  // file names inside, sorted

 private:
  std::string path_;
};

// The UserError message `f` throws; "" if it returns normally. Other exceptions propagate.
std::string user_error_of(const std::function<void()>& f);

void write_bytes(const std::string& path, const std::string& bytes);
std::string read_bytes(const std::string& path);
void write_model(const onnx::ModelProto& m, const std::string& path);

// A model with opset `opset` of the default domain and an empty graph named "main".
onnx::ModelProto new_model(int64_t opset = 17, int64_t ir_version = 8);
// ValueInfo for a tensor; dims as numbers or names ("" for an unknown dim).
onnx::ValueInfoProto tensor_info(const std::string& name, int elem_type, const std::vector<std::string>& dims);
onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "");
onnx::TensorProto float_tensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v);

std::string source_dir();  // the repository root

}  // namespace onnxc::frontend::test
