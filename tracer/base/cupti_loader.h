// CUPTI is loaded at run time (cupti_loader.cpp defines, hidden, each CUPTI
// function the tracer calls, forwarding to the loaded library).
#pragma once

namespace apptracer {

// Whether libcupti.so.13 was found and loaded.
bool cupti_loaded();

}  // namespace apptracer
