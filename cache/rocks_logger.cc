#include "cache/rocks_logger.h"

#include <cstdio>

namespace fusiond {

RocksLogger::RocksLogger(std::function<void(const std::string&)> sink)
    : rocksdb::Logger(rocksdb::InfoLogLevel::ERROR_LEVEL), sink_(std::move(sink)) {}

void RocksLogger::Logv(const char* format, va_list ap) {
  if (!sink_) return;
  char buffer[1024];
  int n = std::vsnprintf(buffer, sizeof(buffer), format, ap);
  if (n < 0) return;
  std::string line(buffer, std::min<size_t>(static_cast<size_t>(n), sizeof(buffer) - 1));
  while (!line.empty() && line.back() == '\n') line.pop_back();
  sink_(line);
}

void RocksLogger::LogHeader(const char* /*format*/, va_list /*ap*/) {}

}  // namespace fusiond
