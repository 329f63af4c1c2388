// One model configuration file of the corpus (data/corpus/models/*.tsv): a family, the
// sizes of its models as rows of variables, sweeps (batch, seq, dtype, ...) and the
// layers' operators as op spec templates (spec_template.h). Expanding it yields every
// model x sweep point x operator as an op spec; deduplication is corpus.cc's job.
//
//   family  gpt2        GPT-2 decoder (description)
//   sweep   batch       1,8,32
//   sweep   dtype       f16,bf16
//   model   gpt2-small  hidden=768,heads=12,ffn=3072
//   let     tokens      batch*seq                 (a derived variable, computed per binding)
//   op      mlp_up      matmul_bias_act:m={batch*seq},n={ffn},k={hidden},activation=gelu,dtype={dtype}
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "spec_template.h"

namespace dragon::data {

class ModelFile {
 public:
  // Reads and checks `path` (errors name `label`, e.g. "models/gpt2.tsv:7: ..."): row
  // kinds and widths, variable assignments, templates (unknown variables, syntax), that
  // every model defines what the templates read, and that each op row expands to a spec
  // that parses for the first model and sweep point.
  static ModelFile read(const std::string& path, const std::string& label);

  const std::string& family() const { return family_; }
  const std::string& description() const { return description_; }
  const std::string& label() const { return label_; }
  // models x sweep points x op rows.
  int64_t candidate_count() const;

  // Called once per candidate, models in file order, then sweep points (the first sweep
  // varying slowest), then op rows. `origin` says where it came from for people
  // ("gpt2-small batch=8 seq=1024 dtype=f16 mlp_up"); `where` is the op row's "LABEL:LINE".
  using Visit = std::function<void(const std::string& spec, const std::string& origin, const std::string& where)>;
  // Throws UserError "LABEL:LINE: ORIGIN: why" when an expression cannot be evaluated.
  void expand(const Visit& visit) const;

 private:
  struct Model {
    std::string name;
    std::vector<TemplateValue> values;  // one per variable; sweep slots are filled in expand
    std::vector<bool> defined;
    int line = 0;
  };
  struct Op {
    std::string name;
    std::string text;
    SpecTemplate spec;
    int line = 0;
  };
  struct Sweep {
    std::string name;
    std::vector<TemplateValue> values;
  };
  struct Let {
    int slot = 0;
    SpecTemplate expr;  // "{EXPR}"
    int line = 0;
  };

  // Computes the lets of one binding in file order; errors name the let's line and `model`.
  void bind_lets(std::vector<TemplateValue>& values, const std::string& model) const;

  std::string label_;
  std::string family_;
  std::string description_;
  // Sweeps first, in file order, then model variables, then lets in file order.
  std::vector<std::string> variables_;
  std::vector<Sweep> sweeps_;
  std::vector<Let> lets_;
  // Per op row: the sweep variables it depends on (through lets too), for origins.
  std::vector<std::vector<int>> op_sweeps_;
  std::vector<Model> models_;
  std::vector<Op> ops_;
};

}  // namespace dragon::data
