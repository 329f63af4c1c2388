// RewriteUnboundBlock (MetaSchedule's postprocessor): every top-level nest still unbound
// after the sketch gets AutoBind's binding with the thread count fixed at
// min(extent, max_threads_per_block), so every candidate launches on the GPU.
#include "dragon/search/auto_bind.h"
#include "postproc/postproc.h"

namespace dragon::search {
namespace {

class RewriteUnboundBlock : public Postproc {
 public:
  explicit RewriteUnboundBlock(AutoBindOptions options) : options_(std::move(options)) {}
  std::optional<std::string> apply(schedule::Schedule& sch) const override {
    auto_bind(sch, options_);
    return std::nullopt;
  }

 private:
  AutoBindOptions options_;
};

}  // namespace

std::unique_ptr<Postproc> make_rewrite_unbound_block_postproc(ParamReader& params, const lower::Target& target) {
  AutoBindOptions options;
  options.max_threadblocks = params.get_int("max_threadblocks", 256);
  options.max_threads_per_block =
      params.get_int("max_threads_per_block", target.max_threads_per_block > 0 ? target.max_threads_per_block : 1024);
  return std::make_unique<RewriteUnboundBlock>(options);
}

}  // namespace dragon::search
