// The tensor intrinsic registry: the built-in mma family is there with well-formed
// descriptions and scopes; registering a duplicate or a malformed description is refused.
#include <gtest/gtest.h>

#include <algorithm>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/schedule/tensor_intrin.h"
#include "dragon/support/error.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;

TEST(TensorIntrin, BuiltinsAreRegistered) {
  std::vector<std::string> names = tensor_intrin_names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* name :
       {"mma_m16n8k16_f16f16f32", "mma_m16n8k16_f16f16f32_trans_b", "mma_m16n8k16_bf16bf16f32",
        "mma_m16n8k16_bf16bf16f32_trans_b", "mma_fill_m16n8_f32", "mma_store_m16n8_f32", "mma_ldmatrix_a_m16k16_f16",
        "mma_ldmatrix_a_m16k16_bf16", "mma_ldmatrix_b_k16n8_f16", "mma_ldmatrix_b_k16n8_bf16",
        "mma_ldmatrix_b_trans_n8k16_f16", "mma_ldmatrix_b_trans_n8k16_bf16"}) {
    SCOPED_TRACE(name);
    const TensorIntrin* intrin = find_tensor_intrin(name);
    ASSERT_NE(intrin, nullptr);
    EXPECT_EQ(intrin->name, name);
    EXPECT_EQ(intrin->scopes.size(), intrin->desc->params.size());
    EXPECT_FALSE(intrin->summary.empty());
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end());
  }
  EXPECT_EQ(find_tensor_intrin("mma_m16n8k16_f32f32f32"), nullptr);
}

// One 16-bit operand beside an f32 one: named by both types, described as the f32 tile with
// the 16-bit operand widened, and parsed back into what made the name.
TEST(TensorIntrin, Tf32MmaTakesOne16BitOperandWidened) {
  EXPECT_EQ(tf32_mma_intrin_name(1, false, "f32", "bf16"), "mma_m16n8k8_tf32_f32bf16f32");
  EXPECT_EQ(tf32_mma_intrin_name(3, true, "f16", "f32"), "mma_m16n8k8_3xtf32_f16f32f32_trans_b");
  EXPECT_THROW(tf32_mma_intrin_name(1, false, "bf16", "bf16"), UserError);
  EXPECT_THROW(tf32_mma_intrin_name(1, false, "f32", "i8"), UserError);
  for (int passes : {1, 3}) {
    for (bool trans_b : {false, true}) {
      for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
               {"f32", "f32"}, {"f32", "bf16"}, {"bf16", "f32"}, {"f32", "f16"}, {"f16", "f32"}}) {
        const std::string name = tf32_mma_intrin_name(passes, trans_b, a, b);
        std::optional<Tf32Mma> parsed = parse_tf32_mma_intrin_name(name);
        ASSERT_TRUE(parsed.has_value()) << name;
        EXPECT_EQ(parsed->passes, passes) << name;
        EXPECT_EQ(parsed->trans_b, trans_b) << name;
        EXPECT_EQ(parsed->a, a) << name;
        EXPECT_EQ(parsed->b, b) << name;
        const TensorIntrin* mma = find_tensor_intrin(name);
        ASSERT_NE(mma, nullptr) << name;
        EXPECT_EQ(ir::to_string(mma->desc->params[0].buffer->dtype), a) << name;
        EXPECT_EQ(ir::to_string(mma->desc->params[1].buffer->dtype), b) << name;
      }
    }
  }
  const std::string text = ir::print_function(find_tensor_intrin("mma_m16n8k8_tf32_f32bf16f32")->desc);
  EXPECT_TRUE(has_line(text, "C[vi, vj] = C[vi, vj] + A[vi, vk] * f32(B[vk, vj])")) << text;
  EXPECT_FALSE(parse_tf32_mma_intrin_name("mma_m16n8k16_f16f16f32").has_value());
  EXPECT_FALSE(parse_tf32_mma_intrin_name("mma_m16n8k8_tf32_bf16bf16f32").has_value());
  for (const char* load : {"mma_load_a_m16k8_bf16", "mma_load_b_k8n8_f16", "mma_load_b_trans_n8k8_bf16"}) {
    EXPECT_NE(find_tensor_intrin(load), nullptr) << load;
  }
}

