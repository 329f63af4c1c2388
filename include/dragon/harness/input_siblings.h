// Siblings of an input set: the same tensors with a few elements of one input changed
// inside that input's domain, the rest shared bit for bit. A kernel whose outputs do not
// depend on all of its input (a cache keyed on a sample of the contents, work skipped where
// a sample looks familiar) returns the base set's outputs for a sibling, and they differ
// from the sibling's reference wherever the change reaches. Every input gets siblings of
// its own: floats, integers, indices, offsets and probabilities. Verification (verify.h)
// and the timed rotation (isolated_timing.h) both judge siblings. Not the input generator
// (interp/input_generator.h), which draws the base sets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::harness {

struct ElementChange {
  size_t param = 0;   // an input parameter
  int64_t index = 0;  // flat, row-major
  double value = 0;   // the new value, before rounding to the parameter's type
};

struct InputSibling {
  size_t base = 0;      // which of the caller's base sets it is a sibling of
  std::string label;    // "normal, sibling 1 (1 element of X changed)"
  std::vector<ElementChange> changes;
};

// Inputs a sibling may change: every input with elements whose domain admits another
// value: real and positive inputs of any type, integer ranges of two values or more,
// probabilities with rows of two or more, offsets of two bags or more.
std::vector<size_t> perturbable_inputs(const ir::PrimFunc& func);

// At least `count` siblings, and two per perturbable input where that is more (none when
// count is 0). Sibling j is a sibling of base set j % bases.size()
// (`bases[b]` holds that set's arguments, `labels[b]` its name) and changes input
// perturbable_inputs()[j % n]: one element on that input's first sibling (the most a key
// covering a fraction f of the input can miss: it escapes with probability f), several
// on its second (more chances to reach an output that ignores some changes, such as a
// max), and so on in turn. Positions come from `seed`. The new values stay in the
// input's domain:
//   real or positive floats  v -> -(1.5 v + sign v), or 1.5 v + 1 when positive: the
//                            change survives rounding to any float type and reaches
//                            outputs that clamp at zero
//   integers, bools          small integers v -> -(v + 1) (positive: v % 8 + 1); a bool flips
//   integer ranges [lo, hi)  another value of the range (an index names another row)
//   probabilities            two elements of one row swap values (one pair, or two): the
//                            row still sums to 1
//   offsets                  inner boundaries (one, or four apart from each other) move
//                            by one within the largest step: an element passes from one
//                            bag to its neighbour
// A sibling whose input admits no change here (offsets with no boundary free to move, a
// flat row of probabilities) is left out.
std::vector<InputSibling> make_siblings(const ir::PrimFunc& func,
                                        const std::vector<std::vector<tensor::HostTensor>>& bases,
                                        const std::vector<std::string>& labels, uint64_t seed, int count);

// Applies the sibling's changes to a copy of its base set's arguments.
void apply_sibling(const InputSibling& sibling, std::vector<tensor::HostTensor>& args);

}  // namespace dragon::harness
