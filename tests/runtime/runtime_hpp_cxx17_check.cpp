// Compile-only: runtime.hpp builds as C++17 with -pedantic (users need not be on C++20).
#include "onnxc/runtime.hpp"

int onnxc_runtime_hpp_cxx17_check(const onnxc_model_desc *desc) {
  onnxc::Model model = onnxc::Model::from_desc(desc);
  onnxc::Session session(model);
  float x = 0;
  session.set_input(0, &x, {1});
  return static_cast<int>(model.num_inputs());
}
