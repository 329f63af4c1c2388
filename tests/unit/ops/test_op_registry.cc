// Op spec parsing: canonical specs, defaults, and user errors that name what is wrong.
#include <gtest/gtest.h>

#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"
#include "op_test_util.h"

namespace dragon::ops {
namespace {
using testing::user_error_of;

TEST(OpSpec, CanonicalSpecListsEveryParameter) {
  Workload w = OpRegistry::global().make_workload("matmul:k=64,m=32,n=16");
  EXPECT_EQ(w.spec, "matmul:m=32,n=16,k=64,trans_a=false,trans_b=false,dtype=f32");
  EXPECT_EQ(OpRegistry::global().make_workload(w.spec).spec, w.spec);
  EXPECT_EQ(w.func->name, "matmul");
}

TEST(OpSpec, UnknownOpListsValidOps) {
  std::string message = user_error_of("matmull:m=4");
  EXPECT_NE(message.find("unknown op 'matmull'"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean 'matmul'"), std::string::npos) << message;
  EXPECT_NE(message.find("valid ops:"), std::string::npos) << message;
}

TEST(OpSpec, UnknownParameterListsValidOnes) {
  std::string message = user_error_of("matmul:m=4,q=3");
  EXPECT_NE(message.find("no parameter 'q'"), std::string::npos) << message;
  EXPECT_NE(message.find("valid: m, n, k, trans_a, trans_b, dtype"), std::string::npos) << message;
  EXPECT_NE(message.find("<spec>:1:12"), std::string::npos) << message;
}

TEST(OpSpec, BadValuesNameTheParameter) {
  EXPECT_NE(user_error_of("matmul:m=abc").find("parameter m (int): 'abc' is not an integer"), std::string::npos);
  EXPECT_NE(user_error_of("matmul:m=0").find("below the minimum 1"), std::string::npos);
  EXPECT_NE(user_error_of("matmul:dtype=f8").find("'f8' is not one of f32, f16, bf16, f64"), std::string::npos);
  EXPECT_NE(user_error_of("matmul:trans_a=maybe").find("not a boolean"), std::string::npos);
  EXPECT_NE(user_error_of("matmul:m=4,m=5").find("given twice"), std::string::npos);
  EXPECT_NE(user_error_of("matmul:").find("nothing after ':'"), std::string::npos);
  EXPECT_NE(user_error_of("matmul:m").find("expected key=value"), std::string::npos);
}

TEST(OpSpec, EveryOpBuildsWithItsDefaults) {
  for (const OpKind& op : OpRegistry::global().kinds()) {
    bool all_defaults = true;
    for (const OpParam& p : op.params) all_defaults &= p.default_value.has_value();
    if (!all_defaults) continue;
    Workload w = OpRegistry::global().make_workload(op.name);
    EXPECT_TRUE(w.func.defined()) << op.name;
    EXPECT_FALSE(w.func.outputs().empty()) << op.name;
  }
}

}  // namespace
}  // namespace dragon::ops
