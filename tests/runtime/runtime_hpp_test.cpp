// The C++ wrapper: RAII handles, typed inputs, exceptions carrying the runtime's status and message.
#include <gtest/gtest.h>

#include "onnxc/runtime.hpp"
#include "tiny_model.h"
#include "tiny_reference.h"

namespace {

TEST(RuntimeHpp, RunsAndCopiesOutputs) {
  onnxc::Model model = onnxc::Model::from_desc(onnxc_model_tiny());
  EXPECT_EQ(model.name(), "tiny");
  EXPECT_EQ(model.num_inputs(), 2u);
  EXPECT_STREQ(model.input(1).name, "m");
  onnxc::Session session(model);
  TinyCase c(2, 5);
  session.set_input(0, c.x.data(), {c.batch, c.seq, 8});
  session.set_input(std::string("m"), c.m.data(), c.m_dims);
  session.run();
  std::vector<float> z = session.output_values<float>(1);
  ASSERT_EQ(z.size(), c.z.size());
  for (size_t i = 0; i < z.size(); i++) EXPECT_NEAR(z[i], c.z[i], 1e-3f * (1 + std::abs(c.z[i])));
  EXPECT_EQ(session.output("p").dtype, ONNXC_DTYPE_BOOL);
}

TEST(RuntimeHpp, ErrorsAreExceptionsWithStatusAndMessage) {
  onnxc::Model model = onnxc::Model::from_desc(onnxc_model_tiny());
  onnxc::Session session(model);
  std::vector<double> wrong(48);
  try {
    session.set_input(0, wrong.data(), {2, 3, 8});
    FAIL() << "expected onnxc::Error";
  } catch (const onnxc::Error &e) {
    EXPECT_EQ(e.status(), ONNXC_ERR_DTYPE_MISMATCH);
    EXPECT_STREQ(e.what(), "input 'x' (index 0): dtype is float64 (11) but the model expects float32 (1)");
  }
  try {
    session.run();
    FAIL() << "expected onnxc::Error";
  } catch (const onnxc::Error &e) {
    EXPECT_EQ(e.status(), ONNXC_ERR_INVALID_ARGUMENT);
  }
  EXPECT_THROW(onnxc::Model::open("/nonexistent.so"), onnxc::Error);
  EXPECT_THROW(session.output_values<int64_t>(0), onnxc::Error);
}

}  // namespace
