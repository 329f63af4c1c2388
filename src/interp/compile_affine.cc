// Folding of integer index arithmetic: a tree of +, - and * by constants over loop and
// block variables (i * 64 + j, io * 4 + ii - 1) becomes one node that sums coefficient *
// variable terms, one virtual call instead of one per operation. Not a simplifier: it
// never changes a value, only how it is computed.
#include <array>
#include <optional>
#include <vector>

#include "expr_code.h"

namespace dragon::interp::detail {
namespace {

// Terms over at most this many variables; larger sums keep their tree.
constexpr size_t kMaxTerms = 4;

struct AffineForm {
  struct Term {
    int slot;
    uint64_t coeff;  // modulo 2^64, like the sum
  };
  std::vector<Term> terms;
  uint64_t offset = 0;
};

class AffineBase : public ExprCode {
 public:
  AffineBase(ir::DataType dtype, AffineForm form) : ExprCode(dtype), form_(std::move(form)) {}
  const AffineForm& form() const { return form_; }

 private:
  AffineForm form_;
};

// Computing the whole sum modulo 2^64 and wrapping once equals wrapping after every +, -
// and * (reduction modulo 2^Bits is a ring homomorphism), so results match the tree.
template <int Bits>
class AffineCode final : public AffineBase {
 public:
  AffineCode(ir::DataType dtype, AffineForm form) : AffineBase(dtype, std::move(form)) {
    count_ = form_of().terms.size();
    for (size_t i = 0; i < count_; ++i) {
      slots_[i] = form_of().terms[i].slot;
      coeffs_[i] = form_of().terms[i].coeff;
    }
    offset_ = form_of().offset;
  }
  int64_t eval_int(Frame& frame) const override {
    uint64_t sum = offset_;
    for (size_t i = 0; i < count_; ++i) sum += coeffs_[i] * static_cast<uint64_t>(frame.vars[slots_[i]]);
    return wrap_int<Bits>(static_cast<int64_t>(sum));
  }

 private:
  const AffineForm& form_of() const { return form(); }
  size_t count_ = 0;
  std::array<int, kMaxTerms> slots_{};
  std::array<uint64_t, kMaxTerms> coeffs_{};
  uint64_t offset_ = 0;
};

std::optional<AffineForm> affine_of(const ExprCode& code) {
  if (int slot = var_slot_of(code); slot >= 0) return AffineForm{{{slot, 1}}, 0};
  if (std::optional<int64_t> value = const_int_of(code)) return AffineForm{{}, static_cast<uint64_t>(*value)};
  if (const auto* affine = dynamic_cast<const AffineBase*>(&code)) return affine->form();
  return std::nullopt;
}

AffineForm scaled(AffineForm form, uint64_t factor) {
  for (AffineForm::Term& term : form.terms) term.coeff *= factor;
  form.offset *= factor;
  return form;
}

AffineForm sum(AffineForm a, const AffineForm& b) {
  for (const AffineForm::Term& term : b.terms) {
    bool merged = false;
    for (AffineForm::Term& mine : a.terms) {
      if (mine.slot == term.slot) {
        mine.coeff += term.coeff;
        merged = true;
      }
    }
    if (!merged) a.terms.push_back(term);
  }
  a.offset += b.offset;
  std::erase_if(a.terms, [](const AffineForm::Term& term) { return term.coeff == 0; });
  return a;
}

}  // namespace

ExprPtr fold_affine(ir::NodeKind kind, ir::DataType dtype, const ExprPtr& a, const ExprPtr& b) {
  if (!dtype.is_int() || a->dtype() != dtype || b->dtype() != dtype) return nullptr;
  std::optional<AffineForm> fa = affine_of(*a), fb = affine_of(*b);
  if (!fa || !fb) return nullptr;
  AffineForm result;
  switch (kind) {
    case ir::NodeKind::Add: result = sum(*fa, *fb); break;
    case ir::NodeKind::Sub: result = sum(*fa, scaled(*fb, ~uint64_t{0})); break;  // times -1
    case ir::NodeKind::Mul:
      if (fa->terms.empty()) {
        result = scaled(*fb, fa->offset);
      } else if (fb->terms.empty()) {
        result = scaled(*fa, fb->offset);
      } else {
        return nullptr;  // a product of variables is not affine
      }
      std::erase_if(result.terms, [](const AffineForm::Term& term) { return term.coeff == 0; });
      break;
    default: return nullptr;
  }
  if (result.terms.size() > kMaxTerms) return nullptr;
  switch (dtype.bits()) {
    case 8: return std::make_unique<AffineCode<8>>(dtype, std::move(result));
    case 16: return std::make_unique<AffineCode<16>>(dtype, std::move(result));
    case 32: return std::make_unique<AffineCode<32>>(dtype, std::move(result));
    case 64: return std::make_unique<AffineCode<64>>(dtype, std::move(result));
  }
  return nullptr;
}

}  // namespace dragon::interp::detail
