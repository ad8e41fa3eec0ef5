#include "collectives/nccl_names.h"

#include <cstring>
#include <iterator>
#include <utility>

namespace apptracer::nccl {

namespace {

template <typename T, size_t N>
bool find(const char* name, const std::pair<const char*, T> (&table)[N], T& out) {
  if (!name) return false;
  for (const auto& [text, value] : table) {
    if (std::strcmp(name, text) == 0) {
      out = value;
      return true;
    }
  }
  return false;
}

}  // namespace

bool collective_kind_of(const char* func, CollectiveKind& kind) {
  static const std::pair<const char*, CollectiveKind> kinds[] = {
      {"AllReduce", CollectiveKind::AllReduce},   {"Broadcast", CollectiveKind::Broadcast},
      {"Reduce", CollectiveKind::Reduce},         {"AllGather", CollectiveKind::AllGather},
      {"ReduceScatter", CollectiveKind::ReduceScatter}, {"AlltoAll", CollectiveKind::AllToAll},
      {"Gather", CollectiveKind::Gather},         {"Scatter", CollectiveKind::Scatter},
      {"Send", CollectiveKind::Send},             {"Recv", CollectiveKind::Recv},
  };
  return find(func, kinds, kind);
}

DataType data_type_of(const char* name) {
  static const std::pair<const char*, DataType> types[] = {
      {"ncclInt8", DataType::Int8},         {"ncclUint8", DataType::Uint8},
      {"ncclInt32", DataType::Int32},       {"ncclUint32", DataType::Uint32},
      {"ncclInt64", DataType::Int64},       {"ncclUint64", DataType::Uint64},
      {"ncclFloat16", DataType::Float16},   {"ncclFloat32", DataType::Float32},
      {"ncclFloat64", DataType::Float64},   {"ncclBfloat16", DataType::Bfloat16},
      {"ncclFloat8e4m3", DataType::Float8e4m3}, {"ncclFloat8e5m2", DataType::Float8e5m2},
  };
  DataType type = DataType::Unknown;
  find(name, types, type);
  return type;
}

DataType data_type_of(int nccl_datatype) {
  static const DataType types[] = {
      DataType::Int8,    DataType::Uint8,   DataType::Int32,    DataType::Uint32,
      DataType::Int64,   DataType::Uint64,  DataType::Float16,  DataType::Float32,
      DataType::Float64, DataType::Bfloat16, DataType::Float8e4m3, DataType::Float8e5m2,
  };
  if (nccl_datatype < 0 || nccl_datatype >= static_cast<int>(std::size(types))) {
    return DataType::Unknown;
  }
  return types[nccl_datatype];
}

ReduceOp reduce_op_of(int nccl_op) {
  switch (nccl_op) {
    case 0: return ReduceOp::Sum;
    case 1: return ReduceOp::Prod;
    case 2: return ReduceOp::Max;
    case 3: return ReduceOp::Min;
    case 4: return ReduceOp::Avg;
    default: return nccl_op > 4 ? ReduceOp::PreMulSum : ReduceOp::Other;
  }
}

CollAlgorithm algorithm_of(const char* name) {
  static const std::pair<const char*, CollAlgorithm> algorithms[] = {
      {"TREE", CollAlgorithm::Tree},   {"RING", CollAlgorithm::Ring},
      {"COLLNET_DIRECT", CollAlgorithm::CollnetDirect},
      {"COLLNET_CHAIN", CollAlgorithm::CollnetChain},
      {"NVLS", CollAlgorithm::Nvls},   {"NVLS_TREE", CollAlgorithm::NvlsTree},
      {"PAT", CollAlgorithm::Pat},
  };
  CollAlgorithm algorithm = CollAlgorithm::Other;
  find(name, algorithms, algorithm);
  return algorithm;
}

CollProtocol protocol_of(const char* name) {
  static const std::pair<const char*, CollProtocol> protocols[] = {
      {"LL", CollProtocol::Ll}, {"LL128", CollProtocol::Ll128}, {"SIMPLE", CollProtocol::Simple}};
  CollProtocol protocol = CollProtocol::Other;
  find(name, protocols, protocol);
  return protocol;
}

}  // namespace apptracer::nccl
