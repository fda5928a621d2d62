// Views: allocation, density checks, copies and broadcast strides.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/reference/eval_internal.h"

namespace fusiond {
namespace reference_internal {
namespace {
thread_local BufferPool* current_pool = nullptr;
}  // namespace

std::shared_ptr<Buffer> BufferPool::Get(int64_t n) {
  for (size_t i = 0; i < free_.size(); ++i) {
    if (free_[i]->size() == n) {
      std::shared_ptr<Buffer> b = std::move(free_[i]);
      free_.erase(free_.begin() + i);
      return b;
    }
  }
  return std::make_shared<Buffer>(n);
}

void BufferPool::Put(std::shared_ptr<Buffer> b) {
  // Small buffers are cheap to allocate; keep only large ones, and a few.
  if (b && b.use_count() == 1 && b->size() >= 4096 && free_.size() < 16) {
    free_.push_back(std::move(b));
  }
}

ScopedBufferPool::ScopedBufferPool(BufferPool* pool) : prev_(current_pool) { current_pool = pool; }
ScopedBufferPool::~ScopedBufferPool() { current_pool = prev_; }

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

int64_t View::numel() const { return NumElements(shape); }

bool View::IsContiguous() const {
  int64_t expect = 1;
  for (int a = rank() - 1; a >= 0; --a) {
    if (shape[a] != 1 && strides[a] != expect) return false;
    expect *= shape[a];
  }
  return true;
}

Shape RowMajorStrides(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (int a = static_cast<int>(shape.size()) - 2; a >= 0; --a) {
    s[a] = s[a + 1] * shape[a + 1];
  }
  return s;
}

View NewView(const Shape& shape, DataType dtype) {
  View v;
  const int64_t n = NumElements(shape);
  v.buf = current_pool ? current_pool->Get(n) : std::make_shared<Buffer>(n);
  v.shape = shape;
  v.strides = RowMajorStrides(shape);
  v.dtype = dtype;
  return v;
}

View ScalarView(double value, DataType dtype) {
  View v = NewView({}, dtype);
  v.buf->data()[0] = value;
  return v;
}

View Materialize(const View& v) {
  if (v.IsContiguous()) return v;
  View out = NewView(v.shape, v.dtype);
  double* dst = out.buf->data();
  const double* src = v.data();
  int64_t k = 0;
  ForEachRow<1>(
      v.shape, {&v.strides},
      [&](const std::array<int64_t, 1>& off, int64_t len, const std::array<int64_t, 1>& inner) {
        const double* p = src + off[0];
        for (int64_t j = 0; j < len; ++j) dst[k + j] = p[j * inner[0]];
        k += len;
      });
  return out;
}

HostTensor ToHostTensor(const View& v) {
  View dense = Materialize(v);
  HostTensor t;
  t.dtype = v.dtype;
  t.shape = v.shape;
  const double* p = dense.data();
  t.data.assign(p, p + dense.numel());
  return t;
}

absl::StatusOr<Shape> BroadcastStrides(const View& v, const Shape& out) {
  Shape s(out.size(), 0);
  if (v.rank() == 0) return s;
  if (v.rank() != static_cast<int>(out.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("an operand of rank ", v.rank(), " cannot broadcast to rank ", out.size()));
  }
  for (size_t a = 0; a < out.size(); ++a) {
    if (v.shape[a] == out[a]) {
      s[a] = out[a] == 1 ? 0 : v.strides[a];
    } else if (v.shape[a] != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("operand shape [", absl::StrJoin(v.shape, ", "), "] cannot broadcast to [",
                       absl::StrJoin(out, ", "), "]"));
    }
  }
  return s;
}

}  // namespace reference_internal
}  // namespace fusiond
