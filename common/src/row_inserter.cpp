#include "apptracer/row_inserter.h"

namespace apptracer::detail {

std::string value_tuples(size_t columns, size_t rows) {
  std::string tuple = "(";
  for (size_t i = 0; i < columns; ++i) tuple += i ? ",?" : "?";
  tuple += ")";
  std::string all;
  all.reserve(rows * (tuple.size() + 1));
  for (size_t r = 0; r < rows; ++r) all += (r ? "," : "") + tuple;
  return all;
}

}  // namespace apptracer::detail
