// External tensor data (TensorProto.data_location = EXTERNAL): files beside the model, mapped
// into memory once each, so weights are viewed in place rather than copied. Internal header.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace onnxc::frontend {

class MappedFile;

class ExternalDataReader {
 public:
  // `model_path` names the model in messages; locations are resolved against `base_dir`. A location
  // must be a regular file inside `base_dir`, reached without symbolic links, unless its real path
  // lies in one of `allowed` (folders the user vouched for with --allow-external-path).
  ExternalDataReader(std::string model_path, std::string base_dir, std::vector<std::string> allowed = {})
      : model_path_(std::move(model_path)), base_dir_(std::move(base_dir)), allowed_(std::move(allowed)) {}

  // The tensor stored at `location` (relative to the model's folder), `offset` bytes in, spanning
  // `length` bytes (-1: as many as the dtype and dims need). `what` names the tensor in messages.
  ir::Tensor read(const std::string& what, ir::DType dtype, std::vector<int64_t> dims, const std::string& location,
                  int64_t offset, int64_t length);

 private:
  std::shared_ptr<MappedFile> map(const std::string& what, const std::string& location);
  std::string model_path_, base_dir_;
  std::vector<std::string> allowed_;
  std::map<std::string, std::shared_ptr<MappedFile>> files_;
};

}  // namespace onnxc::frontend
