// Command lines of "--name N" pairs, as the what-if test programs take them:
// `take(name, value)` says whether it accepted the pair; anything else (an
// unknown name, a value out of range, a name without a value) prints `usage`
// and exits 2.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

template <typename Take>
void parse_int_options(int argc, char** argv, const char* usage, Take take) {
  bool ok = argc % 2 == 1;
  for (int i = 1; ok && i + 1 < argc; i += 2) ok = take(std::string(argv[i]), std::atoi(argv[i + 1]));
  if (!ok) {
    std::fprintf(stderr, "usage: %s\n", usage);
    std::exit(2);
  }
}
