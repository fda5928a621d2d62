// asinh, acosh, lgamma and erfinv written with IR ops, in the compute type
// t (float32 or double; math_calls.cc casts the operand and the result).
// Nodes are made in the order fusiond.wire_math makes them, so both front
// ends give one canonical graph.
//
// Accuracy (tests/frontends/special_math_test.cc measures it over each
// domain against <cmath>, and erfinv against a bisection on erfl):
//  - asinh, acosh: log1p of a cancellation-free argument; log(|x|) + ln 2
//    beyond 2^28, where x^2 would overflow float32. Relative error 1.1e-7
//    in float32, 2.2e-16 in double.
//  - lgamma: Lanczos (g = 7, 9 terms) for x >= 1/2, reflection
//    log(pi / |sin(pi r)|) - lgamma(1 - x) with r = x - round(x) below.
//    Error over max(1, |lgamma|) 2.4e-6 in float32, 4.2e-15 in double
//    (x in [-50, 1e4] off the poles; absolute near the roots 1 and 2).
//  - erfinv: Giles' single-precision polynomials in w = -log((1 - x)(1 + x))
//    (relative error 2.4e-7 in float32); in double four Newton steps on erf
//    for |x| < 1/2 and on log(erfc) above (erfc keeps its relative accuracy
//    near +-1), relative error 2.3e-16 down to 1e-16 from +-1; +-1 gives +-inf.
#include "compiler/frontend/special_math.h"

#include <cmath>
#include <limits>

namespace fusiond {
namespace frontend {
namespace {

// Builder calls whose first error sticks: later calls return their operand
// unchanged and make no node, and status() reports the error.
class Chain {
 public:
  explicit Chain(GraphBuilder& b) : b_(b) {}
  ValueId U(OpKind op, ValueId a) { return ok() ? Take(b_.Unary(op, a), a) : a; }
  ValueId B(OpKind op, ValueId a, ValueId c) { return ok() ? Take(b_.Binary(op, a, c), a) : a; }
  ValueId W(ValueId p, ValueId a, ValueId c) { return ok() ? Take(b_.Where(p, a, c), a) : a; }
  ValueId K(double v) { return b_.DefineConstant(v, DataType::kDouble); }
  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

