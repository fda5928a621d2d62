#include "compiler/ir/binding.h"

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"

namespace fusiond {

absl::StatusOr<SizeBinding> BindShapes(const Graph& g,
                                       const std::vector<std::vector<int64_t>>& input_shapes) {
  if (input_shapes.size() != g.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the fusion takes ", g.inputs.size(), " inputs, got ", input_shapes.size()));
  }
  SizeBinding b;
  b.symbol_sizes.assign(g.symbols.size(), -1);
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    const auto& shape = input_shapes[i];
    if (!v.is_tensor) {
      if (!shape.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " (", ValueName(g, v.id),
                                                       ") is a scalar but was given a shape"));
      }
      continue;
    }
    if (static_cast<int>(shape.size()) != v.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " (", ValueName(g, v.id),
                                                     ") has rank ", v.rank(), " but was given ",
                                                     shape.size(), " sizes"));
    }
    for (int a = 0; a < v.rank(); ++a) {
      if (shape[a] < 0) {
        return absl::InvalidArgumentError(absl::StrCat("input ", ValueName(g, v.id), " axis ", a,
                                                       " has negative size ", shape[a]));
      }
      // Declared static extents and symbols bound to a static size.
      Extent declared = v.shape[a];
      Extent canon = g.Canonical(declared);
      if (canon.is_static()) {
        if (canon.size != shape[a]) {
          return absl::InvalidArgumentError(
              absl::StrCat("input ", ValueName(g, v.id), " axis ", a, " is ", shape[a],
                           " but the definition requires ", canon.size));
        }
        continue;
      }
      int64_t& slot = b.symbol_sizes[canon.symbol];
      if (slot == -1) {
        slot = shape[a];
      } else if (slot != shape[a]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", ValueName(g, v.id), " axis ", a, " is ", shape[a], " but ",
            g.ExtentName(canon), " is ", slot, " and the definition requires them equal"));
      }
    }
  }
  for (SymbolId s = 0; s < static_cast<SymbolId>(g.symbols.size()); ++s) {
    Extent c = g.Canonical(Extent::Symbolic(s));
    b.symbol_sizes[s] = c.is_static() ? c.size : b.symbol_sizes[c.symbol];
  }
  return b;
}

}  // namespace fusiond
