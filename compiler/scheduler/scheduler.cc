#include "compiler/scheduler/scheduler.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {
namespace {

std::string Wrong(const FusionAnalysis& a, const char* wants) {
  return absl::StrCat("needs a ", wants, " fusion, this one is ", PatternName(a.pattern), " (",
                      a.reason, ")");
}

class PointwiseScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::kPointwise; }
  std::string CanSchedule(const FusionAnalysis& a, const Target&) const override {
    return a.pattern == FusionPattern::kPointwise ? "" : Wrong(a, "pointwise");
  }
  HeuristicParams ComputeHeuristics(const FusionAnalysis& a, const Target& t) const override {
    return PointwiseHeuristics(a, t);
  }
};

class InnerPersistentScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::kInnerPersistent; }
  std::string CanSchedule(const FusionAnalysis& a, const Target& t) const override {
    if (a.pattern != FusionPattern::kInner) return Wrong(a, "row-reduction");
    if (FewLongRows(a, t)) {
      return absl::StrCat(a.outer_size, " rows (under half the ", t.sm_count, " SMs) of ",
                          a.inner_size, " elements: blocks share each row in an inner reduction");
    }
    if (!InnerPersistentHeuristics(a, t)) {
      return absl::StrCat("a row of ", a.inner_size, " elements does not fit in registers or ",
                          t.smem_per_block, " bytes of shared memory");
    }
    return "";
  }
  HeuristicParams ComputeHeuristics(const FusionAnalysis& a, const Target& t) const override {
    return *InnerPersistentHeuristics(a, t);
  }
};

class InnerReductionScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::kInnerReduction; }
  std::string CanSchedule(const FusionAnalysis& a, const Target&) const override {
    return a.pattern == FusionPattern::kInner ? "" : Wrong(a, "row-reduction");
  }
  HeuristicParams ComputeHeuristics(const FusionAnalysis& a, const Target& t) const override {
    return InnerReductionHeuristics(a, t);
  }
};

class InnerOuterPersistentScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::kInnerOuterPersistent; }
  std::string CanSchedule(const FusionAnalysis& a, const Target&) const override {
    return a.pattern == FusionPattern::kInnerOuter ? "" : Wrong(a, "row-and-column-reduction");
  }
  HeuristicParams ComputeHeuristics(const FusionAnalysis& a, const Target& t) const override {
    return InnerOuterPersistentHeuristics(a, t);
  }
};

class OuterPersistentScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::kOuterPersistent; }
  std::string CanSchedule(const FusionAnalysis& a, const Target&) const override {
    return a.pattern == FusionPattern::kOuterPersistent ? "" : Wrong(a, "outer-persistent");
  }
  HeuristicParams ComputeHeuristics(const FusionAnalysis& a, const Target& t) const override {
    return OuterPersistentHeuristics(a, t);
  }
};

class OuterReductionScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::kOuterReduction; }
  std::string CanSchedule(const FusionAnalysis& a, const Target&) const override {
    return a.pattern == FusionPattern::kOuter ? "" : Wrong(a, "column-reduction");
  }
  HeuristicParams ComputeHeuristics(const FusionAnalysis& a, const Target& t) const override {
    return OuterReductionHeuristics(a, t);
  }
};

}  // namespace

const std::vector<const Scheduler*>& Schedulers() {
  static const std::vector<const Scheduler*>* all = new std::vector<const Scheduler*>{
      new PointwiseScheduler,       new InnerPersistentScheduler,
      new InnerReductionScheduler,  new InnerOuterPersistentScheduler,
      new OuterPersistentScheduler, new OuterReductionScheduler};
  return *all;
}

const Scheduler& SchedulerFor(SchedulerKind kind) {
  for (const Scheduler* s : Schedulers()) {
    if (s->kind() == kind) return *s;
  }
  return *Schedulers().front();
}

ScheduleChoice ChooseScheduler(const FusionAnalysis& a, const Target& t) {
  ScheduleChoice choice;
  std::vector<std::string> refusals;
  for (const Scheduler* s : Schedulers()) {
    std::string why_not = s->CanSchedule(a, t);
    if (why_not.empty()) {
      choice.accepted = true;
      choice.kind = s->kind();
      choice.params = s->ComputeHeuristics(a, t);
      choice.reason =
          absl::StrCat(PatternName(a.pattern), " pattern: ", a.reason, " [", a.ToString(), "]");
      if (!refusals.empty())
        absl::StrAppend(&choice.reason, "; before it ", absl::StrJoin(refusals, "; "));
      return choice;
    }
    // Only refusals that matter for an accepted choice are worth printing.
    if (s->kind() == SchedulerKind::kInnerPersistent && a.pattern == FusionPattern::kInner) {
      refusals.push_back(absl::StrCat(SchedulerName(s->kind()), " refused: ", why_not));
    }
  }
  choice.reason = absl::StrCat("no scheduler accepts it: ", a.reason);
  return choice;
}

}  // namespace fusiond
