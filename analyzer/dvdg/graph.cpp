#include "graph.h"

namespace apptracer::dvdg {

std::string_view to_string(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::Data: return "data";
    case EdgeKind::Carry: return "carry";
    case EdgeKind::Migration: return "migration";
  }
  return "?";
}

}  // namespace apptracer::dvdg
