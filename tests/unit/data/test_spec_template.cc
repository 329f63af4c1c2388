// Op spec templates: arithmetic, word substitution and the errors of bad templates.
#include <gtest/gtest.h>

#include "dragon/support/error.h"
#include "spec_template.h"

namespace dragon::data {
namespace {

const std::vector<std::string> kVars = {"batch", "seq", "hidden", "dtype"};
const std::vector<TemplateValue> kValues = {int64_t{8}, int64_t{1024}, int64_t{768}, std::string("f16")};

std::string expand(const std::string& text) { return SpecTemplate::parse(text, kVars).expand(kValues); }

TEST(SpecTemplate, ArithmeticWithPrecedenceAndParentheses) {
  EXPECT_EQ(expand("matmul:m={batch*seq},n={3*hidden},k={hidden},dtype={dtype}"),
            "matmul:m=8192,n=2304,k=768,dtype=f16");
  EXPECT_EQ(expand("x={1+2*3}"), "x=7");
  EXPECT_EQ(expand("x={(1+2)*3}"), "x=9");
  EXPECT_EQ(expand("x={hidden/12 - 1}"), "x=63");
}

TEST(SpecTemplate, DivisionFloorsAndModulo) {
  EXPECT_EQ(expand("x={15/2},y={(15+1)/2},z={15%4}"), "x=7,y=8,z=3");
  EXPECT_EQ(expand("x={(0-7)/2}"), "x=-4");  // floor, as Python's //
}

TEST(SpecTemplate, ReportsUsedVariablesOnce) {
  const SpecTemplate t = SpecTemplate::parse("a={seq*seq},b={batch},c=3", kVars);
  EXPECT_EQ(t.used_variables(), (std::vector<int>{0, 1}));
}

TEST(SpecTemplate, UnknownVariableNamesItAndTheKnownOnes) {
  try {
    SpecTemplate::parse("m={hiden}", kVars);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown variable 'hiden'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("hidden"), std::string::npos) << e.what();
  }
}

TEST(SpecTemplate, SyntaxErrors) {
  EXPECT_THROW(SpecTemplate::parse("m={batch*}", kVars), UserError);
  EXPECT_THROW(SpecTemplate::parse("m={(batch}", kVars), UserError);
  EXPECT_THROW(SpecTemplate::parse("m={batch", kVars), UserError);
  EXPECT_THROW(SpecTemplate::parse("m=batch}", kVars), UserError);
  EXPECT_THROW(SpecTemplate::parse("m={batch seq}", kVars), UserError);
}

TEST(SpecTemplate, WordInArithmeticAndDivisionByZeroAreUserErrors) {
  EXPECT_THROW(expand("m={2*dtype}"), UserError);
  EXPECT_THROW(expand("m={batch/(seq-1024)}"), UserError);
}

}  // namespace
}  // namespace dragon::data
