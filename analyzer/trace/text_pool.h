// The text of the rows the model holds, kept once: a row's text column is a
// TextRef into its trace's pool, so no row owns a std::string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace apptracer::trace {

// 0: NULL.
using TextRef = uint32_t;
inline constexpr TextRef kNoText = 0;

class TextPool {
 public:
  TextRef add(std::string_view text);
  // "" for kNoText.
  std::string_view text(TextRef ref) const;

 private:
  std::string bytes_;
  std::vector<uint32_t> ends_;  // ref r's text ends at ends_[r - 1]
};

}  // namespace apptracer::trace
