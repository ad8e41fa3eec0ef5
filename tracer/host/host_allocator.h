// The interposed allocator (host_allocator.cpp), seen from the tracer.
#pragma once

namespace apptracer {

// Whether the program's malloc calls reach our hooks (true when preloaded).
// Call before host_blocks::enable().
bool allocator_interposed();

}  // namespace apptracer
