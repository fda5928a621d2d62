#include "cache/report.h"

namespace fusiond {

std::string ReportWithCacheStatus(const fusiond::v1::CompiledFusion& compiled, bool hit) {
  const std::string& report = compiled.report_json();
  std::string field = hit ? "\"cache\":\"hit\"" : "\"cache\":\"miss\"";
  // The report is one JSON object; insert the field after its brace.
  size_t brace = report.find('{');
  if (brace == std::string::npos) return "{" + field + "}";
  size_t next = report.find_first_not_of(" \t\r\n", brace + 1);
  bool empty = next != std::string::npos && report[next] == '}';
  return report.substr(0, brace + 1) + field + (empty ? "" : ",") + report.substr(brace + 1);
}

}  // namespace fusiond
