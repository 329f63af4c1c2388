// The wgmma family on CUDA (Hopper, sm_90a; tensor_intrin.h's warpgroup intrinsics): each
// tensorized block's scalar loops are read back into operands and planned as one call of
// a warpgroup helper of the prelude below, run by the warpgroup's 128 lanes:
// - m64nNk16: A and B are K-major tiles of shared buffers with rows of 64 two-byte
//   elements, which the kernel then stores with the 128-byte swizzle (every other access
//   to them goes through CudaEmitter::physical_index); the helper builds their 64-bit
//   matrix descriptors (wgmma_descriptor.h) and issues wgmma.mma_async and
//   wgmma.commit_group; the emitter puts wgmma.fence before and wgmma.wait_group 0 after
//   each run of wgmma calls (a loop nest holding nothing else), so the k steps of a run
//   overlap and nothing reads the accumulators or rewrites the tiles while one is in flight.
// - fill and store of the accumulator in 64x8 tiles (tensor_intrin.h's lane layout).
// Also the host-side descriptor encoding that the tests check against the PTX ISA.
#include <regex>

#include <fmt/format.h>

#include "cuda_warp_intrin.h"
#include "dragon/codegen/wgmma_descriptor.h"
#include "dragon/ir/op.h"
#include "dragon/support/error.h"

