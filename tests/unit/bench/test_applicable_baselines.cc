// Which baselines apply to a problem, from its op alone: what `dragon bench --list` prints
// and what a run adds rows for.
#include <gtest/gtest.h>

#include "dragon/bench/applicable_baselines.h"

namespace dragon::bench {
namespace {

// An eager table that knows only the op kinds it is given.
class TableOf final : public EagerBaselines {
 public:
  explicit TableOf(std::vector<std::string> kinds) : kinds_(std::move(kinds)) {}
  std::string library() const override { return "test table"; }
  bool cuda_available() const override { return false; }
  std::string call(std::string_view kind) const override {
    for (const std::string& k : kinds_) {
      if (k == kind) return "at::" + k;
    }
    return "";
  }
  std::unique_ptr<EagerComputation> bind(std::string_view, const std::map<std::string, std::string>&,
                                         const std::vector<EagerTensor>&, EagerDevice, bool) const override {
    return nullptr;
  }

 private:
  std::vector<std::string> kinds_;
};

ApplicableBaselines of(const std::string& spec, const EagerBaselines* eager) {
  return applicable_baselines(ops::OpRegistry::global().make_workload(spec), eager);
}

TEST(ApplicableBaselines, MatmulsGetCublasConvolutionsPoolingAndSoftmaxGetCudnn) {
  TableOf table({"matmul", "conv2d", "relu"});
  EXPECT_EQ(of("matmul:m=64,n=32,k=16", &table).describe(), "eager, cuBLAS");
  EXPECT_EQ(of("batch_matmul:batch=4,m=8,n=8,k=8", nullptr).vendor, "cuBLAS");
  ApplicableBaselines conv = of("conv2d:batch=2,in_channels=3,out_channels=8,size=16x16,kernel=3x3", &table);
  EXPECT_EQ(conv.describe(), "eager, cuDNN") << conv.why_no_vendor;
  EXPECT_EQ(of("max_pool2d:batch=2,channels=3,height=16,width=16,kernel=2,stride=2", nullptr).vendor, "cuDNN");
  EXPECT_EQ(of("softmax:shape=8x128,axis=1", nullptr).vendor, "cuDNN");
  // Dilated pooling is beyond cuDNN: eager only, and the reason is kept.
  ApplicableBaselines dilated =
      of("max_pool1d:batch=2,channels=3,length=64,kernel=4,stride=1,padding=1,dilation=2", nullptr);
  EXPECT_EQ(dilated.vendor, "");
  EXPECT_NE(dilated.why_no_vendor.find("dilation"), std::string::npos) << dilated.why_no_vendor;
}

TEST(ApplicableBaselines, OtherOpsGetEagerOnlyAndSayWhyNoVendorLibrary) {
  TableOf table({"relu"});
  ApplicableBaselines relu = of("relu:shape=16x1024", &table);
  EXPECT_EQ(relu.describe(), "eager");
  EXPECT_NE(relu.why_no_vendor.find("cuBLAS applies to matmul and batch_matmul only"), std::string::npos)
      << relu.why_no_vendor;
  EXPECT_EQ(of("relu:shape=16x1024", nullptr).describe(), "eager (no plugin here)");
  TableOf empty({});
  EXPECT_EQ(of("relu:shape=16x1024", &empty).describe(), "none");
  EXPECT_EQ(of("matmul:m=64,n=32,k=16", &empty).describe(), "cuBLAS");
}

}  // namespace
}  // namespace dragon::bench
