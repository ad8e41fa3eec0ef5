#include "analyzer/trace/text_pool.h"

#include <stdexcept>

namespace apptracer::trace {

TextRef TextPool::add(std::string_view text) {
  if (bytes_.size() + text.size() > UINT32_MAX || ends_.size() >= UINT32_MAX - 1) {
    throw std::length_error("the trace holds more than 4 GiB of text");
  }
  bytes_.append(text);
  ends_.push_back(static_cast<uint32_t>(bytes_.size()));
  return static_cast<TextRef>(ends_.size());
}

std::string_view TextPool::text(TextRef ref) const {
  if (ref == kNoText || ref > ends_.size()) return {};
  uint32_t begin = ref == 1 ? 0 : ends_[ref - 2];
  return std::string_view(bytes_).substr(begin, ends_[ref - 1] - begin);
}

}  // namespace apptracer::trace
