#include "analyzer/report/perfetto_embed.h"

#include <ostream>
#include <streambuf>

#include "analyzer/timeline/perfetto_writer.h"
#include "analyzer/progress.h"
#include "analyzer/timeline/timeline.h"

namespace apptracer::report {

namespace {

// Thrown by LimitedBuffer past its limit.
struct TimelineTooLong {};

// Keeps what is written up to `limit` bytes; past it, throws TimelineTooLong,
// so the timeline stops there instead of reading the rest of a long trace
// for bytes that would be thrown away.
class LimitedBuffer : public std::streambuf {
 public:
  explicit LimitedBuffer(size_t limit) : limit_(limit) {}
  const std::string& bytes() const { return bytes_; }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    if (bytes_.size() >= limit_) throw TimelineTooLong{};
    bytes_.push_back(traits_type::to_char_type(c));
    return c;
  }
  std::streamsize xsputn(const char* data, std::streamsize count) override {
    if (bytes_.size() + static_cast<size_t>(count) > limit_) throw TimelineTooLong{};
    bytes_.append(data, static_cast<size_t>(count));
    return count;
  }

 private:
  size_t limit_;
  std::string bytes_;
};

}  // namespace

std::optional<std::string> perfetto_timeline(trace::Trace& trace, size_t limit) {
  // A training trace's million kernels cannot fit: said from a count, not
  // found after seconds of writing slices to throw away.
  int64_t most_slices = static_cast<int64_t>(limit / PerfettoWriter::kMinSliceBytes);
  if (trace.timed_gpu_work_count(most_slices + 1) > most_slices) return std::nullopt;
  LimitedBuffer buffer(limit);
  std::ostream out(&buffer);
  // The stream passes its buffer's exception on instead of only failing.
  out.exceptions(std::ios::badbit);
  PerfettoWriter writer(out);
  Progress progress("report: timeline");
  try {
    stream_timeline(trace, writer, progress);
  } catch (const TimelineTooLong&) {
    return std::nullopt;
  }
  if (!out) return std::nullopt;
  return buffer.bytes();
}

std::string base64(const std::string& bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) group |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<unsigned char>(bytes[i + 2]);
    text += kDigits[(group >> 18) & 63];
    text += kDigits[(group >> 12) & 63];
    text += i + 1 < bytes.size() ? kDigits[(group >> 6) & 63] : '=';
    text += i + 2 < bytes.size() ? kDigits[group & 63] : '=';
  }
  return text;
}

}  // namespace apptracer::report