TEST(TensorIntrin, Tf32FamilyIsTheExactF32TileAndSaysItRounds) {
  EXPECT_EQ(tf32_mma_intrin_name(1, false), "mma_m16n8k8_tf32tf32f32");
  EXPECT_EQ(tf32_mma_intrin_name(3, true), "mma_m16n8k8_3xtf32f32_trans_b");
  EXPECT_THROW(tf32_mma_intrin_name(2, false), UserError);
  for (int passes : {1, 3}) {
    for (bool trans_b : {false, true}) {
      const TensorIntrin* mma = find_tensor_intrin(tf32_mma_intrin_name(passes, trans_b));
      ASSERT_NE(mma, nullptr);
      const std::string text = ir::print_function(mma->desc);
      EXPECT_TRUE(has_line(text, "block C [vi: S 16 = i, vj: S 8 = j, vk: R 8 = k] {")) << text;
      EXPECT_TRUE(has_line(text, trans_b ? "C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]"
                                         : "C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]"))
          << text;
      // The summary says plainly that the instruction rounds what the description does not.
      EXPECT_NE(mma->summary.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
      EXPECT_NE(mma->summary.find("cvt.rna.tf32.f32"), std::string::npos);
      EXPECT_NE(mma->summary.find("TF32 rounds the operands"), std::string::npos) << mma->summary;
    }
  }
  for (const char* load : {"mma_load_a_m16k8_f32", "mma_load_b_k8n8_f32", "mma_load_b_trans_n8k8_f32"}) {
    const TensorIntrin* intrin = find_tensor_intrin(load);
    ASSERT_NE(intrin, nullptr) << load;
    EXPECT_EQ(intrin->scopes[0], (std::vector<std::string>{"shared", "shared.dyn"}));
    EXPECT_EQ(intrin->desc->params[0].buffer->dtype, ir::DataType::f32());
  }
}

TEST(TensorIntrin, MmaDescriptionIsTheTileComputation) {
  const TensorIntrin* mma = find_tensor_intrin("mma_m16n8k16_bf16bf16f32_trans_b");
  ASSERT_NE(mma, nullptr);
  const std::string text = ir::print_function(mma->desc);
  EXPECT_TRUE(has_line(text, "func mma_m16n8k16_bf16bf16f32_trans_b(in A: bf16[16, 16], in B: bf16[8, 16], "
                             "inout C: f32[16, 8]) {"))
      << text;
  EXPECT_TRUE(has_line(text, "block C [vi: S 16 = i, vj: S 8 = j, vk: R 16 = k] {")) << text;
  EXPECT_TRUE(has_line(text, "C[vi, vj] = C[vi, vj] + f32(A[vi, vk]) * f32(B[vj, vk])")) << text;
  const ir::BlockNode* block = mma->desc_realize()->block.get();
  EXPECT_EQ(block->name, "C");
  EXPECT_FALSE(block->init.defined());
  EXPECT_EQ(mma->scopes, (std::vector<std::vector<std::string>>{{"warp"}, {"warp"}, {"warp"}}));
  const TensorIntrin* store = find_tensor_intrin("mma_store_m16n8_f32");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->scopes[1], (std::vector<std::string>{"shared", "shared.dyn", "global"}));
  const TensorIntrin* load = find_tensor_intrin("mma_ldmatrix_b_k16n8_f16");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->scopes[0], (std::vector<std::string>{"shared", "shared.dyn"}));
  EXPECT_TRUE(has_line(ir::print_function(load->desc), "block F [vk: S 16 = r, vj: S 8 = c] {"));
}

constexpr const char* kScale = R"(func scale4(in X: f32[4], out Y: f32[4]) {
  block root {
    for i in 4 {
      block Y [vi: S 4 = i] {
        reads X[vi]
        writes Y[vi]
        Y[vi] = X[vi] * 2f32
      }
    }
  }
}
)";

constexpr const char* kNoLoops = R"(func bad(in X: f32[4], out Y: f32[4]) {
  block root {
    for i in 4 {
      Y[i] = X[i]
    }
  }
}
)";

TEST(TensorIntrin, RegistrationChecksItsInput) {
  register_tensor_intrin(TensorIntrin{"test_scale4_f32", ir::parse_function(kScale), {{"global"}, {"global"}}, "test"});
  ASSERT_NE(find_tensor_intrin("test_scale4_f32"), nullptr);
  auto expect_refused = [](TensorIntrin intrin, const std::string& piece) {
    try {
      register_tensor_intrin(std::move(intrin));
      ADD_FAILURE() << "expected a UserError mentioning " << piece;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(piece), std::string::npos) << e.what();
    }
  };
  expect_refused(TensorIntrin{"test_scale4_f32", ir::parse_function(kScale), {{"global"}, {"global"}}, ""},
                 "already registered");
  expect_refused(TensorIntrin{"test_scale4_one_scope", ir::parse_function(kScale), {{"global"}}, ""},
                 "1 scope sets for 2 parameters");
  expect_refused(TensorIntrin{"test_scale4_empty_scope", ir::parse_function(kScale), {{"global"}, {}}, ""},
                 "no scope allowed");
  expect_refused(TensorIntrin{"test_no_block", ir::parse_function(kNoLoops), {{"global"}, {"global"}}, ""},
                 "chain of loops down to one block");
  expect_refused(TensorIntrin{"", ir::parse_function(kScale), {{"global"}, {"global"}}, ""}, "name is empty");
  EXPECT_EQ(find_tensor_intrin("test_scale4_one_scope"), nullptr);
}

}  // namespace
}  // namespace dragon::schedule
