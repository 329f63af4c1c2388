// async_copy_source (lower/async_copy_source.h): which stores cp.async can issue, the
// guard of a padded gather (selects with a zero, nested, and-ed), and why the others are
// not copies.
#include <gtest/gtest.h>

#include <string>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/async_copy_source.h"

namespace dragon::lower {
namespace {

const ir::DataType f32 = ir::DataType::f32();
const ir::DataType i32 = ir::DataType::i32();

struct Buffers {
  ir::Buffer global = ir::Buffer::make("X", f32, {64}, "global");
  ir::Buffer shared = ir::Buffer::make("X_shared", f32, {16}, "shared.dyn");
  ir::Buffer local = ir::Buffer::make("X_local", f32, {16}, "local");
  ir::Buffer halves = ir::Buffer::make("H", ir::DataType::f16(), {64}, "global");
  ir::Var i{"i", i32};
};

ir::Stmt store(const ir::Buffer& into, ir::Expr value, const ir::Var& i) {
  return ir::BufferStoreNode::make(into, std::move(value), {i});
}

std::string why_not(const ir::Stmt& s) {
  std::string why;
  EXPECT_FALSE(async_copy_source(s.as<ir::BufferStoreNode>(), &why).has_value());
  return why;
}

TEST(AsyncCopySource, APlainCopyIntoSharedMemoryHasNoGuard) {
  Buffers b;
  ir::Stmt s = store(b.shared, ir::BufferLoadNode::make(b.global, {b.i * 3 + 1}), b.i);
  std::optional<AsyncCopySource> copy = async_copy_source(s.as<ir::BufferStoreNode>());
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(copy->load->buffer.get(), b.global.get());
  EXPECT_FALSE(copy->guard.defined());
}

TEST(AsyncCopySource, NestedSelectsOfZeroBecomeOneGuard) {
  Buffers b;
  ir::Expr inner = ir::select(b.i >= ir::make_const(i32, 1), ir::BufferLoadNode::make(b.global, {b.i - 1}),
                              ir::make_const(f32, 0));
  ir::Stmt s = store(b.shared, ir::select(b.i < ir::make_const(i32, 9), inner, ir::make_const(f32, 0)), b.i);
  std::optional<AsyncCopySource> copy = async_copy_source(s.as<ir::BufferStoreNode>());
  ASSERT_TRUE(copy.has_value());
  ASSERT_TRUE(copy->guard.defined());
  const std::string guard = ir::print_expr(copy->guard);
  EXPECT_NE(guard.find("9"), std::string::npos) << guard;
  EXPECT_NE(guard.find("1"), std::string::npos) << guard;
  EXPECT_NE(guard.find("&&"), std::string::npos) << guard;
}

TEST(AsyncCopySource, OtherStoresAreNotCopiesAndSayWhy) {
  Buffers b;
  ir::Expr load = ir::BufferLoadNode::make(b.global, {b.i});
  // A select whose other value is not zero: cp.async can only fill zeros.
  EXPECT_NE(why_not(store(b.shared, ir::select(b.i < ir::make_const(i32, 9), load, ir::make_const(f32, 1)), b.i))
                .find("not a copy"),
            std::string::npos);
  // Into registers, not shared memory.
  EXPECT_NE(why_not(store(b.local, load, b.i)).find("scope 'local'"), std::string::npos);
  // Computed, or converted on the way.
  EXPECT_NE(why_not(store(b.shared, load * ir::make_const(f32, 2), b.i)).find("not a copy"), std::string::npos);
  EXPECT_NE(why_not(store(b.shared, ir::cast(f32, ir::BufferLoadNode::make(b.halves, {b.i})), b.i)).find("same type"),
            std::string::npos);
  // From shared memory itself.
  EXPECT_NE(why_not(store(b.shared, ir::BufferLoadNode::make(b.shared, {b.i}), b.i)).find("global"),
            std::string::npos);
}

}  // namespace
}  // namespace dragon::lower
