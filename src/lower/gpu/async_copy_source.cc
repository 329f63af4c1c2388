// async_copy_source (async_copy_source.h): the value's selects peeled while their false side
// is a zero of the store's type, then the load checked.
#include "dragon/lower/async_copy_source.h"

#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "gpu_ir_util.h"

namespace dragon::lower {
namespace {

// A zero of any type: what cp.async's zero-fill writes.
bool is_zero(const ir::Expr& e) {
  if (const auto* f = e.as<ir::FloatImmNode>()) return f->value == 0.0;
  if (const auto* c = e.as<ir::CastNode>()) return is_zero(c->value);
  std::optional<int64_t> i = ir::as_const_int(e);
  return i && *i == 0;
}

}  // namespace

AsyncCopySource peel_zero_selects(const ir::Expr& value) {
  AsyncCopySource out;
  ir::Expr v = value;
  while (const auto* select = v.as<ir::SelectNode>()) {
    if (!is_zero(select->false_value)) break;
    out.guard = out.guard.defined() ? (out.guard && select->condition) : select->condition;
    v = select->true_value;
  }
  out.load = v.as<ir::BufferLoadNode>();
  return out;
}

std::optional<AsyncCopySource> async_copy_source(const ir::BufferStoreNode* store, std::string* why) {
  auto refuse = [&](std::string reason) -> std::optional<AsyncCopySource> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  if (!gpu::is_shared_scope(store->buffer->scope)) {
    return refuse(fmt::format("it stores to {} in scope '{}', not shared memory", store->buffer->name,
                              store->buffer->scope));
  }
  AsyncCopySource out = peel_zero_selects(store->value);
  if (out.load == nullptr || out.load->buffer->scope != "global" || out.load->buffer->dtype != store->buffer->dtype) {
    return refuse(fmt::format("its store to {} is not a copy of a global buffer of the same type (nor one zero "
                              "where a select's condition fails)",
                              store->buffer->name));
  }
  return out;
}

}  // namespace dragon::lower
