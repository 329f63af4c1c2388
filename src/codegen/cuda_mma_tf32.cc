// The tf32 mma.sync helpers of the CUDA prelude (inline PTX for the m16n8k8 .tf32
// intrinsics of tensor_intrin.h): fragment loads of f32 tiles (ldmatrix on 32-bit words
// where the rows are 16-byte aligned, per-lane loads otherwise), the rounding
// cvt.rna.tf32.f32, and the one-pass and 3xTF32 multiply-accumulate. Not the planners
// (their rows are in cuda_mma.cc's table) and not the f16/bf16 helpers.
#include "cuda_warp_intrin.h"

#include <array>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "dragon/ir/op.h"

namespace dragon::codegen {

namespace {
constexpr std::string_view kTf32HelperPrefix = "dragon_tf32_";
constexpr std::string_view kRoundedSuffix = "_rounded";
constexpr std::string_view kOnePassMma = "dragon_tf32_mma_m16n8k8";
constexpr std::string_view kPreroundedMma = "dragon_tf32_mma_m16n8k8_prerounded";
constexpr std::string_view kSplitSuffix = "_split";
constexpr std::string_view kPresplitMma = "dragon_tf32_mma_m16n8k8_3x_presplit";
// The f32 fragment loads of the prelude and the elements a lane loads: each also has a
// "_rounded" and a "_split" variant, instantiated from this list (mma_tf32_prelude).
struct FragmentLoad {
  std::string_view helper;
  int elements;
};
constexpr std::array<FragmentLoad, 6> kFragmentLoads = {{{"dragon_tf32_load_a_m16k8", 4},
                                                         {"dragon_tf32_ldmatrix_a_m16k8", 4},
                                                         {"dragon_tf32_load_a_trans_k8m16", 4},
                                                         {"dragon_tf32_ldmatrix_b_trans_n8k8", 2},
                                                         {"dragon_tf32_load_b_k8n8", 2},
                                                         {"dragon_tf32_load_b_trans_n8k8", 2}}};

bool is_fragment_load(std::string_view helper) {
  for (const FragmentLoad& load : kFragmentLoads) {
    if (helper == load.helper) return true;
  }
  return false;
}
}  // namespace

const char* tf32_mma_helper(int passes, bool mixed) {
  if (mixed) return passes == 3 ? "dragon_tf32_mma_m16n8k8_3x_mixed" : "dragon_tf32_mma_m16n8k8_mixed";
  return passes == 3 ? "dragon_tf32_mma_m16n8k8_3x" : kOnePassMma.data();
}

bool is_tf32_mixed_helper(std::string_view helper) {
  return is_tf32_helper(helper) && helper.ends_with("_mixed");
}

std::string_view mma_tf32_mixed_prelude() {
  // One operand 16-bit (bf16 or f16), the other f32: the 16-bit fragments hold their
  // elements as they are, in the same positions as an f32 fragment's (the per-lane loads
  // of mma_tf32_prelude(), templates), and the mma widens them (exactly: a 16-bit float
  // has at most TF32's 10 mantissa bits and 8 exponent bits) while it rounds the f32
  // ones. 3xTF32 splits the f32 one; the widened one's small part would be 0.
  return R"(DRAGON_INLINE float dragon_tf32_widen(float x) { return x; }
DRAGON_INLINE float dragon_tf32_widen(__nv_bfloat16 x) { return __bfloat162float(x); }
DRAGON_INLINE float dragon_tf32_widen(__half x) { return __half2float(x); }
template <typename TA, typename TB>
DRAGON_INLINE void dragon_tf32_widen_fragments(float* A, float* B, const TA* a, const TB* b) {
  for (int r = 0; r < 4; ++r) A[r] = dragon_tf32_widen(a[r]);
  for (int r = 0; r < 2; ++r) B[r] = dragon_tf32_widen(b[r]);
}
template <typename TA, typename TB>
DRAGON_INLINE void dragon_tf32_mma_m16n8k8_mixed(float* c, const TA* a, const TB* b, int lane) {
  float A[4], B[2];
  dragon_tf32_widen_fragments(A, B, a, b);
  dragon_tf32_mma_m16n8k8(c, A, B, lane);
}
// 3xTF32 with one 16-bit operand: that operand's small part is 0, so of the three products
// one is zero and two mma give the same step (the f32 operand split, the 16-bit one widened
// exactly).
template <typename T>
DRAGON_INLINE void dragon_tf32_mma_m16n8k8_3x_mixed(float* c, const float* a, const T* b, int lane) {
  (void)lane;
  unsigned a_big[4], a_small[4], B[2];
  for (int r = 0; r < 4; ++r) dragon_tf32_split(a[r], &a_big[r], &a_small[r]);
  for (int r = 0; r < 2; ++r) B[r] = __float_as_uint(dragon_tf32_widen(b[r]));
  float step[4] = {0.f, 0.f, 0.f, 0.f};
  dragon_tf32_mma_m16n8k8_regs(step, a_small, B);
  dragon_tf32_mma_m16n8k8_regs(step, a_big, B);
  for (int r = 0; r < 4; ++r) c[r] = __fadd_rn(c[r], step[r]);
}
template <typename T>
DRAGON_INLINE void dragon_tf32_mma_m16n8k8_3x_mixed(float* c, const T* a, const float* b, int lane) {
  (void)lane;
  unsigned A[4], b_big[2], b_small[2];
  for (int r = 0; r < 4; ++r) A[r] = __float_as_uint(dragon_tf32_widen(a[r]));
  for (int r = 0; r < 2; ++r) dragon_tf32_split(b[r], &b_big[r], &b_small[r]);
  float step[4] = {0.f, 0.f, 0.f, 0.f};
  dragon_tf32_mma_m16n8k8_regs(step, A, b_small);
  dragon_tf32_mma_m16n8k8_regs(step, A, b_big);
  for (int r = 0; r < 4; ++r) c[r] = __fadd_rn(c[r], step[r]);
}
)";
}

