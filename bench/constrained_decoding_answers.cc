// The constrained decoder's allowed tokens at every position of its tests' scripts, one
// line each, to compare two builds' answers (-DDRAGON_DECODER_IN_SCRIPT: a tree from before
// src/decode). Not a timing: bench_constrained_decoding measures.
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/script/tokenizer.h"
#include "unit/script/tokenizer/workload_traces.h"
#ifdef DRAGON_DECODER_IN_SCRIPT
#include "dragon/script/constrained.h"
using dragon::script::ConstrainedDecoder;
using dragon::script::ConstrainedDecoderSettings;
#else
#include "dragon/decode/constrained_decoder.h"
using dragon::decode::ConstrainedDecoder;
using dragon::decode::ConstrainedDecoderSettings;
#endif

int main() {
  using namespace dragon;
  const script::Tokenizer& tok = script::Tokenizer::standard();
  std::vector<std::string> specs;
  for (const auto& family :
       {script::testing::gemm_specs(), script::testing::conv2d_specs(), script::testing::softmax_specs()}) {
    specs.insert(specs.end(), family.begin(), family.end());
  }
  for (const std::string& spec : specs) {
    const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    for (int64_t seed : {1, 2, 3}) {
      const std::vector<script::TokenId> tokens =
          tok.encode(script::encode(script::testing::workload_trace(spec, seed)));
      for (bool shortcuts : {true, false}) {
        ConstrainedDecoder decoder(tok, func, ConstrainedDecoderSettings{.shortcuts = shortcuts});
        for (size_t i = 0; i <= tokens.size(); ++i) {
          const std::vector<script::TokenId> allowed =
              decoder.allowed_tokens(std::span<const script::TokenId>(tokens.data(), i));
          std::printf("%s seed=%lld shortcuts=%d position=%zu allowed=%zu:", spec.c_str(),
                      static_cast<long long>(seed), shortcuts ? 1 : 0, i, allowed.size());
          for (script::TokenId t : allowed) std::printf(" %d", static_cast<int>(t));
          std::printf("\n");
        }
      }
    }
  }
  return 0;
}
