// The text of the rows the model holds, kept once: a row's text column is a
// TextRef into its trace's pool, so no row owns a std::string, and the same
// text read again (a kind's name in every row of a million) is the same
// TextRef. Text once added never moves: a string_view of it stays valid as
// long as the pool.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
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
  static constexpr size_t kBlockBytes = 64 * 1024;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t used_ = 0;  // of the last block
  std::vector<std::string_view> texts_;  // ref r is texts_[r - 1]
  std::unordered_map<std::string_view, TextRef> refs_;  // of each text held
};

}  // namespace apptracer::trace