bool is_tf32_helper(std::string_view helper) { return helper.substr(0, kTf32HelperPrefix.size()) == kTf32HelperPrefix; }

std::unordered_set<const ir::BufferNode*> prepare_tf32_fragments_once(
    std::unordered_map<const ir::ForNode*, WarpCall>& calls) {
  // Per fragment buffer: whether every block that writes it is an f32 fragment load, and
  // which mma reads it. Each A fragment feeds every n-tile of the warp and each B fragment
  // every m-tile, so rounding in the mma rounded a KernelBench 55 conv's fragments 6 times
  // per mma (15 x 2 tiles: 180 cvt.rna per k-step against 64 at the loads), and 3xTF32's
  // split in the mma made 576 cvt, 576 subtractions and 576 finiteness tests of one k-stage
  // of its default kernel (PTX), against 288 mma.
  enum class Reader { kNone, kOnePass, kThreePass, kOther };
  struct Uses {
    bool only_loads_write = true;
    Reader reader = Reader::kNone;
  };
  const std::string_view three_pass = tf32_mma_helper(3);
  auto reader_of = [&](const std::string& helper) {
    return helper == kOnePassMma ? Reader::kOnePass : helper == three_pass ? Reader::kThreePass : Reader::kOther;
  };
  std::unordered_map<const ir::BufferNode*, Uses> uses;
  for (const auto& [unit, call] : calls) {
    for (size_t i = 0; i < call.args.size(); ++i) {
      const ir::Buffer& buffer = call.args[i].buffer;
      if (!buffer.defined() || buffer->scope != "warp") continue;
      Uses& u = uses[buffer.get()];
      if (buffer->dtype != ir::DataType::f32()) u.only_loads_write = false;  // 16-bit: widened, never rounded
      if (i == 0) {
        // Argument 0 is what a helper writes: a load's fragment, an mma's accumulator.
        u.only_loads_write = u.only_loads_write && is_fragment_load(call.helper);
      } else {
        const Reader r = reader_of(call.helper);
        u.reader = u.reader == Reader::kNone || u.reader == r ? r : Reader::kOther;
      }
    }
  }
  auto prepared = [&](const ir::Buffer& buffer, Reader kind) {
    auto it = uses.find(buffer.get());
    return it != uses.end() && it->second.only_loads_write && it->second.reader == kind;
  };
  // An mma takes prepared operands only when both are: beside an unprepared one, a rounded
  // operand would be rounded again (half an ulp added twice) and a split one split again.
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [unit, call] : calls) {
      const Reader kind = reader_of(call.helper);
      if (kind == Reader::kOther || call.args.size() < 3) continue;
      if (prepared(call.args[1].buffer, kind) != prepared(call.args[2].buffer, kind)) {
        for (size_t i : {size_t{1}, size_t{2}}) {
          if (auto it = uses.find(call.args[i].buffer.get()); it != uses.end() && it->second.reader == kind) {
            it->second.reader = Reader::kOther;
            changed = true;
          }
        }
      }
    }
  }
  // A split fragment holds its big parts, then (this lane's count of elements on) its
  // small parts.
  auto small_parts = [](const WarpHelperArg& arg, int64_t lanes) {
    const int64_t per_lane = arg.buffer->num_elements() / lanes;
    return WarpHelperArg{arg.buffer, arg.offset + ir::make_const(arg.offset.dtype(), static_cast<double>(per_lane))};
  };
  std::unordered_set<const ir::BufferNode*> split;
  for (auto& [unit, call] : calls) {
    if (is_fragment_load(call.helper) && prepared(call.args[0].buffer, Reader::kOnePass)) {
      call.helper += kRoundedSuffix;
    } else if (is_fragment_load(call.helper) && prepared(call.args[0].buffer, Reader::kThreePass)) {
      call.helper += kSplitSuffix;
      call.args.insert(call.args.begin() + 1, small_parts(call.args[0], call.lanes));
      split.insert(call.args[0].buffer.get());
    } else if (call.helper == kOnePassMma && call.args.size() >= 3 && prepared(call.args[1].buffer, Reader::kOnePass)) {
      call.helper = std::string(kPreroundedMma);
    } else if (call.helper == three_pass && call.args.size() >= 3 && prepared(call.args[1].buffer, Reader::kThreePass)) {
      call.helper = std::string(kPresplitMma);
      const WarpHelperArg a = call.args[1], b = call.args[2];
      call.args = std::vector<WarpHelperArg>{call.args[0], a, small_parts(a, call.lanes), b, small_parts(b, call.lanes)};
    }
  }
  return split;
}