namespace dragon::codegen {

uint64_t encode_wgmma_descriptor(const WgmmaDescriptorFields& fields) {
  auto field14 = [](uint32_t bytes, const char* what) -> uint64_t {
    if (bytes % 16 != 0 || (bytes >> 4) >= (1u << 14)) {
      throw InternalError(fmt::format("wgmma descriptor: {} of {} bytes is not a multiple of 16 below 256 KiB", what,
                                      bytes));
    }
    return bytes >> 4;
  };
  if (fields.base_offset > 7) {
    throw InternalError(fmt::format("wgmma descriptor: base offset {} does not fit 3 bits", fields.base_offset));
  }
  return field14(fields.start_address, "the start address") |
         (field14(fields.leading_byte_offset, "the leading byte offset") << 16) |
         (field14(fields.stride_byte_offset, "the stride byte offset") << 32) |
         (static_cast<uint64_t>(fields.base_offset) << 49) | (static_cast<uint64_t>(fields.swizzle) << 62);
}

WgmmaDescriptorFields decode_wgmma_descriptor(uint64_t d) {
  auto field14 = [&](int shift) { return static_cast<uint32_t>((d >> shift) & 0x3FFF) << 4; };
  return WgmmaDescriptorFields{field14(0), field14(16), field14(32), static_cast<uint32_t>((d >> 49) & 7),
                               static_cast<WgmmaSwizzle>(d >> 62)};
}

uint64_t wgmma_kmajor_swizzle128_descriptor(uint32_t start) {
  return encode_wgmma_descriptor({start, 16, 1024, 0, WgmmaSwizzle::kSwizzle128B});
}

namespace {

constexpr int64_t kLanes = 128;      // a warpgroup
constexpr int64_t kSwizzleRow = 64;  // two-byte elements in a 128-byte swizzled row
constexpr int64_t kAtomBytes = 1024;

WarpHelperArg at(const ir::Buffer& buffer, ir::Expr offset) { return {buffer, std::move(offset)}; }
WarpHelperArg value(int64_t v) { return {ir::Buffer(), ir::make_const(ir::DataType::i32(), static_cast<double>(v))}; }

std::string wgmma_helper(ir::DataType dtype, int64_t n) {
  return fmt::format("dragon_wgmma_m64n{}k16_{}", n, dtype == ir::DataType::f16() ? "f16" : "bf16");
}

// A K-major operand tile of a wgmma (rows x 16 of `dtype`, row loop `row_var`, k loop 2):
// its base offset; records its buffer as swizzled.
std::optional<ir::Expr> swizzled_operand(const ir::BufferLoadNode* load, const TileNest& nest, size_t row_var,
                                         ir::DataType dtype, WarpPlanContext& context, std::string& why) {
  const ir::Buffer& buffer = load->buffer;
  if (buffer->dtype != dtype) {
    why = fmt::format("operand {} is {}, the instruction takes {}", buffer->name, ir::to_string(buffer->dtype),
                      ir::to_string(dtype));
    return std::nullopt;
  }
  auto tile = memory_tile(buffer, load->indices[0], nest, row_var, 2, {"shared", "shared.dyn"}, 0, context, why);
  if (!tile) return std::nullopt;
  if (tile->row_stride != kSwizzleRow) {
    why = fmt::format("operand {} has rows of {} elements; the 128-byte swizzled K-major layout needs rows of exactly "
                      "{} (a shared tile 64 wide in k, no row padding)",
                      describe_access(buffer, load->indices[0]), tile->row_stride, kSwizzleRow);
    return std::nullopt;
  }
  if (buffer->num_elements() * buffer->dtype.bytes() % kAtomBytes != 0) {
    why = fmt::format("operand buffer {} holds {} elements, not a whole number of 8-row swizzle atoms",
                      buffer->name, buffer->num_elements());
    return std::nullopt;
  }
  const ir::Expr& base = tile->base;
  if (!context.analyzer.can_prove(ir::eq(ir::floormod(base, 16), 0)) ||
      !context.analyzer.can_prove(ir::eq(ir::floormod(ir::floordiv(base, kSwizzleRow), 8), 0))) {
    why = fmt::format("operand tile {} does not provably start on an 8-row atom and a 16-element column",
                      describe_access(buffer, load->indices[0]));
    return std::nullopt;
  }
  context.swizzled.insert(buffer.get());
  return base;
}

std::optional<WarpCall> plan_wgmma(const TileNest& nest, WarpPlanContext& context, std::string& why,
                                   ir::DataType dtype, int64_t n) {
  if (!expect_extents(nest, {64, n, 16}, why)) return std::nullopt;
  std::optional<MultiplyAccumulate> mac = match_multiply_accumulate(nest, context, why);
  if (!mac) return std::nullopt;
  const ir::BufferLoadNode *a = mac->a, *b = mac->b;
  const ir::Buffer& c_buf = nest.store->buffer;
  auto c_slot = fragment_slot(c_buf, nest.store->indices[0], nest, 0, 1, 64, 8, kLanes, ir::DataType::f32(), context,
                              why);
  if (!c_slot) return std::nullopt;
  // The N/8 column tiles of the accumulator are consecutive slots only within one row of
  // tiles.
  const int64_t c_stride = context.fragments.at(c_buf.get()).row_stride;
  auto c_affine = decompose(nest.store->indices[0], nest, context.analyzer);
  if (!context.analyzer.can_prove(ir::floormod(c_affine->base, c_stride) + n <= c_stride)) {
    why = fmt::format("accumulator tile {} crosses the end of the fragment's rows of {}",
                      describe_access(c_buf, nest.store->indices[0]), c_stride);
    return std::nullopt;
  }
  auto a_base = swizzled_operand(a, nest, 0, dtype, context, why);
  if (!a_base) return std::nullopt;
  auto b_base = swizzled_operand(b, nest, 1, dtype, context, why);
  if (!b_base) return std::nullopt;
  return WarpCall{wgmma_helper(dtype, n), {at(c_buf, *c_slot), at(a->buffer, *a_base), at(b->buffer, *b_base)}, false,
                  kLanes};
}

std::optional<WarpCall> plan_fill(const TileNest& nest, WarpPlanContext& context, std::string& why) {
  if (!expect_extents(nest, {64, 8}, why)) return std::nullopt;
  const auto* zero = nest.store->value.as<ir::FloatImmNode>();
  if (zero == nullptr || zero->value != 0.0) {
    why = "the fill does not store 0";
    return std::nullopt;
  }
  auto slot = fragment_slot(nest.store->buffer, nest.store->indices[0], nest, 0, 1, 64, 8, kLanes,
                            ir::DataType::f32(), context, why);
  if (!slot) return std::nullopt;
  return WarpCall{"dragon_wgmma_fill_m64n8_f32", {at(nest.store->buffer, *slot)}, false, kLanes};
}

std::optional<WarpCall> plan_store(const TileNest& nest, WarpPlanContext& context, std::string& why) {
  if (!expect_extents(nest, {64, 8}, why)) return std::nullopt;
  const auto* load = nest.store->value.as<ir::BufferLoadNode>();
  if (load == nullptr) {
    why = "the store's value is not a fragment load";
    return std::nullopt;
  }
  auto slot =
      fragment_slot(load->buffer, load->indices[0], nest, 0, 1, 64, 8, kLanes, ir::DataType::f32(), context, why);
  if (!slot) return std::nullopt;
  const ir::Buffer& dst = nest.store->buffer;
  if (dst->dtype != ir::DataType::f32()) {
    why = fmt::format("the store's destination {} is {}, not f32", dst->name, ir::to_string(dst->dtype));
    return std::nullopt;
  }
  auto tile = memory_tile(dst, nest.store->indices[0], nest, 0, 1, {"global", "shared", "shared.dyn"}, 0, context, why);
  if (!tile) return std::nullopt;
  return WarpCall{"dragon_wgmma_store_m64n8_f32",
                  {at(dst, tile->base), value(tile->row_stride), at(load->buffer, *slot)},
                  true,
                  kLanes};
}

// One wgmma helper: N/2 accumulator registers a lane, in PTX's order.
std::string wgmma_mma_helper(const std::string& name, int64_t n, const std::string& dtype) {
  const int64_t regs = n / 2;
  std::string outputs, operands;
  for (int64_t r = 0; r < regs; ++r) {
    outputs += fmt::format("{}%{}", r == 0 ? "" : ", ", r);
    operands += fmt::format("{}\"+f\"(c[{}])", r == 0 ? "" : ", ", r);
  }
  // Issued and committed only: the emitter fences before and waits after the run of
  // wgmma calls it belongs to (CudaEmitter::print_for), so consecutive k steps overlap.
  return fmt::format(R"(DRAGON_INLINE void {0}(float* c, const void* a, const void* b, int lane) {{
  (void)lane;
  const unsigned long long desc_a = dragon_wgmma_descriptor(a), desc_b = dragon_wgmma_descriptor(b);
  asm volatile("{{\n.reg .pred p;\nsetp.ne.b32 p, %{4}, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n{1}k16.f32.{2}.{2} {{{3}}}, %{5}, %{6}, p, 1, 1, 0, 0;\n}}\n"
               : {7}
               : "n"(1), "l"(desc_a), "l"(desc_b) : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}}
)",
                     name, n, dtype, outputs, regs, regs + 1, regs + 2, operands);
}

}  // namespace

