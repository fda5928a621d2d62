// RocksDB's info log, routed to the cache's problem callback instead of a
// LOG file in the cache directory. RocksDB 7.8's file logger aborts the
// process (an assertion in WritableFileWriter) on the first line it writes
// after a failed one, so a full disk under the cache directory would bring
// the daemon down; this logger writes no file. Errors and worse are
// passed on; the option dump RocksDB writes at open (its header) is not.
#ifndef FUSIOND_CACHE_ROCKS_LOGGER_H_
#define FUSIOND_CACHE_ROCKS_LOGGER_H_

#include <cstdarg>
#include <functional>
#include <memory>
#include <string>

#include "rocksdb/env.h"

namespace fusiond {

class RocksLogger : public rocksdb::Logger {
 public:
  // `sink` (may be empty: lines are dropped) gets each line without a
  // trailing newline; it is called from RocksDB's threads.
  explicit RocksLogger(std::function<void(const std::string&)> sink);

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override;
  void LogHeader(const char* format, va_list ap) override;

 private:
  std::function<void(const std::string&)> sink_;
};

}  // namespace fusiond

#endif  // FUSIOND_CACHE_ROCKS_LOGGER_H_
