// NCCL's names and enum values in the trace's vocabulary: the strings its
// profiler hands out (functions, datatypes, algorithms, protocols) and the
// ncclDataType_t / ncclRedOp_t numbers its API takes. Plain comparisons,
// safe on NCCL's threads.
#pragma once

#include "apptracer/enums.h"

namespace apptracer::nccl {

// "AllReduce", "Send", ... (NCCL's ncclFuncToString). False for names that
// are no operation of ours.
bool collective_kind_of(const char* func, CollectiveKind& kind);
// "ncclFloat32", ... (ncclDatatypeToString; NCCL 2.28 prints ncclUint8 as "Unknown").
DataType data_type_of(const char* name);
// ncclDataType_t: Int8 = 0 ... Float8e5m2 = 11.
DataType data_type_of(int nccl_datatype);
// ncclRedOp_t: Sum = 0 ... Avg = 4; larger values are ops made by ncclRedOpCreatePreMulSum.
ReduceOp reduce_op_of(int nccl_op);
CollAlgorithm algorithm_of(const char* name);
CollProtocol protocol_of(const char* name);

}  // namespace apptracer::nccl
