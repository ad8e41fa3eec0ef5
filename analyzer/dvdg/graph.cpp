#include "graph.h"

namespace apptracer::dvdg {

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::Allocation: return "allocation";
    case OpKind::Free: return "free";
    case OpKind::Copy: return "copy";
    case OpKind::Memset: return "memset";
    case OpKind::Kernel: return "kernel";
    case OpKind::Migration: return "migration";
    case OpKind::HostPhase: return "host phase";
    case OpKind::Collective: return "collective";
    case OpKind::Message: return "message";
  }
  return "?";
}

bool is_lifetime_op(OpKind kind) {
  return kind == OpKind::Allocation || kind == OpKind::Free;
}

std::string_view to_string(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::Data: return "data";
    case EdgeKind::Carry: return "carry";
    case EdgeKind::Migration: return "migration";
  }
  return "?";
}

}  // namespace apptracer::dvdg
