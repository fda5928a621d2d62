// Structured logs: one JSON object per line on stderr,
// {"ts":"2026-11-29T17:00:00.123Z","level":"info","event":"compile",...}.
#ifndef FUSIOND_SERVER_LOG_H_
#define FUSIOND_SERVER_LOG_H_

#include <string>
#include <utility>
#include <vector>

namespace fusiond {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// Lines below this level are dropped. Default: kInfo.
void SetLogLevel(LogLevel level);
// Whether lines at `level` are written (callers skip building fields otherwise).
bool LogEnabled(LogLevel level);
bool ParseLogLevel(const std::string& name, LogLevel* level);

// A field: name and value; numbers are written as numbers when `raw`.
struct LogField {
  std::string key;
  std::string value;
  bool raw = false;
  LogField(std::string k, std::string v) : key(std::move(k)), value(std::move(v)) {}
  LogField(std::string k, const char* v) : key(std::move(k)), value(v) {}
  LogField(std::string k, double v);
  LogField(std::string k, int v) : LogField(std::move(k), static_cast<long long>(v)) {}
  LogField(std::string k, long v) : LogField(std::move(k), static_cast<long long>(v)) {}
  LogField(std::string k, long long v);
  LogField(std::string k, unsigned long v)
      : LogField(std::move(k), static_cast<unsigned long long>(v)) {}
  LogField(std::string k, unsigned long long v);
  LogField(std::string k, bool v) : key(std::move(k)), value(v ? "true" : "false"), raw(true) {}
};

void Log(LogLevel level, const std::string& event, const std::vector<LogField>& fields = {});

}  // namespace fusiond

#endif  // FUSIOND_SERVER_LOG_H_
