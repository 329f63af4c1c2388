// Internal: results of plan analyses that read only IR nodes, shared by a schedule and its
// copies. A copy changes some of the IR and keeps the rest; an analysis of nodes it kept
// gives the same result (the IR is immutable). Keyed by the nodes read, after a tag that
// names the analysis; the memo holds those nodes, so no key can match a later node at a
// reused address. Not a cache of whole plans: each plan decides what it may keep.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "dragon/ir/expr.h"

namespace dragon::schedule::detail {

class PlanMemo {
 public:
  using Key = std::vector<const void*>;

  // The result remembered for `key`, or null.
  std::shared_ptr<const void> find(const Key& key) const;
  // Remembers `result` for `key`, whose nodes `nodes` holds.
  void remember(Key key, std::shared_ptr<const void> result, std::vector<ir::Expr> nodes);

 private:
  // Past this many results the memo starts afresh (a long search makes many versions).
  static constexpr size_t kMaxResults = 4096;
  mutable std::mutex mutex_;  // copies of one schedule may live in several threads
  std::map<Key, std::shared_ptr<const void>> results_;
  std::vector<ir::Expr> alive_;
};

}  // namespace dragon::schedule::detail
