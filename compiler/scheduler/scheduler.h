// The scheduler interface: every kind answers can-schedule (with the reason
// when not) and compute-heuristics over the same FusionAnalysis, and
// Schedulers() lists them in the order they are tried. ChooseScheduler is
// what the segmenter and the pipeline call.
#ifndef FUSIOND_COMPILER_SCHEDULER_SCHEDULER_H_
#define FUSIOND_COMPILER_SCHEDULER_SCHEDULER_H_

#include <string>
#include <vector>

#include "compiler/scheduler/analysis.h"
#include "compiler/scheduler/heuristics.h"
#include "compiler/scheduler/target.h"

namespace fusiond {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual SchedulerKind kind() const = 0;
  // Empty when this scheduler takes the fusion; otherwise why it does not.
  virtual std::string CanSchedule(const FusionAnalysis& a, const Target& t) const = 0;
  // Only after CanSchedule accepted.
  virtual HeuristicParams ComputeHeuristics(const FusionAnalysis& a, const Target& t) const = 0;
};

// Pointwise, inner persistent, inner reduction, inner-outer persistent,
// outer persistent, outer reduction.
const std::vector<const Scheduler*>& Schedulers();
const Scheduler& SchedulerFor(SchedulerKind kind);

struct ScheduleChoice {
  bool accepted = false;
  SchedulerKind kind = SchedulerKind::kPointwise;
  HeuristicParams params;
  // Why the chosen scheduler took it, or why every scheduler refused.
  std::string reason;
};

ScheduleChoice ChooseScheduler(const FusionAnalysis& a, const Target& t);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_SCHEDULER_SCHEDULER_H_
