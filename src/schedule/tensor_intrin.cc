// The tensor intrinsic registry: lookup by name, validation of descriptions on
// registration, and the built-in mma family added on first use. Not the matcher
// (primitive/tensorize.cc) nor the descriptions themselves (tensor_intrin_mma.cc).
#include "dragon/schedule/tensor_intrin.h"

#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "dragon/support/error.h"

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// The innermost realization of `desc` when its body is the root block over a chain of
// loops down to one block whose bindings are exactly those loops, in order; else a
// message saying what is wrong.
const BlockRealizeNode* find_desc_realize(const PrimFunc& desc, std::string* problem) {
  const BlockNode* root = desc.defined() ? desc.root_block() : nullptr;
  if (root == nullptr) {
    *problem = "the description has no root block";
    return nullptr;
  }
  std::vector<const ForNode*> loops;
  Stmt s = root->body;
  while (const auto* loop = s.as<ForNode>()) {
    loops.push_back(loop);
    s = loop->body;
  }
  const auto* realize = s.as<BlockRealizeNode>();
  if (realize == nullptr) {
    *problem = "the root block does not hold a chain of loops down to one block";
    return nullptr;
  }
  const BlockNode* block = realize->block.get();
  if (block->iter_vars.size() != loops.size()) {
    *problem = fmt::format("block '{}' has {} iteration variables under {} loops", block->name,
                           block->iter_vars.size(), loops.size());
    return nullptr;
  }
  for (size_t i = 0; i < loops.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    const auto* bound = realize->iter_values[i].as<VarNode>();
    if (bound != loops[i]->loop_var.get() || !is_const_int(iv.dom.min, 0) || !is_const_int(loops[i]->min, 0) ||
        !as_const_int(iv.dom.extent) || !as_const_int(loops[i]->extent) ||
        *as_const_int(iv.dom.extent) != *as_const_int(loops[i]->extent)) {
      *problem = fmt::format("iteration variable '{}' of block '{}' is not bound to loop {} over the same range from 0",
                             iv.var.name(), block->name, i);
      return nullptr;
    }
  }
  if (!is_const_int(realize->predicate, 1) && realize->predicate.defined()) {
    *problem = "the description's block has a predicate";
    return nullptr;
  }
  return realize;
}

class Registry {
 public:
  static Registry& instance() {
    static Registry registry;
    return registry;
  }

  const TensorIntrin* find(std::string_view name) {
    std::lock_guard lock(mutex_);
    load_builtins();
    auto it = intrins_.find(name);
    return it == intrins_.end() ? nullptr : it->second.get();
  }

  std::vector<std::string> names() {
    std::lock_guard lock(mutex_);
    load_builtins();
    std::vector<std::string> out;
    for (const auto& [name, intrin] : intrins_) out.push_back(name);
    return out;
  }

  void add(TensorIntrin intrin) {
    std::lock_guard lock(mutex_);
    load_builtins();
    add_locked(std::move(intrin));
  }

 private:
  void load_builtins() {
    if (builtins_loaded_) return;
    builtins_loaded_ = true;
    for (TensorIntrin& intrin : detail::builtin_mma_intrins()) add_locked(std::move(intrin));
    for (TensorIntrin& intrin : detail::builtin_wgmma_intrins()) add_locked(std::move(intrin));
  }

  void add_locked(TensorIntrin intrin) {
    if (intrin.name.empty()) throw UserError("tensor intrinsic: the name is empty");
    if (intrins_.count(intrin.name)) {
      throw UserError(fmt::format("tensor intrinsic '{}' is already registered", intrin.name));
    }
    std::string problem;
    if (find_desc_realize(intrin.desc, &problem) == nullptr) {
      throw UserError(fmt::format("tensor intrinsic '{}': {}", intrin.name, problem));
    }
    if (intrin.scopes.size() != intrin.desc->params.size()) {
      throw UserError(fmt::format("tensor intrinsic '{}': {} scope sets for {} parameters", intrin.name,
                                  intrin.scopes.size(), intrin.desc->params.size()));
    }
    for (size_t p = 0; p < intrin.scopes.size(); ++p) {
      if (intrin.scopes[p].empty()) {
        throw UserError(fmt::format("tensor intrinsic '{}': no scope allowed for parameter '{}'", intrin.name,
                                    intrin.desc->params[p].buffer->name));
      }
    }
    std::string name = intrin.name;
    intrins_.emplace(std::move(name), std::make_unique<TensorIntrin>(std::move(intrin)));
  }

  std::mutex mutex_;
  bool builtins_loaded_ = false;
  // unique_ptr: find() hands out pointers that later registrations must not move.
  std::map<std::string, std::unique_ptr<TensorIntrin>, std::less<>> intrins_;
};

}  // namespace

const BlockRealizeNode* TensorIntrin::desc_realize() const {
  std::string problem;
  const BlockRealizeNode* realize = find_desc_realize(desc, &problem);
  DRAGON_CHECK(realize != nullptr, "intrinsic '{}' was registered with a bad description: {}", name, problem);
  return realize;
}

const TensorIntrin* find_tensor_intrin(std::string_view name) { return Registry::instance().find(name); }

std::vector<std::string> tensor_intrin_names() { return Registry::instance().names(); }

void register_tensor_intrin(TensorIntrin intrin) { Registry::instance().add(std::move(intrin)); }

}  // namespace dragon::schedule