std::string_view mma_tf32_prelude() {
  // Fragments hold exact f32 values (PTX's m16n8k8 .tf32 layout, tensor_intrin.h); the mma
  // helpers round them, so 3xTF32 can split the same registers. With g = lane / 4,
  // t = lane % 4: A a0..a3 = (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4); B b0, b1 =
  // (k t, n g), (k t + 4, n g). Shared rows padded to 4 mod 32 words keep the A and [n, k]
  // B loads free of bank conflicts, ldmatrix's eight 16-byte rows included (8 mod 32 for
  // the per-lane loads of a [k, n] B).
  static const std::string prelude = [] {
    std::string text = R"(DRAGON_INLINE unsigned dragon_tf32_round(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
// cvt.rna as an mma sees it: half a tf32 ulp added to the bits, whose 13 low bits the mma
// drops, so its operand is cvt.rna's for every input (infinities and NaNs pass as they are,
// and cvt.rna only masks them). Two instructions where cvt.rna.tf32 is three on sm_90 (the
// same test and add, then the mask). Only for a value an mma takes as it is: 3xTF32's big
// part keeps cvt.rna, since x - big must be exact.
DRAGON_INLINE unsigned dragon_tf32_round_for_mma(float x) {
  const unsigned bits = __float_as_uint(x);
  return fabsf(x) < DRAGON_INF_F32 ? bits + 0x1000u : bits;
}
// 3xTF32's split of x: big = tf32(x) by cvt.rna (x - big must be exact), small = x - big
// rounded as the mma takes it.
DRAGON_INLINE void dragon_tf32_split(float x, unsigned* big, unsigned* small) {
  *big = dragon_tf32_round(x);
  *small = dragon_tf32_round_for_mma(x - __uint_as_float(*big));
}
// The per-lane loads also serve 16-bit operands of the mixed mma (T = __nv_bfloat16, __half).
template <typename T> DRAGON_INLINE void dragon_tf32_load_a_m16k8(T* a, const T* tile, int row_stride, int lane) {
  const int g = lane / 4, t = lane % 4;
  a[0] = tile[g * row_stride + t];
  a[1] = tile[(g + 8) * row_stride + t];
  a[2] = tile[g * row_stride + t + 4];
  a[3] = tile[(g + 8) * row_stride + t + 4];
}
// ldmatrix on 32-bit data: an m8n8 .b16 matrix is 8 rows of 4 words, and lane l receives
// word l % 4 of row l / 4 (its two halves, in order) = element (g, t) of an 8x4 f32 tile.
// A's a0..a3 are the 8x4 tiles at (row 0, col 0), (8, 0), (0, 4), (8, 4); lanes 8q..8q+7
// give the row addresses of tile q. Rows must be 16-byte aligned (the planner proves it).
DRAGON_INLINE void dragon_tf32_ldmatrix_a_m16k8(float* a, const float* tile, int row_stride, int lane) {
  unsigned* r = (unsigned*)a;
  const int q = lane / 8;
  const float* row = tile + (lane % 8 + 8 * (q % 2)) * row_stride + 4 * (q / 2);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(dragon_shared_address(row)));
}
// B stored [n, k]: b0, b1 are the 8x4 tiles at (n 0, k 0) and (n 0, k 4).
DRAGON_INLINE void dragon_tf32_ldmatrix_b_trans_n8k8(float* b, const float* tile, int row_stride, int lane) {
  unsigned* r = (unsigned*)b;
  const float* row = tile + (lane % 8) * row_stride + 4 * ((lane / 8) % 2);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1]) : "r"(dragon_shared_address(row)));
}
// A stored [k, m] (rows of k): the same a0..a3, read down the columns.
template <typename T> DRAGON_INLINE void dragon_tf32_load_a_trans_k8m16(T* a, const T* tile, int row_stride, int lane) {
  const int g = lane / 4, t = lane % 4;
  a[0] = tile[t * row_stride + g];
  a[1] = tile[t * row_stride + g + 8];
  a[2] = tile[(t + 4) * row_stride + g];
  a[3] = tile[(t + 4) * row_stride + g + 8];
}
template <typename T> DRAGON_INLINE void dragon_tf32_load_b_k8n8(T* b, const T* tile, int row_stride, int lane) {
  const int g = lane / 4, t = lane % 4;
  b[0] = tile[t * row_stride + g];
  b[1] = tile[(t + 4) * row_stride + g];
}
template <typename T> DRAGON_INLINE void dragon_tf32_load_b_trans_n8k8(T* b, const T* tile, int row_stride, int lane) {
  const int g = lane / 4, t = lane % 4;
  b[0] = tile[g * row_stride + t];
  b[1] = tile[g * row_stride + t + 4];
}
DRAGON_INLINE void dragon_tf32_mma_m16n8k8_regs(float* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// The loads for fragments only one-pass mma read (prepare_tf32_fragments_once): the values
// rounded once, in place, as tf32 bit patterns, and the mma that takes them as they are.
DRAGON_INLINE void dragon_tf32_round_fragment(float* f, int n) {
  for (int i = 0; i < n; ++i) f[i] = __uint_as_float(dragon_tf32_round_for_mma(f[i]));
}
#define DRAGON_TF32_ROUNDED_LOAD(load, n)                                                   \
  DRAGON_INLINE void load##_rounded(float* f, const float* tile, int row_stride, int lane) { \
    load(f, tile, row_stride, lane);                                                        \
    dragon_tf32_round_fragment(f, n);                                                       \
  }
