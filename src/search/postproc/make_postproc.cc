// make_postproc (postproc.h): the kinds of postproc_kinds.def by name, each built by its
// factory from its parameters.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/support/error.h"
#include "postproc/postproc.h"

namespace dragon::search {

const std::vector<std::string>& postproc_kind_names() {
  static const std::vector<std::string> names = {
#define DRAGON_SEARCH_POSTPROC(name) #name,
#include "postproc/postproc_kinds.def"
  };
  return names;
}

std::unique_ptr<Postproc> make_postproc(const PostprocSpec& spec, const lower::Target& target) {
  ParamReader params(spec.params, "postprocessor " + spec.postproc);
  std::unique_ptr<Postproc> postproc;
#define DRAGON_SEARCH_POSTPROC(name) \
  if (spec.postproc == #name) postproc = make_##name##_postproc(params, target);
#include "postproc/postproc_kinds.def"
  if (!postproc) {
    throw UserError(fmt::format("unknown postprocessor '{}' (valid: {})", spec.postproc,
                                fmt::join(postproc_kind_names(), ", ")));
  }
  params.finish();
  return postproc;
}

}  // namespace dragon::search
