#include "analyzer/trace/text_pool.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace apptracer::trace {

TextRef TextPool::add(std::string_view text) {
  auto held = refs_.find(text);
  if (held != refs_.end()) return held->second;
  if (texts_.size() >= UINT32_MAX - 1) throw std::length_error("more texts than a trace's pool holds");
  if (blocks_.empty() || used_ + text.size() > kBlockBytes) {
    // A text longer than a block gets one of its own.
    blocks_.push_back(std::make_unique<char[]>(std::max(kBlockBytes, text.size())));
    used_ = 0;
  }
  char* at = blocks_.back().get() + used_;
  if (!text.empty()) std::memcpy(at, text.data(), text.size());
  used_ += text.size();
  texts_.emplace_back(at, text.size());
  auto ref = static_cast<TextRef>(texts_.size());
  refs_.emplace(texts_.back(), ref);
  return ref;
}

std::string_view TextPool::text(TextRef ref) const {
  if (ref == kNoText || ref > texts_.size()) return {};
  return texts_[ref - 1];
}

}  // namespace apptracer::trace
