// Internal machinery of the reference interpreter (not part of its API).
//
// Every evaluated value is a View: a strided window on a shared buffer of
// doubles that already hold values rounded to the view's dtype. Shape ops
// (broadcast, expand, squeeze, permute) only make new views; pointwise ops
// and reductions write fresh contiguous buffers; reshape copies only when
// its operand is not contiguous. Scalars are rank-0 views.
#ifndef FUSIOND_COMPILER_REFERENCE_EVAL_INTERNAL_H_
#define FUSIOND_COMPILER_REFERENCE_EVAL_INTERNAL_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace reference_internal {

using Shape = std::vector<int64_t>;

// An uninitialized array of doubles (no zero fill: every producer writes
// all of it).
class Buffer {
 public:
  explicit Buffer(int64_t n) : data_(new double[n > 0 ? n : 1]), size_(n) {}
  double* data() { return data_.get(); }
  const double* data() const { return data_.get(); }
  int64_t size() const { return size_; }

 private:
  std::unique_ptr<double[]> data_;
  int64_t size_;
};

// Buffers of values that died during one Evaluate call, kept for reuse so
// that large evaluations do not pay for fresh pages on every node.
class BufferPool {
 public:
  // A buffer of exactly n doubles, recycled when one is free.
  std::shared_ptr<Buffer> Get(int64_t n);
  // Takes b back when nothing else holds it.
  void Put(std::shared_ptr<Buffer> b);

 private:
  std::vector<std::shared_ptr<Buffer>> free_;
};

// While alive, NewView draws from `pool` (on this thread).
class ScopedBufferPool {
 public:
  explicit ScopedBufferPool(BufferPool* pool);
  ~ScopedBufferPool();

 private:
  BufferPool* prev_;
};

struct View {
  std::shared_ptr<Buffer> buf;
  int64_t offset = 0;
  Shape shape;
  Shape strides;  // in elements; 0 on broadcast axes
  DataType dtype = DataType::kFloat;

  const double* data() const { return buf->data() + offset; }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;
  // True when the view covers its elements densely in row-major order.
  bool IsContiguous() const;
};

int64_t NumElements(const Shape& shape);
Shape RowMajorStrides(const Shape& shape);
// A fresh contiguous view of `shape`; its values are uninitialized.
View NewView(const Shape& shape, DataType dtype);
// A rank-0 view holding one value (already rounded by the caller).
View ScalarView(double v, DataType dtype);
// `v` itself when contiguous, else a dense copy.
View Materialize(const View& v);
HostTensor ToHostTensor(const View& v);
// Rounds n doubles in place to dtype (see RoundTo).
void RoundBuffer(DataType dtype, double* p, int64_t n);

// Strides with which operand `v` is read at each index of `out`: its own
// on matching axes, 0 where it broadcasts (extent 1, or a rank-0 operand).
// InvalidArgument when an extent neither matches nor is 1.
absl::StatusOr<Shape> BroadcastStrides(const View& v, const Shape& out);

// Calls body(offsets, inner_extent, inner_strides) once per row of `shape`
// (every index of all axes but the last), in row-major order; offsets[k]
// is operand k's element offset at the row start. A rank-0 shape has one
// row of one element.
template <size_t N, class Body>
void ForEachRow(const Shape& shape, const std::array<const Shape*, N>& strides, Body&& body) {
  std::array<int64_t, N> off{};
  std::array<int64_t, N> inner{};
  const int r = static_cast<int>(shape.size());
  if (r == 0) {
    body(off, int64_t{1}, inner);
    return;
  }
  for (int64_t e : shape) {
    if (e == 0) return;
  }
  for (size_t k = 0; k < N; ++k) inner[k] = (*strides[k])[r - 1];
  std::vector<int64_t> idx(r, 0);
  const int64_t len = shape[r - 1];
  while (true) {
    body(off, len, inner);
    int a = r - 2;
    for (; a >= 0; --a) {
      ++idx[a];
      for (size_t k = 0; k < N; ++k) off[k] += (*strides[k])[a];
      if (idx[a] < shape[a]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= (*strides[k])[a] * shape[a];
      idx[a] = 0;
    }
    if (a < 0) return;
  }
}

// Node evaluators. `out_shapes` are the bound shapes of the node's outputs;
// each returns the node's outputs, rounded to `out_dtypes`.
absl::StatusOr<View> EvalPointwise(const Node& n, const std::vector<const View*>& in,
                                   DataType out_dtype, const Shape& out_shape);
absl::StatusOr<View> EvalShapeOp(const Node& n, const View& in, const Shape& out_shape);
// uniform / normal: element i of out_shape (row-major) from Philox
// (compiler/ir/philox.h), rounded to out_dtype; iota: start + step * i.
absl::StatusOr<View> EvalIndexed(const Node& n, const std::vector<const View*>& in,
                                 DataType out_dtype, const Shape& out_shape);
// slice (a view), pad and cat (fresh buffers); compiler/reference/shift.cc.
absl::StatusOr<View> EvalShift(const Node& n, const std::vector<const View*>& in,
                               const Shape& out_shape);
absl::StatusOr<std::vector<View>> EvalReduction(const Node& n, const View& in,
                                                const std::vector<DataType>& out_dtypes,
                                                const Shape& out_shape);

}  // namespace reference_internal
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_REFERENCE_EVAL_INTERNAL_H_
