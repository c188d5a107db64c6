// The shared argument parser: long/short options, values, repeats, positionals, errors, help.
#include <gtest/gtest.h>

#include "tools/args.h"

namespace onnxc::tools {
namespace {

struct Cli {
  std::string model, out;
  int jobs = 0;
  double rtol = 0;
  bool quiet = false;
  std::vector<std::string> inputs, rest;
  ArgParser p{"demo", "MODEL [options]", "A demo command."};
  Cli() {
    p.positional("MODEL", "the model", &model);
    p.positional_list("REST", "more", &rest, 0);
    p.option("output", 'o', "DIR", "output folder", &out);
    p.option("jobs", 'j', "N", "jobs", &jobs);
    p.option("rtol", 0, "R", "tolerance", &rtol);
    p.option_list("input", 'i', "NAME=FILE", "an input\nsecond line", &inputs);
    p.flag("quiet", 'q', "quiet", &quiet);
  }
};

TEST(Args, ParsesLongShortAndAttachedForms) {
  Cli c;
  ASSERT_TRUE(c.p.parse({"m.onnx", "-o", "out", "--jobs=3", "-i", "a=1", "--input", "b=2", "-q", "--rtol", "1e-4",
                         "x", "--", "-y"}));
  EXPECT_EQ(c.model, "m.onnx");
  EXPECT_EQ(c.out, "out");
  EXPECT_EQ(c.jobs, 3);
  EXPECT_DOUBLE_EQ(c.rtol, 1e-4);
  EXPECT_TRUE(c.quiet);
  EXPECT_EQ(c.inputs, (std::vector<std::string>{"a=1", "b=2"}));
  EXPECT_EQ(c.rest, (std::vector<std::string>{"x", "-y"}));
  Cli d;
  ASSERT_TRUE(d.p.parse({"-j4", "-oDIR", "m"}));
  EXPECT_EQ(d.jobs, 4);
  EXPECT_EQ(d.out, "DIR");
}

void expect_usage_error(std::vector<std::string> args, const std::string& needle) {
  Cli c;
  try {
    c.p.parse(args);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Args, ReportsBadCommandLines) {
  expect_usage_error({"m", "--nope"}, "unknown option '--nope'");
  expect_usage_error({"m", "-z"}, "unknown option '-z'");
  expect_usage_error({"m", "--output"}, "needs a value");
  expect_usage_error({"m", "--jobs", "x"}, "'x' is not an integer");
  expect_usage_error({"m", "--rtol", "1e"}, "not a number");
  expect_usage_error({"m", "--quiet=yes"}, "takes no value");
  expect_usage_error({}, "missing MODEL");
}

TEST(Args, HelpListsEverything) {
  Cli c;
  std::string h = c.p.help();
  EXPECT_EQ(h.rfind("Usage: onnxc demo MODEL [options]\n", 0), 0u);
  for (const char* s : {"MODEL", "REST...", "-o, --output DIR", "--rtol R", "-i, --input NAME=FILE", "-h, --help"}) {
    EXPECT_NE(h.find(s), std::string::npos) << s;
  }
  // A multi-line help text stays in its column.
  EXPECT_NE(h.find("\n                          second line"), std::string::npos) << h;
}

TEST(Args, ParseDims) {
  EXPECT_EQ(parse_dims("1x128x64", "s"), (std::vector<int64_t>{1, 128, 64}));
  EXPECT_EQ(parse_dims("7", "s"), (std::vector<int64_t>{7}));
  EXPECT_EQ(parse_dims("scalar", "s"), (std::vector<int64_t>{}));
  EXPECT_THROW(parse_dims("1xx2", "s"), UsageError);
  EXPECT_THROW(parse_dims("-1", "s"), UsageError);
}

}  // namespace
}  // namespace onnxc::tools
