#include "server/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "absl/strings/str_format.h"
#include "compiler/util/json.h"

namespace fusiond {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

}  // namespace

LogField::LogField(std::string k, double v)
    : key(std::move(k)), value(absl::StrFormat("%.6g", v)), raw(true) {}

LogField::LogField(std::string k, long long v)
    : key(std::move(k)), value(std::to_string(v)), raw(true) {}
LogField::LogField(std::string k, unsigned long long v)
    : key(std::move(k)), value(std::to_string(v)), raw(true) {}

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level; }

bool ParseLogLevel(const std::string& name, LogLevel* level) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError}) {
    if (name == LevelName(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

void Log(LogLevel level, const std::string& event, const std::vector<LogField>& fields) {
  if (static_cast<int>(level) < g_level) return;
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  int millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm;
  gmtime_r(&secs, &tm);
  std::string line = absl::StrFormat(
      "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\",\"level\":\"%s\",\"event\":%s",
      tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis,
      LevelName(level), JsonString(event));
  for (const LogField& f : fields) {
    line += "," + JsonString(f.key) + ":" + (f.raw ? f.value : JsonString(f.value));
  }
  line += "}\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace fusiond