void add_wgmma_planners(std::map<std::string, WarpPlanner, std::less<>>& planners) {
  planners.emplace("wgmma_fill_m64n8_f32", &plan_fill);
  planners.emplace("wgmma_store_m64n8_f32", &plan_store);
  // The names of schedule/tensor_intrin_wgmma.cc (test_cuda_wgmma checks that every
  // registered one has its row here).
  for (ir::DataType dtype : {ir::DataType::f16(), ir::DataType::bf16()}) {
    for (int64_t n = 8; n <= 256; n += 8) {
      planners.emplace(fmt::format("wgmma_m64n{1}k16_{0}{0}f32_trans_b", ir::to_string(dtype), n),
                       [dtype, n](const TileNest& nest, WarpPlanContext& context, std::string& why) {
                         return plan_wgmma(nest, context, why, dtype, n);
                       });
    }
  }
}

std::string_view wgmma_common_prelude() {
  // The device twin of wgmma_kmajor_swizzle128_descriptor: start address >> 4 in bits
  // 0-13, LBO 16 bytes (unused for K-major swizzled tiles) in 16-29, SBO 1024 bytes (one
  // 8-row atom) in 32-45, base offset 0, swizzle mode 1 (128 bytes) in 62-63.
  return R"(DRAGON_INLINE long long dragon_swizzle128_b16(long long index) {
  return index ^ (((index >> 6) & 7) << 3);
}
DRAGON_INLINE unsigned long long dragon_wgmma_descriptor(const void* tile) {
  const unsigned long long address = dragon_shared_address(tile);
  return ((address & 0x3FFFFull) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
DRAGON_INLINE void dragon_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
DRAGON_INLINE void dragon_wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
DRAGON_INLINE void dragon_warpgroup_sync() {
  asm volatile("bar.sync %0, 128;\n" :: "r"(1 + (int)(threadIdx.y + blockDim.y * threadIdx.z)) : "memory");
}
DRAGON_INLINE void dragon_wgmma_fill_m64n8_f32(float* c, int lane) {
  (void)lane;
  c[0] = 0.0f; c[1] = 0.0f; c[2] = 0.0f; c[3] = 0.0f;
}
DRAGON_INLINE void dragon_wgmma_store_m64n8_f32(float* tile, int row_stride, const float* c, int lane) {
  const int row = 16 * (lane / 32) + (lane % 32) / 4, col = 2 * (lane % 4);
  tile[row * row_stride + col] = c[0];
  tile[row * row_stride + col + 1] = c[1];
  tile[(row + 8) * row_stride + col] = c[2];
  tile[(row + 8) * row_stride + col + 1] = c[3];
}
)";
}

std::string wgmma_prelude(const std::set<std::string>& helpers) {
  std::string out(wgmma_common_prelude());
  for (const std::string& helper : helpers) out += wgmma_helper_prelude(helper);
  return out;
}

std::string wgmma_helper_prelude(const std::string& helper) {
  static const std::regex kMma("dragon_wgmma_m64n([0-9]+)k16_(f16|bf16)");
  std::smatch m;
  if (!std::regex_match(helper, m, kMma)) return {};
  return wgmma_mma_helper(helper, std::stoll(m[1]), m[2]);
}

}  // namespace dragon::codegen