DRAGON_INLINE void dragon_tf32_mma_m16n8k8_prerounded(float* c, const float* a, const float* b, int lane) {
  (void)lane;
  dragon_tf32_mma_m16n8k8_regs(c, (const unsigned*)a, (const unsigned*)b);
}
DRAGON_INLINE void dragon_tf32_mma_m16n8k8(float* c, const float* a, const float* b, int lane) {
  (void)lane;
  unsigned A[4], B[2];
  for (int r = 0; r < 4; ++r) A[r] = dragon_tf32_round_for_mma(a[r]);
  for (int r = 0; r < 2; ++r) B[r] = dragon_tf32_round_for_mma(b[r]);
  dragon_tf32_mma_m16n8k8_regs(c, A, B);
}
// The loads for fragments only 3xTF32 mma read (prepare_tf32_fragments_once): each value
// split once, at its load, into its big part (in place) and its small part (n elements
// further on, in the fragment's second half), so that an mma reading the fragment does not
// split it again.
DRAGON_INLINE void dragon_tf32_split_fragment(float* big, float* small, int n) {
  for (int i = 0; i < n; ++i) {
    unsigned b, s;
    dragon_tf32_split(big[i], &b, &s);
    big[i] = __uint_as_float(b);
    small[i] = __uint_as_float(s);
  }
}
#define DRAGON_TF32_SPLIT_LOAD(load, n)                                                                \
  DRAGON_INLINE void load##_split(float* big, float* small, const float* tile, int row_stride, int lane) { \
    load(big, tile, row_stride, lane);                                                                 \
    dragon_tf32_split_fragment(big, small, n);                                                         \
  }
