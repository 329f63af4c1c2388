// PlanMemo (plan_memo.h): a bounded map under a lock.
#include "plan_memo.h"

namespace dragon::schedule::detail {

std::shared_ptr<const void> PlanMemo::find(const Key& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = results_.find(key);
  return it == results_.end() ? nullptr : it->second;
}

void PlanMemo::remember(Key key, std::shared_ptr<const void> result, std::vector<ir::Expr> nodes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (results_.size() >= kMaxResults) {
    results_.clear();
    alive_.clear();
  }
  results_.emplace(std::move(key), std::move(result));
  alive_.insert(alive_.end(), std::make_move_iterator(nodes.begin()), std::make_move_iterator(nodes.end()));
}

}  // namespace dragon::schedule::detail
