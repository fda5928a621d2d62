// DefinitionLowering::TriangleOp: fd.ops.triu / tril(x, diagonal=0) of a
// tensor of rank >= 2 (batched over its leading axes), as the causal masks
// front ends print are built: a row iota and a column iota over the last two
// axes, broadcast against each other, compared, and where(mask, x, 0).
#include "absl/strings/str_cat.h"
#include "compiler/frontend/definition.h"

namespace fusiond {
namespace frontend {
absl::StatusOr<PyValue> DefinitionLowering::TriangleOp(const Expr& call, const std::string& name) {
  const std::string fname = absl::StrCat("fd.ops.", name);
  auto args = BindArguments(call, fname, {"x", "diagonal"}, 1, errors_);
  if (!args.ok()) return args.status();
  auto x = Operand(*(*args)[0]);
  if (!x.ok()) return x.status();
  int64_t diagonal = 0;
  if (const Expr* d = (*args)[1]) {
    auto v = IntArg(*d, "diagonal");
    if (!v.ok()) return v.status();
    diagonal = *v;
  }
  const Value& xv = g_->value(*x);
  const int rank = xv.is_tensor ? xv.rank() : 0;
  if (rank < 2) {
    return errors_.Error((*args)[0]->loc,
                         absl::StrCat(fname, " of ", DescribeValue(*g_, ValueOf(*x))),
                         "a tensor of rank 2 or more (its last two axes are the matrix)");
  }
  const std::vector<Extent> shape = xv.shape;
  const DataType dtype = xv.dtype;
  auto build = [&]() -> absl::StatusOr<ValueId> {
    std::vector<ValueId> index;  // the row iota, then the column iota, broadcast to the matrix
    for (int axis : {rank - 2, rank - 1}) {
      Attrs attrs;
      attrs.shape = {shape[axis]};
      attrs.dtype = DataType::kInt64;
      ValueId start = b_.DefineConstant(0, DataType::kInt64);
      ValueId step = b_.DefineConstant(1, DataType::kInt64);
      auto iota = b_.AddNode(OpKind::kIota, {start, step}, attrs);
      if (!iota.ok()) return iota.status();
      auto wide = b_.BroadcastInDim((*iota)[0], {shape[rank - 2], shape[rank - 1]},
                                    {axis == rank - 2 ? 0 : 1});
      if (!wide.ok()) return wide.status();
      index.push_back(*wide);
    }
    auto diff = b_.Binary(OpKind::kSub, index[1], index[0]);
    if (!diff.ok()) return diff;
    ValueId k = b_.DefineConstant(static_cast<double>(diagonal), DataType::kInt64);
    auto mask = b_.Binary(name == "triu" ? OpKind::kGe : OpKind::kLe, *diff, k);
    if (!mask.ok()) return mask;
    auto full = b_.BroadcastInDim(*mask, shape, {rank - 2, rank - 1});
    if (!full.ok()) return full;
    ValueId zero = b_.DefineConstant(0, dtype);
    return b_.Where(*full, *x, zero);
  };
  auto out = build();
  if (!out.ok()) {
    return errors_.At(call.loc, out.status(),
                      absl::StrCat(fname, "(x, diagonal) of a tensor of rank 2 or more"));
  }
  return ValueOf(*out);
}

}  // namespace frontend
}  // namespace fusiond
