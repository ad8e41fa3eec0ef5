// CUPTI's graph resource callbacks -> GraphNode records: each node the
// program makes (through the graph API or by stream capture) with its
// parameters, each copy of a node an instantiation makes, naming the node it
// copies, and new parameters set on an exec's node. GPU activity of a graph
// launch names the copy it ran; the writer follows it to the parameters.
#pragma once

#include <cupti.h>

#include "translate/capture_context.h"

namespace apptracer {

// The resource callback ids handled here (enabled by capture/cupti_requests).
bool is_graph_callback(CUpti_CallbackId cbid);

// `data`: the callback's CUpti_ResourceData::resourceDescriptor.
void on_graph_callback(CaptureContext& ctx, CUpti_CallbackId cbid, const CUpti_GraphData& data);

}  // namespace apptracer
