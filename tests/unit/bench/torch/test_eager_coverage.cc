// Every op kind of the registry has an eager baseline, and the table names no op kind the
// registry lacks: a new op kind cannot reach `dragon bench` without its reference.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "dragon/ops/op_registry.h"
#include "eager_op_params.h"
#include "eager_op_table.h"

namespace dragon::bench::torch_eager {
namespace {

TEST(EagerOpTable, CoversEveryOpKindOfTheRegistry) {
  std::set<std::string> registered;
  for (const ops::OpKind& kind : ops::OpRegistry::global().kinds()) {
    registered.insert(kind.name);
    const EagerOpEntry* entry = eager_op_table().find(kind.name);
    EXPECT_NE(entry, nullptr) << kind.name << " has no eager baseline";
    if (entry) {
      EXPECT_FALSE(entry->call.empty()) << kind.name;
    }
  }
  for (const auto& [name, entry] : eager_op_table().entries()) {
    EXPECT_TRUE(registered.count(name)) << name << " is in the eager table but not an op kind";
  }
}

TEST(EagerOpParams, ParsesCanonicalSpellingsAndNamesWhatIsWrong) {
  EagerOpParams params("conv2d", {{"size", "16x32"}, {"bias", "true"}, {"eps", "1e-05"}, {"k", "3"}, {"dtype", "bf16"}});
  EXPECT_EQ(params.get_shape("size"), (std::vector<int64_t>{16, 32}));
  EXPECT_TRUE(params.get_bool("bias"));
  EXPECT_DOUBLE_EQ(params.get_float("eps"), 1e-5);
  EXPECT_EQ(params.get_int("k"), 3);
  EXPECT_EQ(params.get_dtype("dtype"), ir::DataType::bf16());
  try {
    params.get_int("size");
    FAIL() << "a shape read as an integer";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "conv2d: parameter size: expected an integer, got '16x32'");
  }
  EXPECT_THROW(params.get_float("missing"), std::runtime_error);
  EXPECT_THROW(params.get_shape("dtype"), std::runtime_error);
}

}  // namespace
}  // namespace dragon::bench::torch_eager
