#include "compiler/ir/binding.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace {

// Every bound tensor that is not an input (a broadcast of [s0, 1] and
// [1, s1] is s0 * s1 elements) within max_elements.
absl::Status CheckComputedValues(const Graph& g, const SizeBinding& b, int64_t max_elements) {
  for (const Node& n : g.nodes) {
    for (ValueId o : n.outputs) {
      const Value& v = g.value(o);
      if (!v.is_tensor) continue;
      const std::vector<int64_t> shape = b.Shape(g, o);
      if (absl::Status s = CheckElementCount(shape, max_elements); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(ValueName(g, o), " (", OpName(n.op),
                                                       ") is [", absl::StrJoin(shape, ", "),
                                                       "] at these sizes: ", s.message()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckElementCount(const std::vector<int64_t>& sizes, int64_t max_elements) {
  int64_t span = 1;  // the product of max(size, 1), up to max_elements
  bool over = false, zero = false;
  double elements = 1, span_d = 1;  // for the message only
  for (int64_t e : sizes) {
    elements *= static_cast<double>(e);
    zero = zero || e == 0;
    if (e <= 0) continue;  // negative sizes are refused where they are read
    span_d *= static_cast<double>(e);
    over = over || __builtin_mul_overflow(span, e, &span) || span > max_elements;
  }
  if (!over) return absl::OkStatus();
  if (!zero) {
    return absl::InvalidArgumentError(
        absl::StrCat("a tensor of ", elements, " elements exceeds the limit of ", max_elements));
  }
  return absl::InvalidArgumentError(absl::StrCat("a tensor of 0 elements whose other extents make ",
                                                 span_d, " exceeds the limit of ", max_elements));
}

absl::StatusOr<SizeBinding> BindShapes(const Graph& g,
                                       const std::vector<std::vector<int64_t>>& input_shapes,
                                       int64_t max_elements) {
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
    if (absl::Status s = CheckElementCount(shape, max_elements); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", ValueName(g, v.id), " is [", absl::StrJoin(shape, ", "), "]: ", s.message()));
    }
  }
  for (SymbolId s = 0; s < static_cast<SymbolId>(g.symbols.size()); ++s) {
    Extent c = g.Canonical(Extent::Symbolic(s));
    b.symbol_sizes[s] = c.is_static() ? c.size : b.symbol_sizes[c.symbol];
  }
  if (absl::Status s = CheckComputedValues(g, b, max_elements); !s.ok()) return s;
  return b;
}

}  // namespace fusiond
