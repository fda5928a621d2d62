// Minimal JSON text helpers for the reports (`fusionc compile --json`,
// HeuristicParams::ToJson). Writing only; nothing here parses JSON.
#ifndef FUSIOND_COMPILER_UTIL_JSON_H_
#define FUSIOND_COMPILER_UTIL_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace fusiond {

// s as a quoted JSON string with the required escapes.
std::string JsonString(std::string_view s);
// A finite number as JSON (shortest round-trip form); NaN and inf as null.
std::string JsonNumber(double v);
std::string JsonNumber(int64_t v);
inline const char* JsonBool(bool b) { return b ? "true" : "false"; }

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_UTIL_JSON_H_
