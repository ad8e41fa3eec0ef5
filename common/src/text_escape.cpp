#include "apptracer/text_escape.h"

#include <cstdint>
#include <cstdio>

namespace apptracer {

namespace {

// The length of the UTF-8 sequence at the start of `text` and its code point;
// 0 when it is not valid UTF-8 (a stray byte, a truncated, overlong or
// surrogate sequence).
size_t utf8_sequence(std::string_view text, uint32_t& code_point) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char first = byte(0);
  if (first < 0x80) {
    code_point = first;
    return 1;
  }
  size_t length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 0;
  if (length == 0 || first >= 0xf5 || text.size() < length) return 0;
  code_point = first & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3f);
  }
  static const uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  bool overlong = code_point < kSmallest[length];
  bool surrogate = code_point >= 0xd800 && code_point <= 0xdfff;
  return overlong || surrogate || code_point > 0x10ffff ? 0 : length;
}

// Calls `valid(code_point, sequence)` for each UTF-8 sequence of `text` and
// `invalid(byte)` for each byte that starts none.
template <typename Valid, typename Invalid>
void decode_utf8(std::string_view text, Valid&& valid, Invalid&& invalid) {
  while (!text.empty()) {
    uint32_t code_point = 0;
    size_t length = utf8_sequence(text, code_point);
    if (length == 0) {
      invalid(static_cast<unsigned char>(text[0]));
      length = 1;
    } else {
      valid(code_point, text.substr(0, length));
    }
    text.remove_prefix(length);
  }
}

std::string escaped(const char* format, unsigned value) {
  char text[12];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

std::string terminal_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  decode_utf8(
      text,
      [&](uint32_t code_point, std::string_view sequence) {
        if (code_point == '\n') {
          out += "\\n";
        } else if (code_point == '\r') {
          out += "\\r";
        } else if (code_point == '\t') {
          out += "\\t";
        } else if (code_point < 0x20 || code_point == 0x7f) {
          out += escaped("\\x%02x", code_point);
        } else if (code_point >= 0x80 && code_point <= 0x9f) {
          out += escaped("\\u%04x", code_point);
        } else {
          out += sequence;
        }
      },
      [&](unsigned char byte) { out += escaped("\\x%02x", byte); });
  return out;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  decode_utf8(
      text, [&](uint32_t, std::string_view sequence) { out += sequence; },
      [&](unsigned char) { out += "\xef\xbf\xbd"; });
  return out;
}

}  // namespace apptracer
