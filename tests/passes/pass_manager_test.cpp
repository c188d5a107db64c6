// The pass registry, the pass manager (names, fixpoint groups, dumps, timings, verification) and the
// default pipeline on a small graph.
#include <gtest/gtest.h>

#include <sstream>

#include "ir/error.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "test_util.h"

namespace onnxc::testing {
namespace {

const char* kSmall = R"(
  graph main(%x: f32[batch,8]) {
    %a: i64[1] = Constant() {value_ints=[2]}
    %b: i64[1] = Constant() {value_ints=[4]}
    %s: i64[2] = Concat(%b, %a) {axis=0}
    %dead: f32[batch,8] = Neg(%x)
    %sh: i64[2] = Shape(%x)
    %n: i64[1] = Slice(%sh, %zero, %one)
    %t: i64[3] = Concat(%n, %s) {axis=0}
    %y = Reshape(%x, %t)
    return %y
  }
)";

std::string small_text() {
  std::string t = kSmall;
  // Slice bounds as initializers (the parser wants values defined before use).
  t.replace(t.find("    %a:"), 0, "    %zero = const i64[1] {0}\n    %one = const i64[1] {1}\n");
  return t;
}

TEST(PassRegistry, EveryPassHasNameSummaryAndFactory) {
  std::set<std::string> names;
  for (const passes::PassInfo& p : passes::pass_registry()) {
    EXPECT_TRUE(names.insert(p.name).second) << "duplicate " << p.name;
    EXPECT_FALSE(p.summary.empty()) << p.name;
    EXPECT_EQ(p.summary.find('\n'), std::string::npos) << p.name;
    EXPECT_TRUE(p.make && p.make()) << p.name;
  }
  for (const std::string& n : passes::default_pipeline()) {
    if (n.rfind("fixpoint(", 0) == 0) continue;
    EXPECT_TRUE(passes::find_pass(n)) << n;
  }
  EXPECT_EQ(passes::find_pass("no_such_pass"), nullptr);
}

TEST(PassManager, UnknownPassIsAUserErrorListingKnownPasses) {
  ir::Model m = parse_model(dedent(small_text()));
  passes::PassManager pm;
  try {
    pm.run(m, {"dce", "fixpoint(cse, constant_foldin)"});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown pass 'constant_foldin'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("constant_folding"), std::string::npos) << msg;
  }
}

TEST(PassManager, DumpsAfterNamedPassesAndTimesEachPass) {
  ir::Model m = parse_model(dedent(small_text()));
  std::ostringstream dumps, timings;
  passes::PipelineOptions opt;
  opt.dump_after = {"dce"};
  opt.dump_stream = &dumps;
  opt.timings = &timings;
  opt.verify_each = true;
  std::vector<std::string> seen;
  opt.after_pass = [&](const std::string& name, bool, const ir::Model&) { seen.push_back(name); };
  passes::run_pipeline(m, passes::default_pipeline(), opt);
  // The fixpoint group ran until a round changed nothing: round 1 changes, round 2 does not.
  EXPECT_GE(std::count(seen.begin(), seen.end(), "dce"), 2);
  EXPECT_EQ(seen.front(), "infer_shapes");
  EXPECT_NE(dumps.str().find("// ---- IR after dce ----"), std::string::npos) << dumps.str();
  EXPECT_NE(dumps.str().find("// ---- IR after dce (unchanged) ----"), std::string::npos) << dumps.str();
  EXPECT_EQ(dumps.str().find("after cse"), std::string::npos);
  for (const char* p : {"infer_shapes", "constant_folding", "simplify_shapes", "cse", "dce", "total"})
    EXPECT_NE(timings.str().find(p), std::string::npos) << p << "\n" << timings.str();
}

TEST(Pipeline, DefaultPipelineOnSmallGraph) {
  ir::Model m = parse_model(dedent(small_text()));
  passes::run_pipeline(m, passes::default_pipeline());
  EXPECT_EQ(ir::to_string(*m.graph), canonical(R"(
    graph main(%x: f32[batch,8]) {
      %t = const i64[3] {0, 4, 2}
      %y: f32[batch,4,2] = Reshape(%x, %t)
      return %y: f32[batch,4,2]
    }
  )"));
}

}  // namespace
}  // namespace onnxc::testing