// 3xTF32: x = big + small with big = tf32(x), small = tf32(x - big). The three products of
// one k-step go into a fresh fragment, small ones first, and that fragment is added to the
// accumulator with IEEE round-to-nearest adds. The tensor core aligns and truncates when it
// adds its C operand, so chaining all three mma on the long accumulator truncated 3 K/8
// times in one direction: measured on the H100, 2.34e-5 of the output's scale at K = 2048
// on uniform inputs against the harness's f32 tolerance of 1.93e-5. Here the truncations see
// only one k-step's partial sum, and the long sum rounds like a serial f32 sum over K/8.
// This one takes fragments already split (their parts as tf32 bit patterns).
DRAGON_INLINE void dragon_tf32_mma_m16n8k8_3x_presplit(float* c, const float* a, const float* a_small, const float* b,
                                                        const float* b_small, int lane) {
  (void)lane;
  float step[4] = {0.f, 0.f, 0.f, 0.f};
  dragon_tf32_mma_m16n8k8_regs(step, (const unsigned*)a, (const unsigned*)b_small);
  dragon_tf32_mma_m16n8k8_regs(step, (const unsigned*)a_small, (const unsigned*)b);
  dragon_tf32_mma_m16n8k8_regs(step, (const unsigned*)a, (const unsigned*)b);
  for (int r = 0; r < 4; ++r) c[r] = __fadd_rn(c[r], step[r]);
}
// The same on exact values, split here.
DRAGON_INLINE void dragon_tf32_mma_m16n8k8_3x(float* c, const float* a, const float* b, int lane) {
  float A[4], A_small[4], B[2], B_small[2];
  for (int r = 0; r < 4; ++r) A[r] = a[r];
  for (int r = 0; r < 2; ++r) B[r] = b[r];
  dragon_tf32_split_fragment(A, A_small, 4);
  dragon_tf32_split_fragment(B, B_small, 2);
  dragon_tf32_mma_m16n8k8_3x_presplit(c, A, A_small, B, B_small, lane);
}
)";
    for (const FragmentLoad& load : kFragmentLoads) {
      text += fmt::format("DRAGON_TF32_ROUNDED_LOAD({0}, {1})\nDRAGON_TF32_SPLIT_LOAD({0}, {1})\n", load.helper,
                          load.elements);
    }
    return text;
  }();
  return prelude;
}

}  // namespace dragon::codegen
