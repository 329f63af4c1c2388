// Building, combining and rebuilding canonical affine forms.
#include "linear_form.h"

#include <algorithm>

#include "dragon/ir/op.h"
#include "expr_equal.h"
#include "interval.h"

namespace dragon::ir::simplify_detail {
namespace {

bool fits(DataType type, int64_t v) { return v >= int_min_value(type) && v <= int_max_value(type); }

// (dividend, divisor) of a floordiv/floormod (or truncdiv/truncmod) by a constant.
struct DivParts {
  Expr dividend;
  int64_t divisor = 0;
  bool floor = true;
};

std::optional<DivParts> div_parts(const Expr& e, bool want_div) {
  auto parts = [](const Expr& a, const Expr& b, bool floor) -> std::optional<DivParts> {
    auto c = as_const_int(b);
    if (!c || *c == 0) return std::nullopt;
    return DivParts{a, *c, floor};
  };
  if (want_div) {
    if (const auto* d = e.as<FloorDivNode>()) return parts(d->a, d->b, true);
    if (const auto* d = e.as<DivNode>()) return parts(d->a, d->b, false);
  } else {
    if (const auto* m = e.as<FloorModNode>()) return parts(m->a, m->b, true);
    if (const auto* m = e.as<ModNode>()) return parts(m->a, m->b, false);
  }
  return std::nullopt;
}

}  // namespace

std::optional<LinearForm> LinearForm::from_expr(const Expr& e) {
  DataType type = e.dtype();
  if (!type.is_int() || !type.is_scalar()) return std::nullopt;
  LinearForm form(type);
  if (auto c = as_const_int(e)) {
    form.constant_ = *c;
    return form;
  }
  if (const auto* add = e.as<AddNode>()) {
    auto a = from_expr(add->a);
    auto b = from_expr(add->b);
    if (!a || !b || !a->add(*b, 1)) return std::nullopt;
    return a;
  }
  if (const auto* sub = e.as<SubNode>()) {
    auto a = from_expr(sub->a);
    auto b = from_expr(sub->b);
    if (!a || !b || !a->add(*b, -1)) return std::nullopt;
    return a;
  }
  if (const auto* mul = e.as<MulNode>()) {
    auto a = from_expr(mul->a);
    auto b = from_expr(mul->b);
    if (!a || !b) return std::nullopt;
    if (b->is_constant()) {
      if (!a->scale(b->constant_)) return std::nullopt;
      return a;
    }
    if (a->is_constant()) {
      if (!b->scale(a->constant_)) return std::nullopt;
      return b;
    }
  }
  if (!form.add_term(e, 1)) return std::nullopt;
  return form;
}

bool LinearForm::add_term(const Expr& term, int64_t coeff) {
  for (size_t i = 0; i < terms_.size(); ++i) {
    if (!deep_equal(terms_[i].term, term)) continue;
    auto sum = checked_add(terms_[i].coeff, coeff);
    if (!sum) return false;
    if (*sum == 0) {
      terms_.erase(terms_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      terms_[i].coeff = *sum;
    }
    return true;
  }
  if (coeff != 0) terms_.push_back(LinearTerm{term, coeff});
  return true;
}

bool LinearForm::add_constant(int64_t value) {
  auto sum = checked_add(constant_, value);
  if (!sum) return false;
  constant_ = *sum;
  return true;
}

bool LinearForm::add(const LinearForm& other, int64_t factor) {
  for (const LinearTerm& t : other.terms_) {
    auto c = checked_mul(t.coeff, factor);
    if (!c || !add_term(t.term, *c)) return false;
  }
  auto c = checked_mul(other.constant_, factor);
  return c && add_constant(*c);
}

bool LinearForm::scale(int64_t factor) {
  if (factor == 0) {
    terms_.clear();
    constant_ = 0;
    return true;
  }
  for (LinearTerm& t : terms_) {
    auto c = checked_mul(t.coeff, factor);
    if (!c) return false;
    t.coeff = *c;
  }
  auto c = checked_mul(constant_, factor);
  if (!c) return false;
  constant_ = *c;
  return true;
}

bool LinearForm::replace_pair(size_t i, size_t j, const LinearForm& replacement, int64_t factor) {
  LinearForm rest = *this;
  size_t first = std::min(i, j), second = std::max(i, j);
  rest.terms_.erase(rest.terms_.begin() + static_cast<std::ptrdiff_t>(second));
  rest.terms_.erase(rest.terms_.begin() + static_cast<std::ptrdiff_t>(first));
  if (!rest.add(replacement, factor)) return false;
  *this = std::move(rest);
  return true;
}

bool LinearForm::merge_div_mod_pairs() {
  // c * div(e, c) + mod(e, c) == e for floor and for truncating division alike; and, so
  // that an index unfused into three or more variables folds back step by step (a
  // convolution's reduction k read as (ci, kh, kw): 9 * div(k, 9) + 3 * mod(div(k, 3), 3)
  // + mod(k, 3) is k), c2 * mod(div(e, c2), c1) + mod(e, c2) == mod(e, c1 * c2) for
  // positive c1, c2 (both forms: the truncating ones are odd in e and agree with floor's
  // where e >= 0).
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t i = 0; i < terms_.size() && !merged; ++i) {
      auto outer = div_parts(terms_[i].term, false);
      if (!outer || outer->divisor <= 0) continue;
      auto inner_div = div_parts(outer->dividend, true);
      if (!inner_div || inner_div->floor != outer->floor || inner_div->divisor <= 0) continue;
      for (size_t j = 0; j < terms_.size() && !merged; ++j) {
        auto mod = div_parts(terms_[j].term, false);
        if (j == i || !mod || mod->floor != outer->floor || mod->divisor != inner_div->divisor ||
            !deep_equal(mod->dividend, inner_div->dividend)) {
          continue;
        }
        auto expected = checked_mul(terms_[j].coeff, inner_div->divisor);
        auto divisor = checked_mul(outer->divisor, inner_div->divisor);
        if (!expected || *expected != terms_[i].coeff || !divisor || !fits(dtype_, *divisor)) continue;
        const Expr c = IntImmNode::make(dtype_, *divisor);
        LinearForm folded(dtype_);
        if (!folded.add_term(outer->floor ? FloorModNode::make(mod->dividend, c) : ModNode::make(mod->dividend, c), 1) ||
            !replace_pair(i, j, folded, terms_[j].coeff)) {
          return false;
        }
        merged = true;
      }
    }
    for (size_t i = 0; i < terms_.size() && !merged; ++i) {
      auto div = div_parts(terms_[i].term, true);
      if (!div) continue;
      for (size_t j = 0; j < terms_.size() && !merged; ++j) {
        auto mod = div_parts(terms_[j].term, false);
        if (!mod || mod->floor != div->floor || mod->divisor != div->divisor ||
            !deep_equal(mod->dividend, div->dividend)) {
          continue;
        }
        auto expected = checked_mul(terms_[j].coeff, div->divisor);
        if (!expected || *expected != terms_[i].coeff) continue;
        auto inner = from_expr(div->dividend);
        if (!inner) continue;
        if (!replace_pair(i, j, *inner, terms_[j].coeff)) return false;
        merged = true;
      }
    }
  }
  return true;
}

