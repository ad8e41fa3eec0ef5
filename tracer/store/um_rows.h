// Unified memory: what CUPTI's counter records and the placement hints mean
// as rows (which of CUPTI's fields are bytes, causes or flags by kind).
#pragma once

#include "apptracer/records.h"
#include "apptracer/tables.h"
#include "store/address_resolver.h"

namespace apptracer {

MemAdviceRow mem_advice_row(const Record& r, const Resolved& target);
UmEventRow um_event_row(const Record& r, const Resolved& target);

}  // namespace apptracer