 private:
  ValueId Take(absl::StatusOr<ValueId> r, ValueId fallback) {
    if (r.ok()) return *r;
    status_ = r.status();
    return fallback;
  }
  GraphBuilder& b_;
  absl::Status status_;
};

constexpr double kBig = 268435456.0;  // 2^28: beyond it asinh(x) = log(2|x|) in double
const double kLn2 = std::log(2.0);
const double kPi = 3.14159265358979323846;

// Every node and constant is made in its own statement (argument order is
// unspecified in C++): the order fusiond.wire_math makes them in.
ValueId Asinh(Chain& c, ValueId x) {
  ValueId a = c.U(OpKind::kAbs, x);
  ValueId inv = c.U(OpKind::kReciprocal, a);
  ValueId q = c.B(OpKind::kMul, inv, inv);
  ValueId one = c.K(1);
  ValueId s = c.U(OpKind::kSqrt, c.B(OpKind::kAdd, one, q));
  ValueId den = c.B(OpKind::kAdd, inv, s);
  ValueId u = c.B(OpKind::kDiv, a, den);  // a^2 / (1 + sqrt(1 + a^2)), no overflow
  ValueId small = c.U(OpKind::kLog1p, c.B(OpKind::kAdd, a, u));
  ValueId la = c.U(OpKind::kLog, a);
  ValueId ln2 = c.K(kLn2);
  ValueId big = c.B(OpKind::kAdd, la, ln2);
  ValueId limit = c.K(kBig);
  ValueId r = c.W(c.B(OpKind::kGt, a, limit), big, small);
  ValueId zero = c.K(0);
  ValueId neg = c.B(OpKind::kLt, x, zero);
  ValueId nr = c.U(OpKind::kNeg, r);
  return c.W(neg, nr, r);
}

ValueId Acosh(Chain& c, ValueId x) {
  ValueId one = c.K(1);
  ValueId xm = c.B(OpKind::kSub, x, one);
  ValueId one2 = c.K(1);
  ValueId xp = c.B(OpKind::kAdd, x, one2);
  ValueId s = c.U(OpKind::kSqrt, c.B(OpKind::kMul, xm, xp));
  ValueId small = c.U(OpKind::kLog1p, c.B(OpKind::kAdd, xm, s));
  ValueId lx = c.U(OpKind::kLog, x);
  ValueId ln2 = c.K(kLn2);
  ValueId big = c.B(OpKind::kAdd, lx, ln2);
  ValueId limit = c.K(kBig);
  return c.W(c.B(OpKind::kGt, x, limit), big, small);
}

ValueId Lgamma(Chain& c, ValueId x) {
  static const double kP[] = {0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
                              771.32342877765313,   -176.61502916214059,   12.507343278686905,
                              -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  ValueId half = c.K(0.5);
  ValueId lt = c.B(OpKind::kLt, x, half);
  ValueId one = c.K(1);
  ValueId om = c.B(OpKind::kSub, one, x);
  ValueId y = c.W(lt, om, x);
  ValueId one2 = c.K(1);
  ValueId z = c.B(OpKind::kSub, y, one2);
  ValueId acc = x;
  for (int i = 8; i >= 1; --i) {  // the Lanczos sum, smallest terms first
    ValueId ki = c.K(i);
    ValueId zi = c.B(OpKind::kAdd, z, ki);
    ValueId pk = c.K(kP[i]);
    ValueId term = c.B(OpKind::kDiv, pk, zi);
    acc = i == 8 ? term : c.B(OpKind::kAdd, acc, term);
  }
  ValueId p0 = c.K(kP[0]);
  acc = c.B(OpKind::kAdd, acc, p0);
  // (z + 1/2) log(t) - t with t = z + 7.5, as (z + 1/2)(log t - 1) - 7: finite at t = inf.
  ValueId g = c.K(7.5);
  ValueId lt7 = c.U(OpKind::kLog, c.B(OpKind::kAdd, z, g));
  ValueId one3 = c.K(1);
  ValueId lm = c.B(OpKind::kSub, lt7, one3);
  ValueId half2 = c.K(0.5);
  ValueId zh = c.B(OpKind::kAdd, z, half2);
  ValueId m = c.B(OpKind::kMul, zh, lm);
  ValueId la = c.U(OpKind::kLog, acc);
  ValueId l = c.B(OpKind::kAdd, m, la);
  ValueId base = c.K(0.5 * std::log(2 * kPi) - 7);
  l = c.B(OpKind::kAdd, l, base);
  ValueId rx = c.U(OpKind::kRound, x);
  ValueId r = c.B(OpKind::kSub, x, rx);  // |sin(pi r)| = |sin(pi x)|, r in [-1/2, 1/2]
  ValueId pi = c.K(kPi);
  ValueId sn = c.U(OpKind::kAbs, c.U(OpKind::kSin, c.B(OpKind::kMul, r, pi)));
  ValueId lpi = c.K(std::log(kPi));
  ValueId lsn = c.U(OpKind::kLog, sn);
  ValueId refl = c.B(OpKind::kSub, lpi, lsn);
  refl = c.B(OpKind::kSub, refl, l);
  ValueId res = c.W(lt, refl, l);
  ValueId inf = c.U(OpKind::kIsInf, x);
  ValueId ax = c.U(OpKind::kAbs, x);
  return c.W(inf, ax, res);
}

ValueId Horner(Chain& c, ValueId w, const double* coef, int n) {
  ValueId p = c.K(coef[0]);
  for (int i = 1; i < n; ++i) {
    ValueId pw = c.B(OpKind::kMul, p, w);
    ValueId ci = c.K(coef[i]);
    p = c.B(OpKind::kAdd, pw, ci);
  }
  return p;
}

ValueId Erfinv(Chain& c, ValueId x, DataType t) {
  static const double kCentral[] = {2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                    -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                    -0.00417768164,  0.246640727,    1.50140941};
  static const double kTail[] = {-0.000200214257, 0.000100950558, 0.00134934322,
                                 -0.00367342844,  0.00573950773,  -0.0076224613,
                                 0.00943887047,   1.00167406,     2.83297682};
  ValueId one = c.K(1);
  ValueId lo = c.B(OpKind::kSub, one, x);
  ValueId one2 = c.K(1);
  ValueId hi = c.B(OpKind::kAdd, one2, x);
  ValueId w = c.U(OpKind::kNeg, c.U(OpKind::kLog, c.B(OpKind::kMul, lo, hi)));
  ValueId k25 = c.K(2.5);
  ValueId central = Horner(c, c.B(OpKind::kSub, w, k25), kCentral, 9);
  ValueId sw = c.U(OpKind::kSqrt, w);
  ValueId k3 = c.K(3);
  ValueId tail = Horner(c, c.B(OpKind::kSub, sw, k3), kTail, 9);
  ValueId k5 = c.K(5);
  ValueId p = c.W(c.B(OpKind::kLt, w, k5), central, tail);
  ValueId y = c.B(OpKind::kMul, p, x);
  ValueId a = c.U(OpKind::kAbs, x);
  if (t == DataType::kDouble) {  // four Newton steps on |y|
    ValueId ya = c.U(OpKind::kAbs, y);
    ValueId one3 = c.K(1);
    ValueId oma = c.B(OpKind::kSub, one3, a);
    ValueId log_oma = c.U(OpKind::kLog, oma);
    ValueId k05 = c.K(0.5);
    ValueId small = c.B(OpKind::kLt, a, k05);
    for (int step = 0; step < 4; ++step) {
      ValueId e1 = c.B(OpKind::kSub, c.U(OpKind::kErf, ya), a);
      // |x| >= 1/2: Newton on log(erfc(y)) = log(1 - |x|), nearly quadratic in y.
      ValueId ec = c.U(OpKind::kErfc, ya);
      ValueId lr = c.B(OpKind::kSub, log_oma, c.U(OpKind::kLog, ec));
      ValueId e2 = c.B(OpKind::kMul, lr, ec);
      ValueId e = c.W(small, e1, e2);
      ValueId ex = c.U(OpKind::kExp, c.U(OpKind::kNeg, c.B(OpKind::kMul, ya, ya)));
      ValueId k2 = c.K(2 / std::sqrt(kPi));
      ValueId d = c.B(OpKind::kMul, ex, k2);
      ya = c.B(OpKind::kSub, ya, c.B(OpKind::kDiv, e, d));
    }
    ValueId zero = c.K(0);
    ValueId neg = c.B(OpKind::kLt, x, zero);
    y = c.W(neg, c.U(OpKind::kNeg, ya), ya);
  }
  ValueId one4 = c.K(1);
  ValueId is_one = c.B(OpKind::kEq, a, one4);
  ValueId k_inf = c.K(std::numeric_limits<double>::infinity());
  ValueId inf = c.B(OpKind::kMul, x, k_inf);
  return c.W(is_one, inf, y);
}

}  // namespace

bool IsSpecialMathOp(const std::string& name) {
  return name == "asinh" || name == "acosh" || name == "lgamma" || name == "erfinv";
}

absl::StatusOr<ValueId> SpecialMathValue(GraphBuilder& b, const std::string& name, ValueId x,
                                         DataType t) {
  Chain c(b);
  ValueId r = name == "asinh"    ? Asinh(c, x)
              : name == "acosh"  ? Acosh(c, x)
              : name == "lgamma" ? Lgamma(c, x)
                                 : Erfinv(c, x, t);
  if (!c.ok()) return c.status();
  return r;
}

absl::StatusOr<ValueId> InfSignValue(GraphBuilder& b, const std::string& name, ValueId x) {
  Chain c(b);
  ValueId inf = c.U(OpKind::kIsInf, x);
  ValueId zero = c.K(0);
  ValueId side = c.B(name == "is_neginf" ? OpKind::kLt : OpKind::kGt, x, zero);
  ValueId r = c.B(OpKind::kLogicalAnd, inf, side);
  if (!c.ok()) return c.status();
  return r;
}

}  // namespace frontend
}  // namespace fusiond