bool LinearForm::fits_type() const {
  if (!fits(dtype_, constant_)) return false;
  bool any_added = false;
  for (const LinearTerm& t : terms_) {
    // A negative coefficient is subtracted as its magnitude, which must fit too.
    if (!fits(dtype_, t.coeff) || t.coeff == Interval::kNegInf || (t.coeff < 0 && !fits(dtype_, -t.coeff))) {
      return false;
    }
    any_added = any_added || t.coeff > 0;
  }
  // A negative constant after added terms is subtracted as its magnitude.
  return !any_added || constant_ >= 0 || (constant_ != Interval::kNegInf && fits(dtype_, -constant_));
}

void LinearForm::order_positive_terms_first() {
  std::stable_partition(terms_.begin(), terms_.end(), [](const LinearTerm& t) { return t.coeff > 0; });
}

std::optional<Expr> LinearForm::to_expr() const {
  if (!fits_type()) return std::nullopt;
  DataType type = dtype_;
  auto scaled = [&](const Expr& term, int64_t coeff) {
    return coeff == 1 ? term : MulNode::make(term, IntImmNode::make(type, coeff));
  };
  Expr result;
  for (const LinearTerm& t : terms_) {
    if (t.coeff <= 0) continue;
    Expr x = scaled(t.term, t.coeff);
    result = result.defined() ? AddNode::make(result, x) : x;
  }
  bool constant_first = false;
  if (!result.defined()) {
    // Only subtracted terms: start from the constant (or 0), as 5 - j or 0 - j.
    result = IntImmNode::make(type, constant_);
    constant_first = true;
  }
  for (const LinearTerm& t : terms_) {
    if (t.coeff < 0) result = SubNode::make(result, scaled(t.term, -t.coeff));
  }
  if (!constant_first && constant_ > 0) result = AddNode::make(result, IntImmNode::make(type, constant_));
  if (!constant_first && constant_ < 0) result = SubNode::make(result, IntImmNode::make(type, -constant_));
  return result;
}

}  // namespace dragon::ir::simplify_detail
