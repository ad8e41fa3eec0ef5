# cmake -DINPUT=file -DOUTPUT=file.cpp -DSYMBOL=name -DNAMESPACE=ns -P embed_file.cmake
# Writes a C++ file defining `const unsigned char SYMBOL[]` (16-byte aligned,
# as module images must be) and `const size_t SYMBOL##Size` with INPUT's bytes.
file(READ "${INPUT}" bytes HEX)
string(LENGTH "${bytes}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," array "${bytes}")
string(REGEX REPLACE "((0x..,){24})" "\\1\n  " array "${array}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by embed_file.cmake: do not edit.
#include <cstddef>

namespace ${NAMESPACE} {

extern const unsigned char ${SYMBOL}[];
extern const size_t ${SYMBOL}Size;
alignas(16) const unsigned char ${SYMBOL}[] = {
  ${array}
};
const size_t ${SYMBOL}Size = ${size};

}  // namespace ${NAMESPACE}
")
