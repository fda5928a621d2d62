// Pointwise ops (unary, binary, where, cast): computed in float64 over
// broadcast operands, then rounded once to the result dtype.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "compiler/reference/eval_internal.h"

namespace fusiond {
namespace reference_internal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Applies f to the operands at every index of `out`, writing dst densely.
// The op is a template parameter so each op gets its own tight loop.
template <size_t N, class F>
absl::Status MapN(const std::array<const View*, N>& in, const Shape& out, double* dst, F f) {
  std::array<Shape, N> strides;
  std::array<const Shape*, N> sp;
  std::array<const double*, N> base;
  for (size_t k = 0; k < N; ++k) {
    auto s = BroadcastStrides(*in[k], out);
    if (!s.ok()) return s.status();
    strides[k] = std::move(*s);
    sp[k] = &strides[k];
    base[k] = in[k]->data();
  }
  int64_t pos = 0;
  ForEachRow<N>(
      out, sp,
      [&](const std::array<int64_t, N>& off, int64_t len, const std::array<int64_t, N>& inner) {
        if constexpr (N == 1) {
          const double* a = base[0] + off[0];
          for (int64_t j = 0; j < len; ++j) dst[pos + j] = f(a[j * inner[0]]);
        } else if constexpr (N == 2) {
          const double* a = base[0] + off[0];
          const double* b = base[1] + off[1];
          for (int64_t j = 0; j < len; ++j) {
            dst[pos + j] = f(a[j * inner[0]], b[j * inner[1]]);
          }
        } else {
          const double* a = base[0] + off[0];
          const double* b = base[1] + off[1];
          const double* c = base[2] + off[2];
          for (int64_t j = 0; j < len; ++j) {
            dst[pos + j] = f(a[j * inner[0]], b[j * inner[1]], c[j * inner[2]]);
          }
        }
        pos += len;
      });
  return absl::OkStatus();
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Integer values are held exactly in doubles; bitwise ops work on their
// 64-bit two's complement form (RoundTo then wraps to the result's width).
int64_t Bits(double v) { return std::isfinite(v) ? static_cast<int64_t>(v) : 0; }

// remainder: the sign of the divisor, as Python's % and torch.remainder.
double Remainder(double a, double b) {
  const double r = std::fmod(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

// Shifts by a count outside [0, 64) give 0 (left) or the sign (right).
double ShiftLeft(double a, double b) {
  if (!(b >= 0 && b < 64)) return 0;
  return static_cast<double>(
      static_cast<int64_t>(static_cast<uint64_t>(Bits(a)) << static_cast<int>(b)));
}
double ShiftRight(double a, double b) {
  if (!(b >= 0 && b < 64)) return Bits(a) < 0 ? -1.0 : 0.0;
  return static_cast<double>(Bits(a) >> static_cast<int>(b));
}

// max/min that return NaN when either side is NaN.
double MaxNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  return a > b ? a : b;
}
double MinNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  return a < b ? a : b;
}

absl::Status Unary(OpKind op, const View& x, const Shape& out, double* dst, bool bool_out) {
  std::array<const View*, 1> in{&x};
  auto map = [&](auto f) { return MapN<1>(in, out, dst, f); };
  switch (op) {
    case OpKind::kAbs:
      return map([](double v) { return std::fabs(v); });
    case OpKind::kNeg:
      return map([](double v) { return -v; });
    case OpKind::kExp:
      return map([](double v) { return std::exp(v); });
    case OpKind::kExp2:
      return map([](double v) { return std::exp2(v); });
    case OpKind::kLog:
      return map([](double v) { return std::log(v); });
    case OpKind::kLog1p:
      return map([](double v) { return std::log1p(v); });
    case OpKind::kExpm1:
      return map([](double v) { return std::expm1(v); });
    case OpKind::kSqrt:
      return map([](double v) { return std::sqrt(v); });
    case OpKind::kRsqrt:
      return map([](double v) { return 1.0 / std::sqrt(v); });
    case OpKind::kReciprocal:
      return map([](double v) { return 1.0 / v; });
    case OpKind::kSin:
      return map([](double v) { return std::sin(v); });
    case OpKind::kCos:
      return map([](double v) { return std::cos(v); });
    case OpKind::kTanh:
      return map([](double v) { return std::tanh(v); });
    case OpKind::kSigmoid:
      return map(Sigmoid);
    case OpKind::kErf:
      return map([](double v) { return std::erf(v); });
    case OpKind::kErfc:
      return map([](double v) { return std::erfc(v); });
    case OpKind::kRelu:
      return map([](double v) { return MaxNaN(v, 0.0); });
    case OpKind::kLogicalNot:
      return map([](double v) { return v == 0 ? 1.0 : 0.0; });
    case OpKind::kFloor:
      return map([](double v) { return std::floor(v); });
    case OpKind::kCeil:
      return map([](double v) { return std::ceil(v); });
    case OpKind::kSign:  // (0 < v) - (v < 0): 0 for zeros and NaN
      return map([](double v) { return static_cast<double>((0 < v) - (v < 0)); });
    case OpKind::kRound:  // half to even
      return map([](double v) { return std::nearbyint(v); });
    case OpKind::kTrunc:
      return map([](double v) { return std::trunc(v); });
    case OpKind::kLog2:
      return map([](double v) { return std::log2(v); });
    case OpKind::kLog10:
      return map([](double v) { return std::log10(v); });
    case OpKind::kIsNan:
      return map([](double v) { return std::isnan(v) ? 1.0 : 0.0; });
    case OpKind::kIsInf:
      return map([](double v) { return std::isinf(v) ? 1.0 : 0.0; });
    case OpKind::kIsFinite:
      return map([](double v) { return std::isfinite(v) ? 1.0 : 0.0; });
    case OpKind::kBitwiseNot:  // bools hold 0 or 1: ~ is logical not there
      return bool_out ? map([](double v) { return v == 0 ? 1.0 : 0.0; })
                      : map([](double v) { return static_cast<double>(~Bits(v)); });
    default:
      break;
  }
  return absl::InternalError(absl::StrCat("reference: ", OpName(op), " is not unary"));
}

absl::Status Binary(OpKind op, const View& x, const View& y, const Shape& out, double* dst) {
  std::array<const View*, 2> in{&x, &y};
  auto map = [&](auto f) { return MapN<2>(in, out, dst, f); };
  auto b = [](bool v) { return v ? 1.0 : 0.0; };
  switch (op) {
    case OpKind::kAdd:
      return map([](double p, double q) { return p + q; });
    case OpKind::kSub:
      return map([](double p, double q) { return p - q; });
    case OpKind::kMul:
      return map([](double p, double q) { return p * q; });
    case OpKind::kDiv:
      return map([](double p, double q) { return p / q; });
    case OpKind::kPow:
      return map([](double p, double q) { return std::pow(p, q); });
    case OpKind::kFmod:
      return map([](double p, double q) { return std::fmod(p, q); });
    case OpKind::kMaximum:
      return map(MaxNaN);
    case OpKind::kMinimum:
      return map(MinNaN);
    case OpKind::kEq:
      return map([&](double p, double q) { return b(p == q); });
    case OpKind::kNe:
      return map([&](double p, double q) { return b(p != q); });
    case OpKind::kLt:
      return map([&](double p, double q) { return b(p < q); });
    case OpKind::kLe:
      return map([&](double p, double q) { return b(p <= q); });
    case OpKind::kGt:
      return map([&](double p, double q) { return b(p > q); });
    case OpKind::kGe:
      return map([&](double p, double q) { return b(p >= q); });
    case OpKind::kLogicalAnd:
      return map([&](double p, double q) { return b(p != 0 && q != 0); });
    case OpKind::kLogicalOr:
      return map([&](double p, double q) { return b(p != 0 || q != 0); });
    case OpKind::kAtan2:
      return map([](double p, double q) { return std::atan2(p, q); });
    case OpKind::kRemainder:
      return map(Remainder);
    case OpKind::kBitwiseAnd:
      return map([](double p, double q) { return static_cast<double>(Bits(p) & Bits(q)); });
    case OpKind::kBitwiseOr:
      return map([](double p, double q) { return static_cast<double>(Bits(p) | Bits(q)); });
    case OpKind::kBitwiseXor:
      return map([](double p, double q) { return static_cast<double>(Bits(p) ^ Bits(q)); });
    case OpKind::kBitwiseLeftShift:
      return map(ShiftLeft);
    case OpKind::kBitwiseRightShift:
      return map(ShiftRight);
    default:
      break;
  }
  return absl::InternalError(absl::StrCat("reference: ", OpName(op), " is not binary"));
}

}  // namespace

absl::StatusOr<View> EvalPointwise(const Node& n, const std::vector<const View*>& in,
                                   DataType out_dtype, const Shape& out_shape) {
  View out = NewView(out_shape, out_dtype);
  double* dst = out.buf->data();
  absl::Status s;
  switch (CategoryOf(n.op)) {
    case OpCategory::kUnary:
      s = Unary(n.op, *in[0], out_shape, dst, out_dtype == DataType::kBool);
      break;
    case OpCategory::kBinary:
      s = Binary(n.op, *in[0], *in[1], out_shape, dst);
      break;
    case OpCategory::kTernary:
      if (n.op == OpKind::kClamp) {  // min(max(x, lo), hi), NaN from any side
        s = MapN<3>({in[0], in[1], in[2]}, out_shape, dst,
                    [](double x, double lo, double hi) { return MinNaN(MaxNaN(x, lo), hi); });
        break;
      }
      s = MapN<3>({in[0], in[1], in[2]}, out_shape, dst,
                  [](double c, double a, double b) { return c != 0 ? a : b; });
      break;
    case OpCategory::kCast:
      s = MapN<1>({in[0]}, out_shape, dst, [](double v) { return v; });
      break;
    default:
      return absl::InternalError(absl::StrCat("reference: ", OpName(n.op), " is not pointwise"));
  }
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("node ", n.id, " (", OpName(n.op), "): ", s.message()));
  }
  RoundBuffer(out_dtype, dst, out.numel());
  return out;
}

}  // namespace reference_internal
}  // namespace fusiond
