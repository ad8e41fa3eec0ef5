#include "translate/graph_callbacks.h"

#include <algorithm>

#include "translate/api_dispatch.h"
#include "translate/emit.h"
#include "translate/traced_function.h"

namespace apptracer {

namespace {

// A traced call that works on a stream now, unless the stream is capturing:
// then the driver makes a node of it instead, inside the call.
bool is_stream_work(OpKind op) {
  return op == OpKind::Launch || op == OpKind::Copy || op == OpKind::Memset ||
         op == OpKind::Alloc || op == OpKind::Free;
}

void read_kernel(CaptureContext& ctx, CUgraphNode node, GraphNodeRecord& n, ArgWords& args) {
  CUDA_KERNEL_NODE_PARAMS p{};
  if (!ctx.cuda.kernel_node_params(node, p)) return;
  // `kern` stands for the function when `func` is NULL (cuda.h).
  const void* function = p.func ? static_cast<const void*>(p.func) : p.kern;
  if (!function) return;
  const LaunchedFunction& info = ctx.cuda.function(function, nullptr);
  KernelNodeParams& k = n.params.kernel;
  k.function_handle = reinterpret_cast<uint64_t>(function);
  k.name_id = info.name_id;
  k.grid[0] = p.gridDimX;
  k.grid[1] = p.gridDimY;
  k.grid[2] = p.gridDimZ;
  k.block[0] = p.blockDimX;
  k.block[1] = p.blockDimY;
  k.block[2] = p.blockDimZ;
  k.dynamic_shared_bytes = p.sharedMemBytes;
  // The node owns copies of the argument values; they stay valid while we read.
  k.args_captured = ctx.kernel_arguments && (p.kernelParams || p.extra);
  if (k.args_captured) gather_arg_words(ctx, info, p.kernelParams, p.extra, args);
  n.has_params = true;
}

void read_copy(CaptureContext& ctx, CUgraphNode node, GraphNodeRecord& n) {
  CUDA_MEMCPY3D c{};
  if (!ctx.cuda.memcpy_node_params(node, c)) return;
  uint64_t src = copy_endpoint(c.srcMemoryType, c.srcHost, c.srcDevice);
  uint64_t dst = copy_endpoint(c.dstMemoryType, c.dstHost, c.dstDevice);
  // The first byte each side touches; rows of a pitched copy follow it.
  auto first_byte = [](uint64_t base, size_t x, size_t y, size_t z, size_t pitch, size_t height) {
    return base ? base + x + pitch * (y + height * z) : 0;
  };
  CopyNodeParams& copy = n.params.copy;
  copy.src = first_byte(src, c.srcXInBytes, c.srcY, c.srcZ, c.srcPitch, c.srcHeight);
  copy.dst = first_byte(dst, c.dstXInBytes, c.dstY, c.dstZ, c.dstPitch, c.dstHeight);
  copy.bytes = uint64_t{c.WidthInBytes} * std::max<size_t>(c.Height, 1) * std::max<size_t>(c.Depth, 1);
  copy.kind = copy_kind(c.srcMemoryType, c.dstMemoryType);
  n.has_params = true;
}

void read_memset(CaptureContext& ctx, CUgraphNode node, GraphNodeRecord& n) {
  CUDA_MEMSET_NODE_PARAMS m{};
  if (!ctx.cuda.memset_node_params(node, m)) return;
  MemsetNodeParams& s = n.params.memset;
  s.address = m.dst;
  s.bytes = uint64_t{m.width} * m.elementSize * std::max<size_t>(m.height, 1);
  s.value = m.value;
  s.element_size = static_cast<uint8_t>(m.elementSize);
  n.has_params = true;
}

Record node_record(CaptureContext& ctx, const CUpti_GraphData& data, GraphNodeEvent event,
                   uint32_t correlation_id) {
  Record r = make_record(RecordOrigin{correlation_id, correlation_id}, RecordType::GraphNode);
  GraphNodeRecord& n = r.graph_node;
  n.event = event;
  n.ns = ctx.now_ns();
  n.node_id = ctx.cuda.graph_node_id(data.node);
  n.graph_id = ctx.cuda.graph_id(data.graph);
  // CUPTI fills nodeType only before the node exists (CREATE_STARTING).
  n.type = ctx.cuda.graph_node_type(data.node);
  return r;
}

// A node made, or an exec's node given new parameters: what it holds now.
void on_node_params(CaptureContext& ctx, const CUpti_GraphData& data, GraphNodeEvent event) {
  CallInProgress call = call_in_progress();
  Record r = node_record(ctx, data, event, call.correlation_id);
  GraphNodeRecord& n = r.graph_node;
  // A node made inside a launch, copy, ... is that call captured: it did no work now.
  n.captured = event == GraphNodeEvent::Created && call.function &&
               is_stream_work(call.function->op);
  if (n.captured) mark_calls_captured();
  ArgWords args;
  switch (n.type) {
    case GraphNodeType::Kernel: read_kernel(ctx, data.node, n, args); break;
    case GraphNodeType::Memcpy: read_copy(ctx, data.node, n); break;
    case GraphNodeType::Memset: read_memset(ctx, data.node, n); break;
    default: break;
  }
  ctx.buffers.append(r);
  if (n.has_params && n.type == GraphNodeType::Kernel && n.params.kernel.args_captured) {
    emit_arg_words(ctx, RecordOrigin{call.correlation_id, call.correlation_id}, args);
  }
}

// Instantiation copies every node into the exec: the copy keeps the original's
// parameters, so the record only names the original.
void on_node_cloned(CaptureContext& ctx, const CUpti_GraphData& data) {
  Record r = node_record(ctx, data, GraphNodeEvent::Cloned, call_in_progress().correlation_id);
  r.graph_node.template_node_id = ctx.cuda.graph_node_id(data.originalNode);
  ctx.buffers.append(r);
}

}  // namespace

bool is_graph_callback(CUpti_CallbackId cbid) {
  return cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED ||
         cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED ||
         cbid == CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS;
}

// SET_PARAMS names the exec's node (cudaGraphExecKernelNodeSetParams, and
// cudaGraphExecUpdate after its UPDATED) and the driver already answers with
// the new parameters. CUPTI 13.0 fires it for kernel nodes only (13.2 adds
// memcpy, memset, host and event nodes).
void on_graph_callback(CaptureContext& ctx, CUpti_CallbackId cbid, const CUpti_GraphData& data) {
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED:
      on_node_params(ctx, data, GraphNodeEvent::Created);
      break;
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: on_node_cloned(ctx, data); break;
    case CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS:
      on_node_params(ctx, data, GraphNodeEvent::ParamsSet);
      break;
    default: break;
  }
}

}  // namespace apptracer
