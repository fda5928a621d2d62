// Helpers shared by the reference interpreter's unit tests.
#ifndef FUSIOND_COMPILER_REFERENCE_TEST_UTIL_H_
#define FUSIOND_COMPILER_REFERENCE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <vector>

#include "compiler/ir/builder.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace testing_util {

// Attrs with only `dims` set (permute, squeeze, reductions).
inline Attrs WithDims(std::vector<int64_t> dims) {
  Attrs a;
  a.dims = std::move(dims);
  return a;
}

inline HostTensor Tensor(DataType dtype, std::vector<int64_t> shape, std::vector<double> data) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::move(data);
  return t;
}

// Evaluates g and returns its only output; fails the test on error.
inline HostTensor EvalOne(const Graph& g, const std::vector<HostTensor>& inputs) {
  auto r = Evaluate(g, inputs);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok() || r->size() != 1) return HostTensor{};
  return (*r)[0];
}

}  // namespace testing_util
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_REFERENCE_TEST_UTIL_H_
