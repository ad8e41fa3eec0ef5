// Text from a trace (kernel names, NVTX ranges, command lines, ...) made safe
// for where it is shown. A trace holds whatever bytes the program gave it.
#pragma once

#include <string>
#include <string_view>

namespace apptracer {

// For a terminal: control characters (ESC, CR, BEL, ... DEL, and the C1
// controls U+0080 to U+009F) become visible escapes (\x1b, \r, \u009b), and so
// do bytes that are not UTF-8 (\xff), so a trace cannot move the cursor,
// recolour or overwrite what the terminal shows. Tables and text reports use
// it, and the tracer's log lines; JSON and CSV quote text their own way.
std::string terminal_text(std::string_view text);

// Valid UTF-8, as JSON and XML require: bytes that are not UTF-8 become
// U+FFFD; control characters are kept (the format escapes them).
std::string valid_utf8(std::string_view text);

}  // namespace apptracer
